"""Qt drawing of a laid-out graph, shared by the graph view and the headless export.

``items`` (boxes, frames and edges, restyled in place), ``scene`` (items built once,
restyled per step), ``picture`` (SVG/PNG), ``export`` (every step of a program to files).
"""

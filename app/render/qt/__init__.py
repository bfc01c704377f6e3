"""Qt drawing of a laid-out graph, shared by the graph view and the headless export.

``scene`` (the graph of one recording, restyled per step) puts together ``scene_items`` (the
items, built once: ``boxes``, ``frames``, ``edges``, sized with ``fonts`` and painted with
``box_paint``) and ``overview`` (the whole graph as dots when fitted). ``picture`` writes a scene
to SVG or PNG; ``export`` draws every step of a program to files.
"""

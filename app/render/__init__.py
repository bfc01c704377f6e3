"""Graph layout (Graphviz, once) and per-step styling; no widgets.

Qt-free: ``dot_source`` (DOT text, torchviz look), ``layout`` (one ``dot`` run
-> frozen boxes and splines), ``labels`` (box text), ``style`` (palettes,
state tags), ``states`` (what each box shows at a step, from the recording).
Qt drawing, shared by the graph view and the headless export: ``items``,
``scene`` (items built once, restyled per step), ``picture`` (SVG/PNG),
``export`` (every step of a scenario to files).
"""

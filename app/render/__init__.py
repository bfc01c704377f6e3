"""Graph layout (Graphviz, once) and per-step styling; Qt-free.

``dot_source`` (DOT text, torchviz look), ``layout`` (one ``dot`` run -> frozen
boxes and splines), ``labels`` (box text), ``style`` (palettes, state tags),
``states`` (what each box shows at a step, from the recording). Everything that
imports Qt lives in ``app.render.qt``.
"""

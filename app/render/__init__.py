"""Graph layout (Graphviz, once) and per-step styling; Qt-free.

``dot_source`` (DOT text, torchviz look), ``layout`` (one ``dot`` run -> frozen
boxes and splines), ``modules`` (module groups, collapsed or not), ``labels`` (box
text), ``style`` (palettes, state tags), ``states`` (what each box shows at a step,
from the recording), ``looks`` (each box's state and style at the step shown),
``restyle_later`` (restyles that wait while items are hidden). Everything that imports Qt
lives in ``app.render.qt``.
"""

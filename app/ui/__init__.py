"""The window, in folders that say what they hold.

- ``runtime/``: no widgets. The view model (``Session``), recording and layout off the GUI
  thread (``worker.py``, ``lesson_worker.py``), garbage collection between events, settings,
  the exception handler.
- ``window/``: ``MainWindow`` and its parts: commands and menus, docks, files, the stage in the
  centre, presentation mode, exports.
- ``graph/``: the graph view, its zoom and pan, module groups and their layouts, the preview a
  big file opens with.
- ``editor/``: the program's code: the editor, the code box and its colours.
- ``panels/``: the views around the graph, each taking the ``Session`` it shows.
- ``look/``: colours, text scale and text that is never read as HTML, shared by every view.

``main.py`` starts it all (``autograd-lens-gui``).
"""

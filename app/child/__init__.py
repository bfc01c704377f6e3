"""Recording in a child process: see NOTE [recording in a child] in :mod:`app.child.client`.

Nothing here imports torch in the parent; :mod:`app.child.server` is the
child's side and imports it once per child.
"""

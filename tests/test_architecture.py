"""The model layer never imports Qt (STYLE.md: napari's lint contract)."""

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "app" / "core"


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_sources_never_import_qt():
    offenders = {
        path.name: sorted(
            m
            for m in _imported_modules(path)
            if m.split(".")[0] in {"PySide6", "shiboken6", "PyQt5", "PyQt6", "qtpy"}
        )
        for path in CORE.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_core_loads_no_qt_module():
    code = (
        "import sys, app.core, app.core.report; "
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_window_side_of_pacing_and_the_worker_load_no_torch():
    """The GUI thread imports these before torch is loaded (the worker imports it on its thread)."""
    code = "import sys, app.core.pacing, app.ui.worker; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

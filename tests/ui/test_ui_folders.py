"""The shape of app/ui: folders that say what they hold, and a runtime that makes no widget."""

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "app" / "ui"
FOLDERS = {"runtime", "window", "graph", "editor", "panels", "style"}
WIDGET_MODULES = {"PySide6.QtWidgets", "PySide6.QtGui"}


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_ui_modules_live_in_their_folders():
    loose = sorted(path.name for path in UI.glob("*.py"))
    folders = sorted(path.name for path in UI.iterdir() if path.is_dir() and path.name != "__pycache__")
    assert loose == ["__init__.py", "main.py"]  # main.py is the autograd-lens-gui entry point
    assert set(folders) == FOLDERS
    assert all((UI / folder / "__init__.py").is_file() for folder in folders)


def _reaches_a_widget(module: str) -> bool:
    """Qt's widget or painting modules, or a part of the window outside the runtime."""
    return module in WIDGET_MODULES or (
        module.startswith("app.ui.") and not module.startswith("app.ui.runtime")
    )


def test_runtime_makes_no_widget():
    """The session, the workers, the collector and the settings run without a widget: the
    view model is tested, and runs, with no window."""
    offenders = {
        path.name: sorted(m for m in _imported_modules(path) if _reaches_a_widget(m))
        for path in (UI / "runtime").glob("*.py")
    }
    assert {name: found for name, found in offenders.items() if found} == {}

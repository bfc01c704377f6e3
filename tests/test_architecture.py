"""The shape of app/core: no Qt (STYLE.md: napari's lint contract), imports in one direction,
and a model that needs no torch."""

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


def test_the_window_side_of_recording_loads_no_torch():
    """The window's worker, the child client and the .lens reader: torch lives in the child."""
    code = "import sys, app.child.client, app.ui.worker, app.core.lensfile; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _core_imports() -> dict[str, set[str]]:
    """Each module of app/core -> the app modules it imports (at any depth of its code)."""
    return {
        _module_name(path): {m for m in _imported_modules(path) if m.split(".")[0] == "app"}
        for path in CORE.rglob("*.py")
    }


def test_core_imports_nothing_from_outside_core():
    outside = {
        m: sorted(i for i in imports if not i.startswith("app.core"))
        for m, imports in _core_imports().items()
    }
    assert {m: i for m, i in outside.items() if i} == {}


def test_core_modules_import_each_other_without_cycles():
    graph = {m: {i for i in imports if i in _core_imports()} for m, imports in _core_imports().items()}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(module) :], module]))
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_the_model_and_the_lesson_stand_below_the_language_and_the_recorder():
    """model: plain data; lesson: words about recordings; neither runs or checks programs."""
    below = ("app.core.language", "app.core.sizing", "app.core.recording", "app.core.loading")
    for module, imports in _core_imports().items():
        if module.startswith(("app.core.model", "app.core.lesson")):
            assert not [i for i in imports if i.startswith(below)], module
        if module.startswith("app.core.model"):
            assert {i for i in imports if not i.startswith("app.core.model")} == set(), module
        if not module.startswith("app.core.recording"):
            assert not [i for i in imports if i.startswith("app.core.recording")], module


def test_the_model_and_lens_files_load_no_torch():
    """A .lens file is read without torch: the model never imports it."""
    for path in (CORE / "model").glob("*.py"):
        assert not [m for m in _imported_modules(path) if m.split(".")[0] in {"torch", "numpy"}], path.name
    code = "import sys, app.core.model.recording, app.core.lensfile; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

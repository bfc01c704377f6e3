"""The shape of app/core and app/render: no Qt below the window (STYLE.md: napari's lint
contract), imports in one direction, and a model that needs no torch."""

import ast
import re
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "app" / "core"
RENDER = CORE.parent / "render"
UI = CORE.parent / "ui"
QT_PACKAGES = {"PySide6", "shiboken6", "PyQt5", "PyQt6", "qtpy"}


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
        path.name: sorted(m for m in _imported_modules(path) if m.split(".")[0] in QT_PACKAGES)
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
    code = (
        "import sys, app.child.client, app.ui.runtime.worker, app.core.lensfile; "
        "print('torch' in sys.modules)"
    )
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
    imports_of = _core_imports()  # parsed once: asked per import, every file was parsed again
    graph = {m: {i for i in imports if i in imports_of} for m, imports in imports_of.items()}
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
    below = ("app.core.language", "app.core.sizing", "app.core.recorder", "app.core.loading")
    for module, imports in _core_imports().items():
        if module.startswith(("app.core.model", "app.core.lesson")):
            assert not [i for i in imports if i.startswith(below)], module
        if module.startswith("app.core.model"):
            assert {i for i in imports if not i.startswith("app.core.model")} == set(), module
        if not module.startswith("app.core.recorder"):
            assert not [i for i in imports if i.startswith("app.core.recorder")], module


def test_the_model_and_lens_files_load_no_torch():
    """A .lens file is read without torch: the model never imports it."""
    for path in (CORE / "model").glob("*.py"):
        assert not [m for m in _imported_modules(path) if m.split(".")[0] in {"torch", "numpy"}], path.name
    code = "import sys, app.core.model.recording, app.core.lensfile; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _qt_free_render() -> list[Path]:
    """Every module of app/render outside app/render/qt."""
    return [path for path in RENDER.rglob("*.py") if "qt" not in path.relative_to(RENDER).parts[:-1]]


def test_render_never_imports_the_window():
    """The window draws with render; render, Qt part included, knows nothing of the window."""
    offenders = {
        str(path.relative_to(RENDER)): sorted(m for m in _imported_modules(path) if m.startswith("app.ui"))
        for path in RENDER.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_qt_free_render_never_imports_qt():
    """Layout, labels, styles and states import neither Qt nor the Qt part of render."""
    assert len(_qt_free_render()) > 5
    offenders = {
        str(path.relative_to(RENDER)): sorted(
            m
            for m in _imported_modules(path)
            if m.split(".")[0] in QT_PACKAGES or m.startswith("app.render.qt")
        )
        for path in _qt_free_render()
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_qt_free_render_loads_no_qt_module():
    names = sorted(_module_name(path) for path in _qt_free_render())
    code = (
        f"import sys; [__import__(m) for m in {names!r}]; "
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _layers_of_the_map(heading: str = "## Layers") -> list[list[str]]:
    """The numbered list under ``heading`` in docs/architecture.md, up to the next heading: each
    item's packages, top first."""
    text = (CORE.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = re.split(r"\n#{2,3} ", text.split(f"\n{heading}\n", 1)[1], maxsplit=1)[0]
    items = re.split(r"\n(?=\d+\. )", "\n" + section)[1:]  # an item's lines, wrapped ones included
    return [re.findall(r"`(app[\w.]*)`", item.split(": ", 1)[0]) for item in items]


def _package_of(module: str, packages: list[str]) -> str | None:
    found = [p for p in packages if module == p or module.startswith(p + ".")]
    return max(found, key=len) if found else None


def _against_the_layers(layers: list[list[str]], root: Path, own_package: str) -> list[str]:
    """Every import of a module under ``root`` (the package ``own_package``, whose ``__init__`` is
    left out) from a layer beside or above its own; every module must sit in a layer."""
    rank = {package: i for i, layer in enumerate(layers) for package in layer}
    packages = sorted(rank)
    offenders = []
    for path in root.rglob("*.py"):
        module = _module_name(path)
        if module == own_package:
            continue  # the package's own __init__: a docstring, or the names it offers
        own = _package_of(module, packages)
        assert own is not None, module  # every other module sits in a layer
        for imported in _imported_modules(path):
            theirs = _package_of(imported, packages)
            if theirs is not None and theirs != own and rank[theirs] <= rank[own]:
                offenders.append(f"{module} imports {imported}")
    return offenders


def test_every_import_follows_the_layers_of_the_map():
    """A package imports from its own package and the layers below it, never from beside or above."""
    layers = _layers_of_the_map()
    assert [len(layer) for layer in layers] == [1, 2, 1, 1, 2, 1], layers
    assert _against_the_layers(layers, CORE.parent, "app") == []


def test_every_import_inside_core_follows_its_order_in_the_map():
    """The size guard imports no language, the model nothing above it: the map's order inside
    app.core, read from docs/architecture.md, holds for every import."""
    layers = _layers_of_the_map("### Inside `app.core`")
    assert len(layers) >= 4 and layers[-1][0] == "app.core.model", layers
    assert _against_the_layers(layers, CORE, "app.core") == []


def test_what_a_person_is_told_has_one_root_and_only_programs_are_program_errors():
    """A damaged file or an export past its budget is told as a UserError, not as a program's."""
    from app.child.client import ChildFailure
    from app.core.lensfile import LensError
    from app.core.model.errors import ProgramError, ProgramRaised, RecordingTimeout, UserError
    from app.core.trace_json import JsonTooLarge
    from app.render.export_budget import ExportTooLarge

    for told in (LensError, JsonTooLarge, ExportTooLarge):
        assert issubclass(told, UserError) and not issubclass(told, ProgramError), told
    for program in (ProgramRaised, RecordingTimeout, ChildFailure):
        assert issubclass(program, ProgramError), program


def test_every_import_inside_the_window_follows_its_order_in_the_map():
    """The graph area imports nothing of the window it sits in: the map's order inside app.ui."""
    layers = _layers_of_the_map("### Inside `app.ui`")
    assert len(layers) >= 4 and layers[-1] == ["app.ui.runtime"], layers
    assert _against_the_layers(layers, UI, "app.ui") == []

"""The shape of benchmarks/: a package whose modules import each other in one direction, each
measuring one thing in a file one can read, and ``bench.py`` the command line that gathers them."""

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MAX_LINES = 500


def _sibling_imports(path: Path, siblings: set[str]) -> set[str]:
    """The benchmarks modules ``path`` imports, at any depth of its code: ``benchmarks.x``,
    ``from benchmarks import x``, and a bare ``import x`` of a sibling (run as a script)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head, _, rest = alias.name.partition(".")
                if head == "benchmarks" and rest:
                    found.add(rest.split(".")[0])
                elif head in siblings and not rest:
                    found.add(head)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            head, _, rest = node.module.partition(".")
            if head == "benchmarks":
                found.update(
                    [rest.split(".")[0]] if rest else [a.name for a in node.names if a.name in siblings]
                )
            elif head in siblings and not rest:
                found.add(head)
    return found - {path.stem}


def _graph() -> dict[str, set[str]]:
    paths = sorted(BENCHMARKS.glob("*.py"))
    siblings = {p.stem for p in paths} - {"__init__"}
    return {p.stem: _sibling_imports(p, siblings) for p in paths if p.stem != "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as the list of its modules (the first repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        path.pop()
        state[name] = 2
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_benchmarks_is_a_package():
    assert (BENCHMARKS / "__init__.py").is_file()


def test_the_benchmark_modules_import_each_other_without_a_cycle():
    graph = _graph()
    assert graph["bench"] >= {"common", "report", "language", "steps", "heartbeat"}  # the parser saw them
    assert _cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_nothing_imports_the_command_line_and_common_imports_no_sibling():
    graph = _graph()
    assert sorted(name for name, deps in graph.items() if "bench" in deps) == []
    assert graph["common"] == set()


def test_every_benchmark_module_stays_readable():
    long = {
        p.name: n
        for p in BENCHMARKS.glob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert long == {}


def test_the_language_benchmark_program_records_what_pytorch_does():
    """The ``class Net(nn.Module)`` loop the language measure times: accepted by the checked
    language as written, and recorded with PyTorch's own calls, gradients and parameter names."""
    import importlib
    import sys

    from app.core import record
    from tests.support.oracle import check_against_plain

    sys.path.insert(0, str(BENCHMARKS.parent))
    try:
        language = importlib.import_module("benchmarks.language")
    finally:
        sys.path.remove(str(BENCHMARKS.parent))
    recording = record(language.net_program(3))
    assert recording.failed is None
    assert len(recording.calls) == 3
    check_against_plain(recording)
    assert {"model.fc1.weight", "model.fc2.bias"} <= set(recording.leaves)

"""Loading programs: TOML program files, plain ``.py`` files and built-ins, checked as data.

A program file is TOML with optional ``title``, ``summary``, ``notes`` and
``twin``, and a ``[program]`` table whose ``code`` is the program. A ``.py``
file is a program too. Files of the older fixed shape (``[inputs]``,
``[forward]``, ``[[calls]]``) are checked field by field as before and then
turned into the same program text a learner would write: after loading there
is one model, :class:`~app.core.model.program.Program`.

Nothing here runs the program: its text is parsed and statically checked
(``app.core.language.parsing``), never given to ``eval`` or ``exec``.

>>> p = load_builtin("two-losses")
>>> p.lines[-2:]
['y.sum().backward(retain_graph=True)', '(y * 3).sum().backward()']
>>> parse_program('[program]\\ncode = "x = torch.ones(2)"').code
'x = torch.ones(2)'
"""

from __future__ import annotations

import ast
import difflib
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import tomllib

from app.core.language.parsing import assigned_names, free_names, parse
from app.core.language.positions import node_position
from app.core.language.whitelist import build_namespaces
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.resources import program_files

__all__ = [
    "MAX_FILE_BYTES",
    "LegacyCall",
    "LegacyProgram",
    "builtin_names",
    "check_program",
    "load_builtin",
    "load_file",
    "load_program",
    "parse_program",
    "parse_python",
    "program_from_dict",
    "python_title",
    "stem_name",
]

MAX_FILE_BYTES = 1_000_000
MAX_INPUTS = 100
MAX_CALLS = 100
CallKind = Literal["backward", "grad"]

# The keys each table of a .toml program file may hold (the file's words, not the model's fields).
TOP_FIELDS = ("name", "title", "summary", "notes", "inputs", "forward", "calls")
PROGRAM_TOP_FIELDS = ("name", "title", "summary", "notes", "twin", "program")
PROGRAM_TABLE_FIELDS = ("code",)
LEGACY_ONLY = ("inputs", "forward", "calls")
FORWARD_FIELDS = ("code",)
CALL_FIELDS = ("kind", "loss", "retain_graph", "create_graph", "inputs", "bind")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@dataclass(frozen=True)
class LegacyCall:
    """One ``[[calls]]`` table of the older file shape, before it becomes program text."""

    kind: CallKind
    loss: str
    retain_graph: bool | None = None  # None: PyTorch's default, which follows create_graph
    create_graph: bool = False
    inputs: tuple[str, ...] = ()
    bind: str | None = None

    @property
    def effective_retain(self) -> bool:
        return self.create_graph if self.retain_graph is None else self.retain_graph


@dataclass(frozen=True)
class LegacyProgram:
    """A file of the older fixed shape, checked field by field; :meth:`program` turns it into text."""

    name: str
    title: str
    summary: str
    inputs: tuple[tuple[str, str], ...]
    forward: str
    calls: tuple[LegacyCall, ...]
    notes: str = ""
    path: Path | None = field(default=None, compare=False)

    def program(self) -> Program:
        lines, _ = self.to_python()
        return Program(
            "\n".join(lines) + "\n", name=self.name, title=self.title, summary=self.summary, notes=self.notes
        )

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.inputs)

    def to_python(self) -> tuple[list[str], dict[int, int]]:
        """The program as the plain Python a learner would write.

        Returns the lines and, per call index, its 0-based line number.
        """
        lines = ["import torch", ""]
        lines += [f"{name} = {expr}" for name, expr in self.inputs]
        lines += [line for line in self.forward.strip("\n").splitlines()]
        call_lines: dict[int, int] = {}
        for index, call in enumerate(self.calls):
            call_lines[index] = len(lines)
            lines.append(_call_python(call))
        return lines, call_lines


def _wrap(expr: str) -> str:
    try:
        body = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return f"({expr})"
    simple = isinstance(body, (ast.Call, ast.Name, ast.Attribute, ast.Subscript))
    return expr if simple else f"({expr})"


def _call_python(call: LegacyCall) -> str:
    options = []
    if call.retain_graph is not None:
        options.append(f"retain_graph={call.retain_graph}")
    if call.create_graph:
        options.append("create_graph=True")
    if call.kind == "backward":
        if call.inputs:
            options.insert(0, f"inputs=[{', '.join(call.inputs)}]")
        return f"{_wrap(call.loss)}.backward({', '.join(options)})"
    args = ", ".join([call.loss, f"[{', '.join(call.inputs)}]", *options])
    text = f"torch.autograd.grad({args})"
    if call.bind is None:
        return text
    return f"{call.bind} = {text}" + ("[0]" if len(call.inputs) == 1 else "")


# -- loading ---------------------------------------------------------------


def builtin_names() -> list[str]:
    """The built-in programs' names, in the order the window lists them.

    >>> "two-losses" in builtin_names()
    True
    """
    return [p.stem for p in program_files()]


def load_builtin(name: str) -> Program:
    """The built-in program ``name``; a :class:`ProgramError` names the nearest one when unknown.

    >>> load_builtin("two-losses").title
    'Backward twice through a shared square'
    >>> try:
    ...     load_builtin("two-loss")
    ... except ProgramError as exc:
    ...     print(exc.message.split(";")[0])
    no built-in program 'two-loss' (did you mean 'two-losses'?)
    """
    for path in program_files():
        if path.stem == name:
            return load_file(path)
    known = builtin_names()
    hint = _suggest(name, known)
    raise ProgramError(f"no built-in program '{name}'{hint}; try one of: {', '.join(known)}")


def load_program(name_or_path: str | Path) -> Program:
    """A built-in by name, or a ``.toml`` or ``.py`` file by path.

    >>> load_program("forgot-retain").name
    'forgot-retain'
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "mine.py")
    ...     _ = path.write_text("# My program\\nimport torch\\n", encoding="utf-8")
    ...     program = load_program(path)
    >>> program.name, program.title
    ('mine', 'My program')
    """
    text = str(name_or_path)
    path = Path(text)
    if text in builtin_names() and not path.exists():
        return load_builtin(text)
    if path.suffix in (".toml", ".py") or path.exists():
        return load_file(path)
    return load_builtin(text)


def load_file(path: Path) -> Program:
    """Read and check one ``.toml`` or ``.py`` file; every failure is a :class:`ProgramError`."""
    path = Path(path)
    raw = _read_limited(path)
    if path.suffix == ".py":
        return replace(parse_python(_decode(raw), name=stem_name(path)), path=path)
    program = parse_program(raw, name=stem_name(path))
    return replace(program, path=path)


def stem_name(path: Path) -> str:
    """A program's name from its file name: ``train_gan.py`` -> ``train_gan``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "-", path.stem)[:100].lstrip("-_.")
    return stem or "program"


def parse_python(text: str, *, name: str = "program") -> Program:
    """A plain Python file as a program: its first comment line is the title.

    >>> parse_python("# Two losses\\nimport torch\\n", name="demo").title
    'Two losses'
    """
    if len(text) > MAX_FILE_BYTES:
        raise ProgramError(_too_large(len(text.encode("utf-8", "surrogatepass"))), field="file")
    program = Program(text, name=name, title=python_title(text, name))
    check_program(program)
    return program


def python_title(text: str, name: str) -> str:
    """The first line's comment, or ``name`` when the text does not start with one.

    >>> python_title("# Two losses\\nimport torch\\n", "demo"), python_title("x = 1\\n", "demo")
    ('Two losses', 'demo')
    """
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return first.lstrip("#").strip() if first.startswith("#") and not first.startswith("#!") else name


def _read_limited(path: Path) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file (never /dev/zero or a pipe)."""
    shown = _shown(str(path), 80)
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise ProgramError(f"{shown} is a folder, not a program file", field="file")
        if not stat.S_ISREG(info.st_mode):
            raise ProgramError(f"{shown} is not a regular file", field="file")
        if info.st_size > MAX_FILE_BYTES:
            raise ProgramError(_too_large(info.st_size), field="file")
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ProgramError(f"cannot read {shown}: {exc.strerror or exc}", field="file") from None


def _too_large(size: int) -> str:
    return f"the file is {size:,} bytes; program files are limited to {MAX_FILE_BYTES:,} bytes (1 MB)"


def parse_program(raw: bytes | str, *, name: str = "program") -> Program:
    """Check TOML text (bytes or str) into a :class:`Program` (``name`` unless the file gives one).

    >>> try:
    ...     parse_program(b"nmae = 'x'")
    ... except ProgramError as exc:
    ...     print(exc.field, "|", exc.message[:43])
    nmae | unknown field 'nmae' (did you mean 'name'?)
    """
    text = _decode(raw) if isinstance(raw, bytes) else raw
    if len(text) > MAX_FILE_BYTES:  # characters: never fewer than bytes
        raise ProgramError(_too_large(len(text.encode("utf-8", "surrogatepass"))), field="file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(exc) from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ProgramError("this file nests arrays or tables too deeply", field="file") from None
    if "program" in data or not any(key in data for key in LEGACY_ONLY):
        return program_from_dict(data, name=name)
    return legacy_from_dict(data).program()


def _decode(raw: bytes) -> str:
    if len(raw) > MAX_FILE_BYTES:
        raise ProgramError(_too_large(len(raw)), field="file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8")
        line = good.count("\n") + 1
        col = len(good) - (good.rfind("\n") + 1) + 1
        message = f"the file is not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot start a character here"
        raise ProgramError(message, field="file", line=line, col=col) from None


def _toml_error(exc: tomllib.TOMLDecodeError) -> ProgramError:
    message = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)", message)
    at = message.find("(at ")  # a pattern with \s* before it backtracked over runs of spaces
    text = message[:at].rstrip() if at >= 0 and message.endswith(")") else message
    if match:
        return ProgramError(
            f"this is not valid TOML: {text}", field="file", line=int(match[1]), col=int(match[2])
        )
    return ProgramError(f"this is not valid TOML: {text}", field="file")


def _shown(value: Any, limit: int = 40) -> str:
    """User text inside a message: one line, printable, and short."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _suggest(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_keys(table: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in known:
            prefix = f"{where}." if where else ""
            shown = _shown(key)
            raise ProgramError(
                f"unknown field '{shown}'{_suggest(key, known)}; known fields: {', '.join(known)}",
                field=f"{prefix}{shown}",
            )


def _text(data: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise ProgramError(f"missing field '{key}'", field=where)
        return ""
    if not isinstance(value, str):
        raise ProgramError(f"must be text in quotes, not {_toml_type(value)}", field=where)
    return value


def _toml_type(value: Any) -> str:
    names = {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


def _flag(data: Mapping[str, Any], key: str, where: str) -> bool | None:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise ProgramError(f"must be true or false, not {_toml_type(value)}", field=where)
    return value


def _identifier(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _IDENT.fullmatch(value):
        raise ProgramError(
            f"'{_shown(value)}' is not a plain name (letters, digits and _, starting with a letter)",
            field=where,
        )
    if value in build_namespaces():
        raise ProgramError(f"'{value}' is a built-in name and cannot be reused", field=where)
    return value


def program_from_dict(data: Mapping[str, Any], *, name: str = "program") -> Program:
    """Validate a parsed TOML file of the program shape: ``[program]`` with ``code``."""
    mixed = [key for key in LEGACY_ONLY if key in data]
    if mixed:
        raise ProgramError(
            "a file holds either a [program] table or the older [inputs], [forward] and [[calls]] "
            "tables, not both",
            field=mixed[0],
        )
    _check_keys(data, PROGRAM_TOP_FIELDS, "")
    table = data.get("program")
    if not isinstance(table, dict):
        raise ProgramError('write [program] and then code = """...""" with the program', field="program")
    _check_keys(table, PROGRAM_TABLE_FIELDS, "program")
    given = _text(data, "name", "name", required=False)
    if given and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", given):
        raise ProgramError("use up to 100 letters, digits, '-', '_' or '.', starting with one", field="name")
    program = Program(
        code=_text(table, "code", "program.code"),
        name=given or name,
        title=_text(data, "title", "title", required=False),
        summary=_text(data, "summary", "summary", required=False),
        notes=_text(data, "notes", "notes", required=False),
        twin=_text(data, "twin", "twin", required=False),
    )
    check_program(program)
    return program


def check_program(program: Program) -> None:
    """Parse the program and run every static check of the language (nothing runs)."""
    parse(program.code, field="program", mode="exec")


def legacy_from_dict(data: Mapping[str, Any]) -> LegacyProgram:
    """Validate parsed TOML: fields, types, syntax of every expression, and names."""
    _check_keys(data, TOP_FIELDS, "")
    name = _text(data, "name", "name")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name):
        raise ProgramError("use up to 100 letters, digits, '-', '_' or '.', starting with one", field="name")
    inputs = _inputs(data.get("inputs"))
    forward = data.get("forward", {})
    if not isinstance(forward, dict):
        raise ProgramError('must be a table: write [forward] and then code = """..."""', field="forward")
    _check_keys(forward, FORWARD_FIELDS, "forward")
    legacy = LegacyProgram(
        name=name,
        title=_text(data, "title", "title"),
        summary=_text(data, "summary", "summary"),
        notes=_text(data, "notes", "notes", required=False),
        inputs=inputs,
        forward=_text(forward, "code", "forward.code", required=False),
        calls=_calls(data.get("calls")),
    )
    check_legacy_program(legacy)
    return legacy


def _inputs(table: Any) -> tuple[tuple[str, str], ...]:
    example = 'e.g. x = "torch.tensor([1., 2.], requires_grad=True)"'
    if table is None or table == {}:
        raise ProgramError(f"add at least one input under [inputs], {example}", field="inputs")
    if not isinstance(table, dict):
        raise ProgramError(f"must be a table: write [inputs] and then, {example}", field="inputs")
    if len(table) > MAX_INPUTS:
        raise ProgramError(f"a program has at most {MAX_INPUTS} inputs", field="inputs")
    out = []
    for key, value in table.items():
        where = f"inputs.{_shown(key)}"
        _identifier(key, where)
        if not isinstance(value, str):
            raise ProgramError(f"must be an expression in quotes, not {_toml_type(value)}", field=where)
        out.append((key, value))
    return tuple(out)


def _calls(items: Any) -> tuple[LegacyCall, ...]:
    if items is None or items == []:
        raise ProgramError("add at least one [[calls]] table", field="calls")
    if not isinstance(items, list):
        raise ProgramError("write each call as a [[calls]] table", field="calls")
    if len(items) > MAX_CALLS:
        raise ProgramError(f"a program has at most {MAX_CALLS} calls", field="calls")
    return tuple(_call(item, f"calls[{i}]") for i, item in enumerate(items))


def _call(item: Any, where: str) -> LegacyCall:
    if not isinstance(item, dict):
        raise ProgramError("each call must be a table", field=where)
    _check_keys(item, CALL_FIELDS, where)
    kind = item.get("kind", "backward")
    if kind not in ("backward", "grad"):
        hint = _suggest(kind, ("backward", "grad")) if isinstance(kind, str) else ""
        raise ProgramError(
            f"kind must be 'backward' or 'grad', not '{_shown(kind)}'{hint}", field=f"{where}.kind"
        )
    inputs = item.get("inputs", [])
    if not isinstance(inputs, list):
        raise ProgramError('must be a list of names, e.g. ["x"]', field=f"{where}.inputs")
    for name in inputs:
        _identifier(name, f"{where}.inputs")
    if kind == "grad" and not inputs:
        raise ProgramError('a grad call needs inputs, e.g. inputs = ["x"]', field=f"{where}.inputs")
    bind = item.get("bind")
    if bind is not None:
        if kind != "grad":
            raise ProgramError("only a grad call returns a value to bind", field=f"{where}.bind")
        _identifier(bind, f"{where}.bind")
    return LegacyCall(
        kind=kind,
        loss=_text(item, "loss", f"{where}.loss"),
        retain_graph=_flag(item, "retain_graph", f"{where}.retain_graph"),
        create_graph=bool(_flag(item, "create_graph", f"{where}.create_graph")),
        inputs=tuple(inputs),
        bind=bind,
    )


def check_legacy_program(legacy: LegacyProgram) -> None:
    """Parse every expression and check each name is bound before it is used."""
    known = set(build_namespaces())
    for name, expr in legacy.inputs:
        where = f"inputs.{name}"
        _check_defined(_parse_expression(expr, where), known, where, expr)
        known.add(name)
    leaves = set(legacy.input_names)
    tree = parse(legacy.forward, field="forward.code", mode="exec")
    assert isinstance(tree, ast.Module)
    for statement in tree.body:
        _check_defined(statement, known, "forward.code", legacy.forward)
        known.update(assigned_names(statement))
    for index, call in enumerate(legacy.calls):
        where = f"calls[{index}]"
        _check_defined(_parse_expression(call.loss, f"{where}.loss"), known, f"{where}.loss", call.loss)
        for name in call.inputs:
            if name not in known:
                message = f"'{name}' is not defined{_suggest(name, known)}"
                raise ProgramError(message, field=f"{where}.inputs")
        if call.bind is not None:
            if call.bind in leaves or call.bind in known:
                what = "an input" if call.bind in leaves else "a value"
                message = f"'{call.bind}' already names {what}; pick a new name"
                raise ProgramError(message, field=f"{where}.bind")
            known.add(call.bind)


def _parse_expression(text: str, field: str) -> ast.AST:
    return parse(text, field=field, mode="eval")


def _check_defined(tree: ast.AST, known: set[str], field: str, source: str) -> None:
    for node in free_names(tree):
        if node.id not in known:
            line, col = node_position(source, node)
            raise ProgramError(
                f"name '{node.id}' is not defined{_suggest(node.id, known)}", field=field, line=line, col=col
            )

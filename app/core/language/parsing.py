"""Parsing program text, and everything that can be refused without running it.

One concept, kept in one file past 500 lines: the one walk of the tree that refuses, with its
messages beside the node types they name.

:func:`parse` reads text with :mod:`ast` (never ``eval``/``exec``) and walks
the tree once against the tables in ``grammar.py``: refused syntax, private
or denied names and attributes, members that ``torch`` and ``F`` do not list,
oversized text, trees nested too deeply.
"""

from __future__ import annotations

import ast
import collections
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Literal

import torch

from app.core.language.definitions import (
    FIXED_NAMES,
    FUNCTION_ONLY,
    bound_names,
    call_refusal,
    definition_refusal,
    own_names,
    reached_through_super,
    shadowed_names,
    unread_children,
)
from app.core.language.grammar import (
    ALLOWED_NODES,
    FORBIDDEN_NAMES,
    REFUSALS,
    RUN_HINT,
    attribute_refusal,
    is_own_name,
    missing_member,
    with_run_hint,
)
from app.core.language.objects import AutogradEntry, Checked, GradModeEntry
from app.core.language.performance_settings import is_setting
from app.core.language.positions import error_at, index_position, source_lines
from app.core.language.python_methods import format_spec_refusal
from app.core.language.python_modules import ListedFunction
from app.core.language.saved_hooks import SAVED_HOOKS
from app.core.language.whitelist import Namespace, build_namespaces, python_modules
from app.core.model.errors import ProgramError
from app.core.sizing.limits import MAX_DEPTH, MAX_SOURCE_CHARS, MAX_TEXT

__all__ = [
    "SOURCE_ATTR",
    "WITH_REFUSAL",
    "Mode",
    "assigned_names",
    "free_names",
    "import_bindings",
    "parse",
]

Mode = Literal["eval", "exec"]
PARSE_PIECE_CHARS = 16_000  # longer programs are parsed in pieces of about this size
SOURCE_ATTR = "lens_source"  # parse() leaves the text on the tree, for columns in characters


def parse(source: str, *, field: str, mode: Mode) -> ast.AST:
    """Parse and statically check program text; raise :class:`ProgramError`.

    >>> try:
    ...     parse("x.__class__", field="calls[0].loss", mode="eval")
    ... except ProgramError as exc:
    ...     print(exc.where(), "|", exc.message.replace(RUN_HINT, "RUN_HINT"))
    calls[0].loss, line 1, column 1 | attribute '__class__' is private: names starting with _ are refused;
    RUN_HINT
    """
    _check_text(source, field, mode)
    tree = _parse_python(source, field, mode)
    _StaticChecker(source, field).check(tree)
    setattr(tree, SOURCE_ATTR, source)
    return tree


def _check_text(source: str, field: str, mode: Mode) -> None:
    """Refuse what is not text, too long, or (for an expression) empty."""
    if not isinstance(source, str):
        raise ProgramError(f"expected text, got {type(source).__name__}", field=field)
    if len(source) > MAX_SOURCE_CHARS:
        line, col = index_position(source, MAX_SOURCE_CHARS)
        raise ProgramError(
            f"this text is {len(source):,} characters long; the limit is {MAX_SOURCE_CHARS:,}",
            field=field,
            line=line,
            col=col,
        )
    if mode == "eval" and not source.strip():
        raise ProgramError("this is empty: write an expression, e.g. y.sum()", field=field, line=1, col=1)


def _parse_python(source: str, field: str, mode: Mode) -> ast.AST:
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not for learners
            warnings.simplefilter("ignore")
            long = mode == "exec" and len(source) > PARSE_PIECE_CHARS and "\r" not in source
            tree = _parse_in_pieces(source) if long else None
            return tree if tree is not None else ast.parse(source, mode=mode)
    except SyntaxError as exc:
        line, col = exc.lineno, exc.offset
        if line is None and "\x00" in source:
            line, col = index_position(source, source.index("\x00"))
        line, col = (None if n is None else max(n, 1) for n in (line, col))  # Python says 0 at the very end
        message = _syntax_message(exc.msg)
        raise ProgramError(message, field=field, line=line, col=col) from None
    except (RecursionError, MemoryError):
        line, col = _deep_line(source)
        message = f"this is nested too deeply to read (the limit is {MAX_DEPTH} levels)"
        raise ProgramError(message, field=field, line=line, col=col) from None
    except ValueError as exc:  # NUL bytes on older Pythons, integers over 4300 digits
        raise ProgramError(f"this is not valid Python: {exc}", field=field) from None


def _parse_in_pieces(source: str) -> ast.Module | None:
    """The module parsed ~PARSE_PIECE_CHARS at a time, or None when a piece does not parse alone.

    One ``ast.parse`` of a 5,000-node program holds the GIL ~50 ms in one call. Pieces are
    cut only before a line that starts in column 0; if each piece parses on its own, the tokenizer
    was in its starting state at every cut (no open bracket, string, continuation or block
    header), so the pieces' statements are exactly the whole text's. Any piece that fails sends
    the caller back to one parse of the whole text, which gives Python's own error. Each piece
    is preceded by blank lines so its line numbers are the whole text's. Lines are split at
    ``\n`` only, as the tokenizer does (``str.splitlines`` also splits at form feeds, and a
    comment holding one would be cut in two); the caller keeps text with ``\r`` whole.
    """
    lines = [line + "\n" for line in source.split("\n")]
    lines[-1] = lines[-1][:-1]
    body: list[ast.stmt] = []
    start, size = 0, 0
    for number, line in enumerate(lines):
        if size >= PARSE_PIECE_CHARS and line[:1] not in ("", " ", "\t", "\n", "\r", "\f"):
            if not _parse_piece(lines, start, number, body):
                return None
            start, size = number, 0
        size += len(line)
    if not _parse_piece(lines, start, len(lines), body):
        return None
    return ast.Module(body=body, type_ignores=[])


def _parse_piece(lines: list[str], start: int, end: int, body: list[ast.stmt]) -> bool:
    try:
        piece = ast.parse("\n" * start + "".join(lines[start:end]), mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    body.extend(piece.body)
    return True


def _syntax_message(msg: str) -> str:
    if "null bytes" in msg:
        return "this text contains a NUL character (\\0), which is not allowed"
    return f"this is not valid Python: {msg}"


def _deep_line(source: str) -> tuple[int | None, int | None]:
    """The first line that is too deep on its own (Python's parser gives no position)."""
    for number, text in enumerate(source_lines(source), start=1):
        stripped = text.strip()
        try:
            ast.parse(stripped)
        except (RecursionError, MemoryError):
            return number, len(text) - len(text.lstrip()) + 1
        except Exception:  # an incomplete line on its own: expected, skip it
            continue
    return None, None


# Tensor methods denied as values but allowed when called: their function must be the program's
CALLED_WITH_OWN_FUNCTIONS = frozenset(["register_hook"])


class _StaticChecker:
    """Everything that can be refused without running anything."""

    def __init__(self, source: str, field: str) -> None:
        self.source = source
        self.field = field
        self.builtins = build_namespaces()
        self.functions: set[int] = set()  # return and nonlocal statements inside a def or lambda
        self.own_names: frozenset[str] = frozenset()  # NOTE [own names]
        self.shadowed: frozenset[str] = frozenset()
        self.bound: frozenset[str] = frozenset()  # NOTE [own names over built-in ones]

    def error(self, message: str, node: ast.AST) -> ProgramError:
        return error_at(with_run_hint(message), self.field, node, self.source)

    def check(self, tree: ast.AST) -> None:
        self.own_names = own_names(tree)
        self.called_with_own: set[int] = set()  # id(ast.Attribute) of x.register_hook(...) calls
        self.shadowed = shadowed_names(tree)  # NOTE [shadowed builtins]
        self.bound = bound_names(tree)
        # Iterative, so a deep tree cannot overflow our own stack. Operators and
        # contexts carry no position: they are reported at their expression.
        # ``in_loop`` says whether break and continue have a loop to leave.
        stack: list[tuple[ast.AST, int, ast.AST, bool]] = [(tree, 0, tree, False)]
        while stack:
            node, depth, anchor, in_loop = stack.pop()
            anchor = node if hasattr(node, "lineno") else anchor
            if depth > MAX_DEPTH and node is anchor:  # operators and contexts are leaves: not counted
                raise self.error(f"this is nested more than {MAX_DEPTH} levels deep: split it up", anchor)
            self.check_node(node, anchor)
            if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
                word = "break" if isinstance(node, ast.Break) else "continue"
                raise self.error(f"{word} can only be used inside a for loop", node)
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                self.functions.update(id(n) for n in ast.walk(node) if isinstance(n, FUNCTION_ONLY))
            elif isinstance(node, ast.Return) and id(node) not in self.functions:
                raise self.error("'return' outside function", node)
            elif isinstance(node, ast.Nonlocal) and id(node) not in self.functions:
                raise self.error("nonlocal declaration not allowed at module level", node)
            elif isinstance(node, (ast.Yield, ast.YieldFrom)) and id(node) not in self.functions:
                raise self.error("'yield' outside function", node)
            loop_body = {id(b) for b in node.body} if isinstance(node, (ast.For, ast.While)) else set()
            if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
                in_loop = False  # a loop outside a function is not one its body can leave
            children = [c for c in ast.iter_child_nodes(node) if id(c) not in unread_children(node)]
            stack.extend(
                (child, depth + 1, anchor, in_loop or id(child) in loop_body) for child in reversed(children)
            )

    def check_node(self, node: ast.AST, anchor: ast.AST) -> None:
        kind = type(node)
        if kind in REFUSALS:
            raise self.error(REFUSALS[kind], anchor)
        if not isinstance(node, ALLOWED_NODES):
            raise self.error(f"{kind.__name__} is not part of the checked language", anchor)
        if isinstance(node, ast.Name):
            self.check_name(node)
        elif isinstance(node, ast.Attribute):
            self.check_attribute(node)
        elif isinstance(node, ast.keyword) and node.arg is not None and node.arg.startswith("_"):
            raise self.error(f"keyword '{node.arg}' is private: names starting with _ are refused", node)
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.FormattedValue):
            self.check_format(node)
        elif isinstance(node, ast.Call):
            self.check_call(node)
        elif isinstance(node, ast.arg):
            self.check_private(node.arg, node, "argument")
        elif isinstance(node, ast.comprehension) and node.is_async:
            raise self.error("async comprehensions are not part of the checked language", anchor)
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            self.check_private(node.name, node, "name")
        elif isinstance(node, ast.stmt):
            self.check_statement(node)

    def check_private(self, name: str, node: ast.AST, what: str) -> None:
        if (name.startswith("_") and not is_own_name(name)) or (
            name in FORBIDDEN_NAMES and name not in self.shadowed
        ):
            raise self.error(f"{what} '{name}' is private or reserved: pick another name", node)

    def check_call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in CALLED_WITH_OWN_FUNCTIONS:
            self.called_with_own.add(id(node.func))  # x.register_hook(fn): tensor_hooks.py
        refusal = call_refusal(node)
        if refusal is not None:
            raise self.error(*refusal)

    def check_definition(self, node: ast.FunctionDef | ast.ClassDef) -> None:
        refusal = definition_refusal(node)
        if refusal is not None:
            raise self.error(*refusal)

    def check_statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            self.check_definition(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                self.check_private(name, node, "name")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.check_target(target, _ASSIGNABLE, _ASSIGN_HINT)
        elif isinstance(node, ast.AugAssign):
            self.check_target(node.target, (ast.Name, ast.Subscript, ast.Attribute), _AUGASSIGN_HINT)
        elif isinstance(node, ast.AnnAssign):  # x: int = 3, self.w: Tensor = t
            self.check_target(node.target, (ast.Name, ast.Subscript, ast.Attribute), _ASSIGN_HINT)
        elif isinstance(node, ast.For):
            self.check_target(node.target, (ast.Name, ast.Tuple, ast.List, ast.Starred), _FOR_HINT)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self.check_target(
                    target, (ast.Name, ast.Subscript, ast.Attribute, ast.Tuple, ast.List), _DEL_HINT
                )
        elif isinstance(node, ast.With):
            for item in node.items:
                self.check_with_item(item, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            import_bindings(node, field=self.field, source=self.source)

    def check_name(self, node: ast.Name) -> None:
        read_main = node.id == "__name__" and isinstance(node.ctx, ast.Load)  # if __name__ == "__main__":
        if node.id.startswith("_") and not is_own_name(node.id) and not read_main:  # NOTE [own names]
            raise self.error(f"name '{node.id}' is private: names starting with _ are refused", node)
        if node.id in FORBIDDEN_NAMES and node.id not in self.shadowed:
            raise self.error(f"'{node.id}' is not available in programs: {FORBIDDEN_NAMES[node.id]}", node)
        if isinstance(node.ctx, ast.Store) and node.id in FIXED_NAMES:
            raise self.error(f"'{node.id}' is a built-in name and cannot be assigned", node)
        if isinstance(node.ctx, ast.Del) and node.id in FIXED_NAMES:
            raise self.error(f"'{node.id}' is a built-in name and cannot be deleted", node)

    def check_attribute(self, node: ast.Attribute) -> None:
        # NOTE [own names]: an underscore name the program defines somewhere; checked again on the
        # object it is read from, which must be the program's own.
        owner = _static_namespace(node.value, self.builtins, self.bound)
        refusal = attribute_refusal(node.attr, own=node.attr in self.own_names)
        if refusal is not None and id(node) in self.called_with_own:
            refusal = None  # called, its function checked where it runs (tensor_hooks.py)
        if refusal is not None and _version_string(owner, node):  # NOTE [version string]
            refusal = None
        if refusal is not None and not reached_through_super(node):
            raise self.error(refusal, node)
        if owner is not None and _cudnn_setting(owner, node):
            return  # torch.backends.cudnn.deterministic = True: accepted, changes nothing
        if owner is not None and node.attr not in owner.members:
            raise self.error(missing_member(owner, node.attr), node)
        if isinstance(node.ctx, ast.Store) and owner is not None:
            raise self.error(f"{owner.path}.{node.attr} cannot be assigned", node)

    def check_constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes):
            raise self.error("bytes literals are not allowed", node)
        if isinstance(node.value, str) and len(node.value) > MAX_TEXT:
            raise self.error(f"text constants are limited to {MAX_TEXT:,} characters", node)

    def check_format(self, node: ast.FormattedValue) -> None:
        """``f"{loss:.4f}"``: a written-out spec, no wider than MAX_FORMAT_WIDTH (``{x:>999999999}``)."""
        spec = node.format_spec
        if spec is None:
            return
        pieces = spec.values if isinstance(spec, ast.JoinedStr) else [spec]
        written = [p.value for p in pieces if isinstance(p, ast.Constant) and isinstance(p.value, str)]
        if len(written) != len(pieces):
            raise self.error("a format spec is written out in f-strings here, as in {loss:.4f}", node)
        refusal = format_spec_refusal("".join(written))
        if refusal is not None:
            raise self.error(refusal, node)

    def check_target(self, target: ast.expr, allowed: tuple[type[ast.AST], ...], hint: str) -> None:
        if not isinstance(target, allowed):
            raise self.error(hint, target)
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.check_target(element, (*allowed, ast.Starred), hint)
        if isinstance(target, ast.Starred):
            self.check_target(target.value, (ast.Name,), hint)

    def check_with_item(self, item: ast.withitem, statement: ast.With) -> None:
        call = item.context_expr
        if item.optional_vars is not None:
            raise self.error(
                "with ... as is not needed here: write with torch.no_grad():", item.optional_vars
            )
        if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
            raise self.error(WITH_REFUSAL, call)
        func = call.func
        if isinstance(func, ast.Attribute):
            owner = _static_namespace(func.value, self.builtins, self.bound)
            if owner is not None and not isinstance(owner.members.get(func.attr), GradModeEntry):
                raise self.error(WITH_REFUSAL, call)
        flagged = isinstance(func, ast.Attribute) and func.attr == "set_grad_enabled"
        if flagged and (len(call.args) != 1 or call.keywords):
            raise self.error("with torch.set_grad_enabled(...): takes one True or False", call)
        hooks = (func.attr if isinstance(func, ast.Attribute) else func.id) in (*SAVED_HOOKS, "autocast")
        if (call.args or call.keywords) and not flagged and not hooks:  # hooks: checked as they run
            raise self.error(f"{_dotted(call.func)}() takes nothing here: write it with empty brackets", call)


_ASSIGNABLE = (ast.Name, ast.Tuple, ast.List, ast.Subscript, ast.Attribute)
_ASSIGN_HINT = "only names, items (b[1] = ...) and attributes (t.grad = ...) can be assigned"
_AUGASSIGN_HINT = "only a name, an item or an attribute can be updated with an operator like +="
_FOR_HINT = "a for loop names its items with plain names: for i in ..., or for i, (a, b) in ..."
_DEL_HINT = "only names, items (del a[0]) and attributes (del self.cache) can be deleted"
WITH_REFUSAL = "only with torch.no_grad(): and with torch.enable_grad(): are part of the checked language"
IMPORTABLE = (
    "torch, torch.nn, torch.nn.functional, torch.nn.init, torch.optim, torch.optim.lr_scheduler, "
    "torch.autograd (and its variable and function), torch.utils.data, torch.utils.checkpoint, "
    "torch.distributions, torch.amp, torch.cuda.amp, torch.linalg, torch.fft, torch.special, math, "
    "random, time, argparse, "
    "logging, warnings, copy, collections, itertools, functools, typing and tqdm"
)
# Modules snippets often import that stay out, with the reason a learner is shown.
REFUSED_MODULES = {
    "numpy": "NumPy is not part of programs: build tensors with torch (torch.tensor, torch.randn)",
    "torchvision": "torchvision reads datasets and downloads models, which programs never do",
    "matplotlib": "programs draw no plots: print the values, or see them in the window",
}
# ``from __future__ import ...`` in older snippets changes nothing in Python 3.
FUTURE_FEATURES = frozenset(
    {"print_function", "division", "absolute_import", "unicode_literals", "annotations"}
)


def _cudnn_setting(owner: Namespace, node: ast.Attribute) -> bool:
    """``torch.backends.cudnn.deterministic = ...``: the one module attribute a program may assign."""
    return (
        is_setting(owner.path, node.attr)  # performance_settings.py
        and isinstance(node.ctx, ast.Store)
    )


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "..."


def import_bindings(
    node: ast.Import | ast.ImportFrom, *, field: str, source: str | None
) -> list[tuple[str, Any]]:
    """The names an import binds and the checked objects they get; refuse any other import.

    Only torch's modules that the language lists can be imported, each bound to
    the very object the program starts with (``import torch.nn as nn`` binds
    the ``nn`` already there); ``from torch.autograd import grad`` and
    ``from torch import no_grad`` bind the markers for those calls.

    >>> tree = ast.parse("from torch import nn, optim as o")
    >>> [(name, value.path) for name, value in import_bindings(tree.body[0], field="f", source=None)]
    [('nn', 'torch.nn'), ('o', 'torch.optim')]
    """
    builtins = build_namespaces()
    out: list[tuple[str, Any]] = []

    def refuse(message: str) -> ProgramError:
        return error_at(with_run_hint(message), field, node, source)

    if isinstance(node, ast.Import):
        for alias in node.names:
            module = _module_at(alias.name, builtins)
            if module is None:
                raise refuse(_import_refusal(alias.name))
            first = alias.name.split(".")[0]
            out.append((alias.asname, module) if alias.asname else (first, _module_at(first, builtins)))
    elif node.module == "__future__" and node.level == 0:
        if not all(alias.name in FUTURE_FEATURES for alias in node.names):
            raise refuse(f"this from __future__ import is not part of programs; {RUN_HINT}")
    else:
        module = _module_at(node.module or "", builtins) if node.level == 0 else None
        if module is None:
            raise refuse(_import_refusal("." * node.level + (node.module or "")))
        for alias in node.names:
            out.append((alias.asname or alias.name, _imported_member(module, alias.name, refuse)))
    for name, value in out:
        if name.startswith("_") or name in FORBIDDEN_NAMES:
            raise refuse(f"an import cannot bind the name '{name}': pick another")
        if name in FIXED_NAMES and builtins.get(name) is not value:
            raise refuse(f"'{name}' is a built-in name: this import would replace it; pick another")
    return out


def _module_at(path: str, builtins: dict[str, Any]) -> Namespace | None:
    first, *rest = path.split(".")
    module = builtins.get(first) if first == "torch" else python_modules().get(first)
    for part in rest:
        module = module.members.get(part) if isinstance(module, Namespace) else None
    return module if isinstance(module, Namespace) else None


def _imported_member(module: Namespace, name: str, refuse: Callable[[str], ProgramError]) -> Any:
    if name == "*":
        raise refuse(
            f"from {module.path} import * is not allowed: import the module, e.g. import torch.nn as nn"
        )
    if name not in module.members:
        raise refuse(missing_member(module, name))
    member = module.members[name]
    if isinstance(member, (Namespace, AutogradEntry, GradModeEntry, Checked, torch.dtype, int, float)):
        return member  # a module, a marker, a proxy, a dtype or a number (math.pi) as it is
    return ListedFunction(f"{module.path}.{name}", member)  # a function or a factory: callable by name


def _import_refusal(module: str) -> str:
    reason = REFUSED_MODULES.get(module.split(".", maxsplit=1)[0])
    if reason is not None:
        return f"'{module}' cannot be imported: {reason}; {RUN_HINT}"
    return f"'{module}' cannot be imported: a program can import {IMPORTABLE}; {RUN_HINT}"


def _version_string(owner: Namespace | None, node: ast.Attribute) -> bool:
    """``torch.__version__``, read (NOTE [version string] in ``whitelist.py``)."""
    return (
        owner is not None
        and owner.path == "torch"
        and node.attr == "__version__"
        and isinstance(node.ctx, ast.Load)
    )


def _static_namespace(node: ast.expr, builtins: dict[str, Any], bound: frozenset[str]) -> Namespace | None:
    """The module ``node`` names, when that is known without running anything: never a name the
    program binds, which may hold a value of its own (NOTE [own names over built-in ones])."""
    if isinstance(node, ast.Name):
        value = builtins.get(node.id) if node.id not in bound or node.id in FIXED_NAMES else None
        return value if isinstance(value, Namespace) else None
    if isinstance(node, ast.Attribute):
        owner = _static_namespace(node.value, builtins, bound)
        member = owner.members.get(node.attr) if owner is not None else None
        return member if isinstance(member, Namespace) else None
    return None


def free_names(tree: ast.AST) -> Iterator[ast.Name]:
    """Names read by ``tree`` at its own level, in ``ast.walk``'s order.

    The bodies of functions, lambdas, classes and comprehensions read names of their own
    (NOTE [program scopes]); only what runs where they stand is walked: defaults,
    decorators, bases, a comprehension's first iterable.
    """
    queue = collections.deque([tree])
    while queue:
        node = queue.popleft()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield node
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            spec = node.args
            decorators = node.decorator_list if isinstance(node, ast.FunctionDef) else []
            queue.extend(d for d in (*spec.defaults, *spec.kw_defaults, *decorators) if d is not None)
        elif isinstance(node, ast.ClassDef):
            queue.extend((*node.decorator_list, *node.bases))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            queue.append(node.generators[0].iter)
        else:
            queue.extend(ast.iter_child_nodes(node))


def assigned_names(statement: ast.stmt) -> list[str]:
    """Names a statement binds, also inside its body (``for``, ``if``, ``with``) and by imports.

    >>> assigned_names(ast.parse("for i, (a, b) in z:\\n    c = a\\n    c.grad = None").body[0])
    ['i', 'a', 'b', 'c']
    """
    out: list[str] = []
    for node in _walk_in_order(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.append(node.id)
        elif isinstance(node, ast.alias):
            out.append(node.asname or node.name.split(".")[0])
    return list(dict.fromkeys(out))


def _walk_in_order(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node``, depth first in source order (``ast.walk`` goes breadth first)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(ast.iter_child_nodes(current))))

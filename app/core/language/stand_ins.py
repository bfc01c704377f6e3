"""Stand-ins for the modules training code imports around the learning: ``time``, ``argparse``,
``logging``, ``warnings``, ``collections``, ``itertools`` and ``typing``.

# NOTE [stand-in modules: bookkeeping]
A snippet reads the clock, parses its command line, logs its loss and keeps its settings in an
``OrderedDict``; none of it is the learning, and refusing it would refuse the whole program.
Each module here is a closed list of members that reach nothing outside the program:
- ``time``: clock reads; ``sleep`` waits for nothing (a recording has no time to lose).
- ``argparse``: a parser whose ``parse_args()`` gives the defaults the program wrote (a
  recording has no command line); an argument without a default is refused, as a plain run
  without that argument would stop there.
- ``logging`` and ``warnings``: the message goes to the recording's printed output, as
  ``print`` does; no handler, file or stream is ever reached (``FileHandler`` is not listed).
- ``collections``, ``itertools``: Python's own containers; the iterators make their items at
  once, their count checked first (``product`` of many lists is refused before it is made).
- ``typing``: names for annotations, which a program never calls.
- ``functools``: ``partial`` and ``reduce``, whose calls of the program's functions the evaluator makes.
- ``tqdm``: a loop over ``tqdm(loader)`` goes through the loader; the bar draws nothing.
The ``copy`` module is ``copies.py``.
"""

from __future__ import annotations

import collections
import itertools
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from app.core.language.hints import refused
from app.core.language.objects import Checked, PrintedText, listed_method
from app.core.language.safe_builtins import SafeBuiltin, print_text
from app.core.sizing.limits import MAX_SEQUENCE

__all__ = [
    "ArgumentParserProxy",
    "ParsedArguments",
    "Partial",
    "ProgressBar",
    "Reduce",
    "TypingName",
    "argparse_members",
    "collections_members",
    "functools_members",
    "itertools_members",
    "logging_members",
    "time_members",
    "tqdm_members",
    "typing_members",
    "warnings_members",
]


def _named(fn: Callable[..., Any], module: str, name: str) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    return fn


# -- time ---------------------------------------------------------------------------------


def _sleep(seconds: Any) -> None:
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        raise refused("time.sleep(...) takes a number of seconds")


def time_members() -> dict[str, Any]:
    """``time``: clock reads, and ``sleep`` that waits for nothing."""
    return {
        "time": time.time,
        "perf_counter": time.perf_counter,
        "monotonic": time.monotonic,
        "process_time": time.process_time,
        "sleep": _named(_sleep, "time", "sleep"),
    }


# -- argparse -----------------------------------------------------------------------------


class ParsedArguments(Checked):
    """What ``parse_args()`` gives: the arguments by name (``args.lr``), assignable as Python's."""

    kind = "the parsed arguments"
    holds_own_names = True

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get_attribute(self, name: str) -> Any:
        return self.values[name]

    def set_attribute(self, name: str, value: Any) -> None:
        if name.startswith("__"):
            raise KeyError(name)
        self.values[name] = value

    def members(self) -> list[str]:
        return sorted(self.values)

    def __repr__(self) -> str:
        return "Namespace(" + ", ".join(f"{k}={v!r}" for k, v in self.values.items()) + ")"


_STORE_CONSTANT = {"store_true": False, "store_false": True}


class ArgumentParserProxy(Checked):
    """``argparse.ArgumentParser(...)``: arguments declared, their defaults given back.

    >>> parser = ArgumentParserProxy()
    >>> parser.add_argument("--learning-rate", type=SafeBuiltin("float", float), default="0.1")
    >>> parser.add_argument("--cuda", action="store_true")
    >>> parser.parse_args().values
    {'learning_rate': 0.1, 'cuda': False}
    """

    kind = "an argparse.ArgumentParser"
    METHODS = (
        "add_argument",
        "add_argument_group",
        "add_mutually_exclusive_group",
        "set_defaults",
        "parse_args",
        "parse_known_args",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.defaults: dict[str, Any] = {}

    def method(self, name: str) -> Callable[..., Any]:
        return listed_method(self, name, self.METHODS)

    def members(self) -> list[str]:
        return list(self.METHODS)

    def add_argument(self, *flags: Any, **settings: Any) -> None:
        if not flags or not all(isinstance(f, str) for f in flags):
            raise refused("add_argument(...) takes the argument's names as text, as in '--lr'")
        dest = settings.get("dest") or _destination(flags)
        action = settings.get("action", "store")
        if action in _STORE_CONSTANT:
            default = settings.get("default", _STORE_CONSTANT[action])
        elif "default" in settings:
            default = _converted(settings["default"], settings.get("type"), dest)
        elif settings.get("required") or not flags[0].startswith("-"):
            raise refused(
                f"the argument '{dest}' has no default: a recording has no command line, give it one"
            )
        else:
            default = None
        self.defaults.setdefault(dest, default)
        if "default" in settings or action in _STORE_CONSTANT:
            self.defaults[dest] = default

    def add_argument_group(self, *args: Any, **kwargs: Any) -> ArgumentParserProxy:
        return self

    def add_mutually_exclusive_group(self, *args: Any, **kwargs: Any) -> ArgumentParserProxy:
        return self

    def set_defaults(self, **defaults: Any) -> None:
        self.defaults.update(defaults)

    def parse_args(self, args: Any = None, namespace: Any = None) -> ParsedArguments:
        if args not in (None, []) or namespace is not None:
            raise refused("parse_args() gives the defaults here: a recording has no command line")
        return ParsedArguments(dict(self.defaults))

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[ParsedArguments, list[str]]:
        return self.parse_args(args, namespace), []


def _destination(flags: tuple[str, ...]) -> str:
    long = next((f for f in flags if f.startswith("--")), flags[0])
    return long.lstrip("-").replace("-", "_")


def _converted(default: Any, kind: Any, dest: str) -> Any:
    """A text default goes through ``type=``, as argparse does; only int, float and str here."""
    if not isinstance(default, str) or kind is None:
        return default
    if isinstance(kind, SafeBuiltin) and kind.fn in (int, float, str):
        return kind.fn(default)
    raise refused(f"the argument '{dest}' converts its text default with a type= of its own: write the value")


def _argument_parser(*args: Any, **kwargs: Any) -> ArgumentParserProxy:
    return ArgumentParserProxy()


def argparse_members() -> dict[str, Any]:
    """``argparse``: the parser, and the formatter names people pass it (which change nothing)."""
    formatters = ("ArgumentDefaultsHelpFormatter", "RawTextHelpFormatter", "RawDescriptionHelpFormatter")
    return {
        "ArgumentParser": _named(_argument_parser, "argparse", "ArgumentParser"),
        **{name: TypingName(name, "argparse") for name in formatters},
    }


# -- logging and warnings ------------------------------------------------------------------

_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


def _message(level: str, name: str, msg: Any, args: tuple[Any, ...]) -> PrintedText:
    """``logger.info("loss %.3f", loss)``: the evaluator fills in ``args`` as ``%`` does (checked)."""
    values = args[0] if len(args) == 1 and isinstance(args[0], dict) else args
    return PrintedText(print_text(f"{level}:{name}:{msg}"), values if args else None)


class LoggerProxy(Checked):
    """``logging.getLogger(name)``: its messages go to the recording's printed output."""

    METHODS = ("debug", "info", "warning", "warn", "error", "critical", "exception", "log", "setLevel")

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind = f"the logger {name!r}"

    def method(self, name: str) -> Callable[..., Any]:
        if name not in self.METHODS:
            raise KeyError(name)
        if name == "setLevel":
            return _ignore
        if name == "log":
            return lambda level, msg, *args, **kwargs: _message(_level_name(level), self.name, msg, args)
        level = {"warn": "WARNING", "exception": "ERROR"}.get(name, name.upper())
        return lambda msg, *args, **kwargs: _message(level, self.name, msg, args)

    def members(self) -> list[str]:
        return list(self.METHODS)


def _level_name(level: Any) -> str:
    return next((name for name, number in _LEVELS.items() if number == level), f"Level {level}")


def _ignore(*args: Any, **kwargs: Any) -> None:
    """A setting that changes nothing a recording shows (a level, a format)."""


def _basic_config(**settings: Any) -> None:
    for name in ("filename", "handlers", "stream"):
        if name in settings:
            raise refused(f"logging.basicConfig({name}=...): programs cannot write files or streams")


def _get_logger(name: Any = None) -> LoggerProxy:
    if name is not None and not isinstance(name, str):
        raise refused("logging.getLogger(...) takes a name as text")
    return LoggerProxy(name or "root")


def logging_members() -> dict[str, Any]:
    """``logging``: loggers and the module's own functions, printing to the recording."""
    members: dict[str, Any] = {
        "getLogger": _named(_get_logger, "logging", "getLogger"),
        "basicConfig": _named(_basic_config, "logging", "basicConfig"),
        **_LEVELS,
    }
    root = LoggerProxy("root")
    for name in ("debug", "info", "warning", "error", "critical", "exception", "log"):
        members[name] = _named(root.method(name), "logging", name)
    return members


def _warn(message: Any, category: Any = None, stacklevel: Any = 1, **kwargs: Any) -> PrintedText:
    name = getattr(category, "name", None) or "UserWarning"
    return PrintedText(print_text(f"{name}: {message}"))


def warnings_members() -> dict[str, Any]:
    """``warnings``: ``warn`` prints; the filters change nothing a recording shows."""
    return {
        "warn": _named(_warn, "warnings", "warn"),
        "filterwarnings": _named(_ignore, "warnings", "filterwarnings"),
        "simplefilter": _named(_ignore, "warnings", "simplefilter"),
    }


# -- collections and itertools ---------------------------------------------------------------


def _defaultdict(factory: Any = None, *items: Any) -> collections.defaultdict[Any, Any]:
    if factory is not None and not (
        isinstance(factory, SafeBuiltin) and factory.fn in (list, dict, set, int, float, str)
    ):
        raise refused("defaultdict(...) takes list, dict, set, int, float or str here")
    return collections.defaultdict(None if factory is None else factory.fn, *items)


def collections_members() -> dict[str, Any]:
    """``collections``: ``OrderedDict``, ``defaultdict`` (of a built-in type) and ``Counter``."""
    return {
        "OrderedDict": collections.OrderedDict,
        "defaultdict": _named(_defaultdict, "collections", "defaultdict"),
        "Counter": collections.Counter,
    }


def _sized(count: int, name: str) -> None:
    if count > MAX_SEQUENCE:
        raise refused(f"itertools.{name} would make {count:,} items; the limit is {MAX_SEQUENCE:,}")


def _items(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple, range, str, dict)):
        _sized(len(value), "...")
        return list(value)
    raise refused("itertools takes lists, tuples, ranges and text here")


def _product(*iterables: Any, repeat: int = 1) -> list[tuple[Any, ...]]:
    pools = [_items(i) for i in iterables] * repeat
    _sized(math.prod(len(p) for p in pools), "product")
    return list(itertools.product(*pools))


def _combinations(iterable: Any, r: int) -> list[tuple[Any, ...]]:
    pool = _items(iterable)
    _sized(math.comb(len(pool), r) if 0 <= r <= len(pool) else 0, "combinations")
    return list(itertools.combinations(pool, r))


def _permutations(iterable: Any, r: int | None = None) -> list[tuple[Any, ...]]:
    pool = _items(iterable)
    size = len(pool) if r is None else r
    _sized(math.perm(len(pool), size) if 0 <= size <= len(pool) else 0, "permutations")
    return list(itertools.permutations(pool, r))


def _chain(*iterables: Any) -> list[Any]:
    pools = [_items(i) for i in iterables]
    _sized(sum(len(p) for p in pools), "chain")
    return [item for pool in pools for item in pool]


def _islice(iterable: Any, *bounds: Any) -> list[Any]:
    return list(itertools.islice(_items(iterable), *bounds))


def _repeat(value: Any, times: Any) -> list[Any]:
    if not isinstance(times, int):
        raise refused("itertools.repeat(value, times) takes how many times here")
    _sized(times, "repeat")
    return [value] * max(times, 0)


def _zip_longest(*iterables: Any, fillvalue: Any = None) -> list[tuple[Any, ...]]:
    pools = [_items(i) for i in iterables]
    return list(itertools.zip_longest(*pools, fillvalue=fillvalue))


def _accumulate(iterable: Any, initial: Any = None) -> list[Any]:
    return list(itertools.accumulate(_items(iterable), initial=initial))


def itertools_members() -> dict[str, Any]:
    """``itertools``: the finite ones, each making its items at once (counted first)."""
    fns: dict[str, Callable[..., Any]] = {
        "product": _product,
        "combinations": _combinations,
        "permutations": _permutations,
        "chain": _chain,
        "islice": _islice,
        "repeat": _repeat,
        "zip_longest": _zip_longest,
        "accumulate": _accumulate,
    }
    return {name: _named(fn, "itertools", name) for name, fn in fns.items()}


# -- functools ------------------------------------------------------------------------------


class Partial(Checked):
    """``functools.partial(fn, *args, **kwargs)``: calling it calls ``fn`` with these first (the
    evaluator does, as it calls the program's functions)."""

    kind = "a functools.partial"

    def __init__(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.fn = fn
        self.args = list(args)
        self.kwargs = kwargs


class Reduce(Checked):
    """``functools.reduce``: the evaluator folds the items with the program's function."""

    kind = "the function functools.reduce"


def _partial(fn: Any, *args: Any, **kwargs: Any) -> Partial:
    return Partial(fn, args, kwargs)


def functools_members() -> dict[str, Any]:
    """``functools``: ``partial`` and ``reduce``."""
    return {"partial": _named(_partial, "functools", "partial"), "reduce": Reduce()}


# -- tqdm -----------------------------------------------------------------------------------


class ProgressBar(Checked):
    """``tqdm(loader)``: the same items, and a bar that draws nothing (a recording has no terminal).

    A loop goes through what it wraps (``inner``), as the evaluator goes through that."""

    kind = "a tqdm progress bar"
    METHODS = ("set_description", "set_postfix", "set_postfix_str", "update", "close", "refresh", "write")

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def method(self, name: str) -> Callable[..., Any]:
        if name not in self.METHODS:
            raise KeyError(name)
        if name == "write":
            return lambda text, *args, **kwargs: PrintedText(print_text(text))
        return _ignore

    def members(self) -> list[str]:
        return list(self.METHODS)

    def __iter__(self) -> Iterator[Any]:
        """``enumerate(tqdm(loader))``: the items of what it wraps."""
        return iter(self.inner)

    def __len__(self) -> int:
        return len(self.inner)


def _tqdm(iterable: Any = None, *args: Any, **settings: Any) -> ProgressBar:
    return ProgressBar([] if iterable is None else iterable)


def _trange(*bounds: Any, **settings: Any) -> ProgressBar:
    return ProgressBar(range(*bounds))


def tqdm_members() -> dict[str, Any]:
    """``tqdm``: ``tqdm`` and ``trange``, the items as they are (``tqdm.auto`` and ``tqdm.notebook`` too)."""
    fns = {"tqdm": _named(_tqdm, "tqdm", "tqdm"), "trange": _named(_trange, "tqdm", "trange")}
    return fns


# -- typing ---------------------------------------------------------------------------------


class TypingName(Checked):
    """A name from ``typing`` (``List``, ``Optional``) or a setting's name (an argparse formatter):
    held and passed on, never called."""

    def __init__(self, name: str, module: str = "typing") -> None:
        self.kind = f"{module}.{name}"

    def __repr__(self) -> str:
        return self.kind


_TYPING = "Any List Dict Tuple Set Optional Union Callable Iterable Iterator Sequence Mapping Type"


def typing_members() -> dict[str, Any]:
    """``typing``: the names annotations use."""
    return {name: TypingName(name) for name in _TYPING.split()}

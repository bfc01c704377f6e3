"""to_toml writes text that tomllib (and our parser) read back unchanged."""

from __future__ import annotations

from dataclasses import replace

import pytest
import tomllib
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.language.whitelist import build_namespaces
from app.core.loading import builtin_names, check_program, load_builtin, parse_program
from app.core.model.errors import ProgramError
from app.core.model.program import Program
from app.core.toml_writer import WRAP_AT, to_toml, toml_key, toml_string

# Any text a UTF-8 file can hold: every code point except lone surrogates.
ANY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=300)
TRICKY = [
    "",
    "'",
    '"',
    "'''",
    '"""',
    "a'''b\"\"\"c",
    "ends with a quote'",
    'ends with a quote"',
    "back\\slash",
    "\\",
    "line\\\ncontinued",
    "\n",
    "\n\nleading newlines",
    "trailing newlines\n\n",
    "tab\there",
    "cr\r\nlf",
    "nul\x00del\x7f",
    "unicode: μ ∂ 🎓 中文 \u00a0nbsp",
    "x" * 500,
    "word " * 100,
    "word  " * 60 + "  trailing spaces  ",
    "\\ " * 80,
]


def _load_value(text: str, wrap: bool) -> str:
    value = tomllib.loads(f"v = {toml_string(text, wrap=wrap)}\n")["v"]
    assert isinstance(value, str)
    return value


@pytest.mark.parametrize("text", TRICKY)
@pytest.mark.parametrize("wrap", [True, False])
def test_tricky_strings_round_trip(text: str, wrap: bool) -> None:
    assert _load_value(text, wrap) == text


@given(ANY_TEXT, st.booleans())
def test_any_string_round_trips(text: str, wrap: bool) -> None:
    assert _load_value(text, wrap) == text


@given(ANY_TEXT)
def test_any_key_round_trips(key: str) -> None:
    assert list(tomllib.loads(f"{toml_key(key)} = 1\n")) == [key]


def test_lone_surrogate_is_refused() -> None:
    with pytest.raises(ValueError, match="surrogate"):
        toml_string("bad \ud800 text")


def test_long_prose_is_wrapped_and_short_text_is_not() -> None:
    prose = "Two losses share y = x.square() and the first backward keeps the saved values. " * 3
    written = toml_string(prose)
    assert written.count("\\\n") >= 2
    assert all(len(line) <= WRAP_AT + 20 for line in written.splitlines())
    assert "\n" not in toml_string("short text")


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_round_trips(name: str) -> None:
    program = load_builtin(name)
    text = to_toml(program)
    assert parse_program(text, name=program.name) == program
    assert text.splitlines()[-1] == '"""' and "\n[program]\ncode = " in text
    if program.twin:
        assert f"twin = {toml_string(program.twin)}" in text


def test_code_with_backslashes_and_quotes_is_written_literally() -> None:
    code = 'y = x.square()  # a "quoted" \\ comment\nz = y * 2\n'
    program = load_builtin("two-losses").with_code("import torch\nx = torch.ones(2)\n" + code)
    text = to_toml(program)
    assert "code = '''\nimport torch\nx = torch.ones(2)\n" + code + "'''" in text
    assert parse_program(text, name=program.name) == program


def test_optional_fields_are_omitted_and_a_bare_program_is_only_code() -> None:
    program = Program("import torch\nx = torch.ones(2)")
    text = to_toml(program)
    assert text == '[program]\ncode = """\nimport torch\nx = torch.ones(2)"""\n'
    assert parse_program(text) == program
    titled = replace(program, title="Ones", notes="")
    assert "notes" not in to_toml(titled) and "summary" not in to_toml(titled)
    assert parse_program(to_toml(titled)) == titled


def test_code_that_cannot_be_stored_is_refused() -> None:
    with pytest.raises(ValueError, match="surrogate"):
        to_toml(Program("x = 1  # \ud800\n"))


# -- hypothesis-generated valid programs ---------------------------------------------

RESERVED = set(build_namespaces())
IDENT = st.from_regex(r"\A[a-z][a-z0-9_]{0,6}\Z").filter(lambda n: n not in RESERVED)
COMMENT = st.text(
    st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"], exclude_characters="\x85"), max_size=40
)
PROSE = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)
SHAPES = ["x.square()", "x * 2", "x.sin()", "x.exp()", "x + x", "x.pow(3)"]
CALLS = ["{loss}.backward({options})", "{bind}torch.autograd.grad({loss}, [{leaf}]{comma}{options})"]


@st.composite
def programs(draw: st.DrawFn) -> Program:
    leaves = draw(st.lists(IDENT, min_size=1, max_size=3, unique=True))
    lines = ["import torch", draw(st.sampled_from(["", "# " + draw(COMMENT)]))]
    for leaf in leaves:
        values = draw(st.lists(st.integers(-9, 9), min_size=1, max_size=3))
        lines.append(
            f"{leaf} = torch.tensor({values}, dtype=torch.float32, requires_grad=True)" + _comment(draw)
        )
    names = draw(st.lists(IDENT.filter(lambda n: n not in leaves), min_size=1, max_size=3, unique=True))
    for name in names:
        shape = draw(st.sampled_from(SHAPES)).replace("x", draw(st.sampled_from(leaves)))
        lines.append(f"{name} = {shape}" + _comment(draw))
    for index in range(draw(st.integers(1, 3))):
        lines.append(_draw_call(draw, names, leaves, index))
    code = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return Program(
        code,
        name=draw(st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,20}\Z")),
        title=draw(PROSE),
        summary=draw(PROSE),
        notes=draw(PROSE),
        twin=draw(st.sampled_from(["", "two-losses"])),
    )


def _comment(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["", "  # " + draw(COMMENT)]))


def _draw_call(draw: st.DrawFn, names: list[str], leaves: list[str], index: int) -> str:
    loss = f"{draw(st.sampled_from(names))}.sum()"
    options = ", ".join(
        option
        for option in (
            draw(st.sampled_from(["", "retain_graph=True", "retain_graph=False"])),
            draw(st.sampled_from(["", "create_graph=True"])),
        )
        if option
    )
    template = draw(st.sampled_from(CALLS))
    return template.format(
        loss=loss,
        options=options,
        leaf=draw(st.sampled_from(leaves)),
        comma=", " if options else "",
        bind=draw(st.sampled_from(["", f"g{index} = "])),
    ) + _comment(draw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_round_trip(program: Program) -> None:
    try:
        check_program(program)
    except ProgramError:
        assume(False)  # e.g. a comment character Python's tokenizer refuses
    text = to_toml(program)
    assert parse_program(text, name=program.name) == program
    assert parse_program(text.encode("utf-8"), name=program.name) == program

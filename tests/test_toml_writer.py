"""to_toml writes text that tomllib (and our parser) read back unchanged."""

from __future__ import annotations

from dataclasses import replace

import pytest
import tomllib
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.language.whitelist import build_namespaces
from app.core.loading import Call, Scenario, builtin_names, check_scenario, load_builtin, parse_scenario
from app.core.model.errors import ScenarioError
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
    scenario = load_builtin(name)
    assert parse_scenario(to_toml(scenario)) == scenario


def test_code_with_backslashes_and_quotes_is_written_literally() -> None:
    code = 'y = x.square()  # a "quoted" \\ comment\nz = y * 2\n'
    scenario = replace(load_builtin("two-losses"), forward=code)
    text = to_toml(scenario)
    assert "code = '''\n" + code + "'''" in text
    assert parse_scenario(text) == scenario


def test_optional_fields_are_omitted_and_defaults_survive() -> None:
    scenario = replace(load_builtin("summed-loss"), notes="")
    text = to_toml(scenario)
    assert "notes" not in text
    assert "retain_graph" not in text and "create_graph" not in text
    assert parse_scenario(text).calls[0] == Call("backward", "y.sum() + (y * 3).sum()")


# -- hypothesis-generated valid scenarios -------------------------------------------

RESERVED = set(build_namespaces())
IDENT = st.from_regex(r"\A[a-z][a-z0-9_]{0,6}\Z").filter(lambda n: n not in RESERVED)
COMMENT = st.text(
    st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"], exclude_characters="\x85"), max_size=40
)
PROSE = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)
SHAPES = ["x.square()", "x * 2", "x.sin()", "x.exp()", "x + x", "x.pow(3)"]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    leaves = draw(st.lists(IDENT, min_size=1, max_size=3, unique=True))
    inputs = tuple(
        (
            leaf,
            f"torch.tensor({draw(st.lists(st.integers(-9, 9), min_size=1, max_size=3))}, "
            f"dtype=torch.float32, requires_grad=True)" + _comment(draw),
        )
        for leaf in leaves
    )
    names = draw(st.lists(IDENT.filter(lambda n: n not in leaves), min_size=1, max_size=3, unique=True))
    lines = [draw(st.sampled_from(["", "# " + draw(COMMENT)]))]
    for name in names:
        shape = draw(st.sampled_from(SHAPES)).replace("x", draw(st.sampled_from(leaves)))
        lines.append(f"{name} = {shape}" + _comment(draw))
    forward = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    calls = tuple(_draw_call(draw, names, leaves, index) for index in range(draw(st.integers(1, 3))))
    return Scenario(
        name=draw(st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,20}\Z")),
        title=draw(PROSE),
        summary=draw(PROSE),
        notes=draw(PROSE),
        inputs=inputs,
        forward=forward,
        calls=calls,
    )


def _comment(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["", "  # " + draw(COMMENT)]))


def _draw_call(draw: st.DrawFn, names: list[str], leaves: list[str], index: int) -> Call:
    loss = f"{draw(st.sampled_from(names))}.sum()" + _comment(draw)
    retain = draw(st.sampled_from([None, True, False]))
    create = draw(st.booleans())
    if draw(st.booleans()):
        return Call("backward", loss, retain, create)
    inputs = tuple(draw(st.lists(st.sampled_from(leaves), min_size=1, unique=True)))
    bind = draw(st.sampled_from([None, f"g{index}_bound"]))
    return Call("grad", loss, retain, create, inputs, bind)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_generated_scenarios_round_trip(scenario: Scenario) -> None:
    try:
        check_scenario(scenario)
    except ScenarioError:
        assume(False)  # e.g. a comment character Python's tokenizer refuses
    assert parse_scenario(to_toml(scenario)) == scenario
    assert parse_scenario(to_toml(scenario).encode("utf-8")) == scenario

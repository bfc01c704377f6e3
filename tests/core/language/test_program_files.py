"""Program files that are not programs: each refusal names the field (and where known the line
and column) and says what to do; the built-ins all load.

A file is a program: TOML with a ``[program]`` table (only ``code`` required) or a plain
``.py`` file. Files of the older fixed shape (``[inputs]``, ``[forward]``, ``[[calls]]``) are
checked field by field as before and load as the same program text a learner would write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app.core import ProgramError, builtin_names, load_builtin, load_program, parse_program
from app.core.loading import (
    MAX_CALLS,
    MAX_FILE_BYTES,
    MAX_INPUTS,
    PROGRAM_TOP_FIELDS,
    TOP_FIELDS,
    load_file,
    parse_python,
)

GOOD = """\
name = "ok"
title = "A good program"
summary = "Used as the base of every broken one."
[inputs]
x = "torch.tensor([1., 2.], requires_grad=True)"
[forward]
code = "y = x.square()"
[[calls]]
kind = "backward"
loss = "y.sum()"
"""


def refused(raw: bytes | str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        parse_program(raw)
    return info.value


def where(err: ProgramError) -> tuple[str | None, int | None, int | None]:
    return err.field, err.line, err.col


def test_the_base_file_loads_as_the_program_a_learner_would_write() -> None:
    program = parse_program(GOOD)
    assert (program.name, program.title, program.summary) == (
        "ok",
        "A good program",
        "Used as the base of every broken one.",
    )
    assert program.code == (
        "import torch\n\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.square()\ny.sum().backward()\n"
    )


def test_older_calls_become_python_with_their_keywords() -> None:
    calls = (
        '[[calls]]\nloss = "y.sum()"\nretain_graph = true\n'
        '[[calls]]\nloss = "y * 3"\ninputs = ["x"]\nretain_graph = false\n'
        '[[calls]]\nkind = "grad"\nloss = "y.sum()"\ninputs = ["x"]\ncreate_graph = true\nbind = "g"\n'
        '[[calls]]\nkind = "grad"\nloss = "g.sum()"\ninputs = ["x"]\n'
    )
    program = parse_program(GOOD.split("[[calls]]", maxsplit=1)[0] + calls)
    assert program.lines[-4:] == [
        "y.sum().backward(retain_graph=True)",
        "(y * 3).backward(inputs=[x], retain_graph=False)",
        "g = torch.autograd.grad(y.sum(), [x], create_graph=True)[0]",
        "torch.autograd.grad(g.sum(), [x])",
    ]


PROGRAM = (
    '[program]\ncode = """\nimport torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"""\n'
)


def test_a_program_file_needs_only_its_code() -> None:
    program = parse_program(PROGRAM, name="pasted")
    assert (program.name, program.title, program.summary, program.notes, program.twin) == (
        "pasted",
        "",
        "",
        "",
        "",
    )
    assert program.lines == ["import torch", "x = torch.ones(2, requires_grad=True)", "x.sum().backward()"]
    full = 'name = "mine"\ntitle = "T"\nsummary = "S"\nnotes = "N"\ntwin = "two-losses"\n' + PROGRAM
    program = parse_program(full)
    assert (program.name, program.title, program.summary, program.notes, program.twin) == (
        "mine",
        "T",
        "S",
        "N",
        "two-losses",
    )


PROGRAM_REFUSALS = [
    ("code missing", "[program]\n", ("program.code", None, None), "missing field 'code'"),
    (
        "code a number",
        "[program]\ncode = 3\n",
        ("program.code", None, None),
        "must be text in quotes, not a number",
    ),
    ("program as text", 'program = "x = 1"\n', ("program", None, None), "write [program] and then code ="),
    ("nothing at all", "", ("program", None, None), "write [program] and then code ="),
    (
        "a typo in program",
        '[program]\ncod = "x"\n',
        ("program.cod", None, None),
        "unknown field 'cod' (did you mean 'code'?)",
    ),
    (
        "a typo at the top",
        'titel = "a"\n' + PROGRAM,
        ("titel", None, None),
        "unknown field 'titel' (did you mean 'title'?)",
    ),
    ("both shapes", GOOD + PROGRAM, ("inputs", None, None), "either a [program] table or the older"),
    ("a bad name", 'name = "../x"\n' + PROGRAM, ("name", None, None), "use up to 100 letters, digits"),
    ("a twin not text", "twin = 3\n" + PROGRAM, ("twin", None, None), "must be text in quotes, not a number"),
    (
        "not Python",
        '[program]\ncode = "x = (1,"\n',
        ("program", 1, 5),
        "this is not valid Python: '(' was never closed",
    ),
    (
        "def",
        '[program]\ncode = """\nx = 1\ndef __f():\n    pass\n"""\n',
        ("program", 2, 1),
        "name '__f' is private",
    ),
    (
        "class",
        '[program]\ncode = """\nclass A(metaclass=B):\n    pass\n"""\n',
        ("program", 1, 9),
        "a class takes its bases only, no keywords such as metaclass=",
    ),
    (
        "while",
        '[program]\ncode = """\nwhile True:\n    yield 1\n"""\n',
        ("program", 2, 5),
        "'yield' outside function",
    ),
    (
        "import subprocess",
        '[program]\ncode = "import subprocess"\n',
        ("program", 1, 1),
        "'subprocess' cannot be imported",
    ),
    (
        "decorator",
        '[program]\ncode = """\n@property\ndef f():\n    pass\n"""\n',
        ("program", 1, 2),
        "the decorators programs take are @staticmethod",
    ),
    ("nonlocal", '[program]\ncode = "nonlocal x"\n', ("program", 1, 1), "nonlocal declaration not allowed"),
]


@pytest.mark.parametrize(
    ("id", "text", "at", "words"), PROGRAM_REFUSALS, ids=[r[0] for r in PROGRAM_REFUSALS]
)
def test_a_broken_program_file(
    id: str, text: str, at: tuple[str, int | None, int | None], words: str
) -> None:
    err = refused(text)
    assert where(err) == at
    assert words in err.message


@pytest.mark.parametrize("id", ["decorator", "import subprocess"])
def test_refusals_of_full_python_say_how_to_record_trusted_code(id: str) -> None:
    text = next(r[1] for r in PROGRAM_REFUSALS if r[0] == id)
    message = refused(text).message
    assert message.endswith(
        "to record a script of your own with full Python, run: python -m app run SCRIPT.py"
    )
    assert "will be run" not in message


def test_a_python_file_is_a_program(tmp_path: Path) -> None:
    path = tmp_path / "my lesson.py"
    path.write_text(
        "# Squares twice\nimport torch\nx = torch.ones(2, requires_grad=True)\n", encoding="utf-8"
    )
    program = load_program(path)
    assert (program.name, program.title, program.path) == ("my-lesson", "Squares twice", path)
    assert program.code == path.read_text(encoding="utf-8")
    assert load_program(str(path)) == program
    assert parse_python("import torch\n", name="demo").title == "demo"  # no comment: the file name


def test_a_python_file_with_refused_code_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("import torch\nx = torch.ones(2)\ny = lambda v: v.__class__\n", encoding="utf-8")
    with pytest.raises(ProgramError) as info:
        load_program(path)
    assert where(info.value) == ("program", 3, 15)
    assert info.value.message.startswith("attribute '__class__' is private")


def test_a_python_file_that_is_not_utf8_or_too_big(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(b"x = 1\n# caf\xe9\n")
    with pytest.raises(ProgramError) as info:
        load_program(path)
    assert where(info.value) == ("file", 2, 6)
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ProgramError) as info:
        load_program(big)
    assert where(info.value) == ("file", None, None)
    assert "1,000,001 bytes" in info.value.message


def test_a_program_file_unknown_field_lists_the_program_fields() -> None:
    err = refused("zzz = 1\n" + PROGRAM)
    assert err.message == f"unknown field 'zzz'; known fields: {', '.join(PROGRAM_TOP_FIELDS)}"


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_loads_and_loads_by_name_too(name: str) -> None:
    program = load_builtin(name)
    assert program.name == name and program.title and program.summary
    assert program.path is not None and program.path.name == f"{name}.toml"
    assert load_program(name) == program == load_program(name)


def test_there_are_builtins() -> None:
    assert {"two-losses", "forgot-retain"} <= set(builtin_names())


# -- not TOML, not UTF-8, too big -----------------------------------------------------


def test_not_toml_names_the_line_and_column() -> None:
    err = refused('name = "a"\ntitle = \n')
    assert where(err) == ("file", 2, 9)
    assert err.message.startswith("this is not valid TOML: ")


def test_a_python_file_is_not_toml() -> None:
    err = refused("import torch\nx = torch.ones(2)\n")
    assert where(err) == ("file", 1, 8)
    assert "not valid TOML" in err.message


def test_not_utf8_names_the_line_and_column_of_the_bad_byte() -> None:
    err = refused(b'name = "a"\ntitle = "caf\xe9"\n')
    assert where(err) == ("file", 2, 13)
    assert err.message == "the file is not UTF-8 text: byte 0xe9 cannot start a character here"


def test_utf16_with_a_byte_order_mark_is_not_utf8() -> None:
    err = refused(GOOD.encode("utf-16"))
    assert where(err) == ("file", 1, 1)
    assert "byte 0xff" in err.message


def test_over_a_megabyte_as_bytes_or_text() -> None:
    big = GOOD + "#" * MAX_FILE_BYTES
    for raw in (big, big.encode()):
        err = refused(raw)
        assert where(err) == ("file", None, None)
        assert err.message == (
            f"the file is {len(big.encode()):,} bytes; program files are limited to 1,000,000 bytes (1 MB)"
        )


def test_a_file_over_a_megabyte_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    monkeypatch.setattr(Path, "open", lambda *a, **k: pytest.fail("opened a file over the limit"))
    with pytest.raises(ProgramError) as info:
        load_file(path)
    assert where(info.value) == ("file", None, None)
    assert "1,000,001 bytes" in info.value.message


def test_deeply_nested_toml_is_refused_not_a_recursion_error() -> None:
    err = refused("a = " + "[" * 5000 + "]" * 5000)
    assert where(err) == ("file", None, None)
    assert err.message == "this file nests arrays or tables too deeply"


# -- files that are not files -------------------------------------------------------


def test_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "lesson.toml"
    folder.mkdir()
    with pytest.raises(ProgramError) as info:
        load_program(folder)
    assert where(info.value) == ("file", None, None)
    assert info.value.message == f"{folder} is a folder, not a program file"


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProgramError) as info:
        load_program(tmp_path / "missing.toml")
    assert where(info.value) == ("file", None, None)
    assert info.value.message.endswith("missing.toml: No such file or directory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a short path, whole in the message (a long one is cut)
    pipe = Path("pipe.toml")
    os.mkfifo(pipe)
    with pytest.raises(ProgramError) as info:
        load_file(pipe)
    assert info.value.message == f"{pipe} is not a regular file"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_device_is_refused_without_reading() -> None:
    with pytest.raises(ProgramError) as info:
        load_file(Path("/dev/zero"))
    assert info.value.message == "/dev/zero is not a regular file"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_an_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.toml"
    path.write_text(GOOD)
    path.chmod(0)
    with pytest.raises(ProgramError) as info:
        load_file(path)
    assert info.value.message.endswith("secret.toml: Permission denied")


def test_an_unknown_builtin_name_lists_the_known_ones() -> None:
    with pytest.raises(ProgramError) as info:
        load_program("two-loses")
    assert info.value.message.startswith("no built-in program 'two-loses' (did you mean 'two-losses'?)")


# -- fields: missing, unknown, wrong types ----------------------------------------------


def edited(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize("field", ["name", "title", "summary"])
def test_a_missing_field(field: str) -> None:
    text = "\n".join(line for line in GOOD.splitlines() if not line.startswith(f"{field} ="))
    err = refused(text)
    assert where(err) == (field, None, None)
    assert err.message == f"missing field '{field}'"


UNKNOWN = [
    ("titel", "title = ", "titel = ", "titel", "title"),
    (
        "retian_graph",
        'kind = "backward"',
        'kind = "backward"\nretian_graph = true',
        "calls[0].retian_graph",
        "retain_graph",
    ),
    (
        "create_grpah",
        'kind = "backward"',
        'kind = "backward"\ncreate_grpah = true',
        "calls[0].create_grpah",
        "create_graph",
    ),
    ("cod", 'code = "y', 'cod = "y', "forward.cod", "code"),
    ("inputz", 'kind = "backward"', 'kind = "backward"\ninputz = ["x"]', "calls[0].inputz", "inputs"),
    ("lost", 'loss = "y.sum()"', 'loss = "y.sum()"\nlost = "y"', "calls[0].lost", "loss"),
]


@pytest.mark.parametrize(("key", "old", "new", "field", "close"), UNKNOWN, ids=[u[0] for u in UNKNOWN])
def test_an_unknown_field_names_it_and_suggests_the_closest(
    key: str, old: str, new: str, field: str, close: str
) -> None:
    err = refused(edited(old, new))
    assert where(err) == (field, None, None)
    assert err.message.startswith(f"unknown field '{key}' (did you mean '{close}'?); known fields: ")


def test_an_unknown_field_with_nothing_close_lists_the_known_ones() -> None:
    err = refused("zzz = 1\n" + GOOD)
    assert err.message == f"unknown field 'zzz'; known fields: {', '.join(TOP_FIELDS)}"


def test_an_unknown_field_with_control_characters_is_shown_escaped_and_short() -> None:
    err = refused('"\\u001b[31mred' + "x" * 100 + '" = 1\n' + GOOD)
    assert err.field is not None and "\x1b" not in err.field and "\x1b" not in err.message
    assert err.field.startswith("\\x1b[31mred") and err.field.endswith("…") and len(err.field) == 40


WRONG_TYPES = [
    ("name", 'name = "ok"', "name = 3", "name", "must be text in quotes, not a number"),
    ("title", 'title = "A good program"', "title = [1]", "title", "must be text in quotes, not a list"),
    ("name chars", 'name = "ok"', 'name = "../etc"', "name", "use up to 100 letters, digits"),
    (
        "input expr",
        'x = "torch',
        'x = 3\ny = "torch',
        "inputs.x",
        "must be an expression in quotes, not a number",
    ),
    (
        "input name",
        'x = "torch',
        '"__class__" = "torch',
        "inputs.__class__",
        "'__class__' is not a plain name",
    ),
    (
        "input builtin",
        'x = "torch',
        'torch = "torch',
        "inputs.torch",
        "'torch' is a built-in name and cannot be reused",
    ),
    (
        "retain",
        'loss = "y.sum()"',
        'loss = "y.sum()"\nretain_graph = "yes"',
        "calls[0].retain_graph",
        "must be true or false, not a",
    ),
    (
        "create",
        'loss = "y.sum()"',
        'loss = "y.sum()"\ncreate_graph = 1',
        "calls[0].create_graph",
        "must be true or false, not a number",
    ),
    ("loss", 'loss = "y.sum()"', "loss = 1.5", "calls[0].loss", "must be text in quotes, not a number"),
    (
        "call inputs",
        'loss = "y.sum()"',
        'loss = "y.sum()"\ninputs = "x"',
        "calls[0].inputs",
        "must be a list of names",
    ),
    (
        "call input name",
        'loss = "y.sum()"',
        'loss = "y.sum()"\ninputs = [1]',
        "calls[0].inputs",
        "'1' is not a plain name",
    ),
    (
        "bind name",
        'kind = "backward"',
        'kind = "grad"\ninputs = ["x"]\nbind = "a b"',
        "calls[0].bind",
        "'a b' is not a plain name",
    ),
]


@pytest.mark.parametrize(("id", "old", "new", "field", "words"), WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_a_field_of_the_wrong_type(id: str, old: str, new: str, field: str, words: str) -> None:
    err = refused(edited(old, new))
    assert where(err) == (field, None, None)
    assert words in err.message


def test_forward_written_as_text_instead_of_a_table() -> None:
    err = refused('forward = "y = x.square()"\n' + GOOD.replace('[forward]\ncode = "y = x.square()"\n', ""))
    assert where(err) == ("forward", None, None)
    assert err.message == 'must be a table: write [forward] and then code = """..."""'


def test_inputs_missing_empty_or_not_a_table() -> None:
    without = GOOD.replace('[inputs]\nx = "torch.tensor([1., 2.], requires_grad=True)"\n', "")
    for text in (without, without.replace("[forward]", "[inputs]\n[forward]")):
        err = refused(text)
        assert where(err) == ("inputs", None, None)
        assert err.message.startswith("add at least one input under [inputs]")
    err = refused('inputs = "x"\n' + without)
    assert err.message.startswith("must be a table: write [inputs]")


def test_empty_calls() -> None:
    no_calls = GOOD.split("[[calls]]", maxsplit=1)[0]
    err = refused(no_calls)
    assert where(err) == ("calls", None, None)
    assert err.message == "add at least one [[calls]] table"
    err = refused("calls = []\n" + no_calls)
    assert err.message == "add at least one [[calls]] table"
    err = refused(no_calls.replace("[inputs]", 'calls = "y.sum()"\n[inputs]'))
    assert err.message == "write each call as a [[calls]] table"


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ('"backwards"', "kind must be 'backward' or 'grad', not 'backwards' (did you mean 'backward'?)"),
        ('"jacobian"', "kind must be 'backward' or 'grad', not 'jacobian'"),
        ("3", "kind must be 'backward' or 'grad', not '3'"),
    ],
)
def test_a_bad_kind(kind: str, message: str) -> None:
    err = refused(edited('kind = "backward"', f"kind = {kind}"))
    assert where(err) == ("calls[0].kind", None, None)
    assert err.message == message


def test_grad_without_inputs() -> None:
    err = refused(edited('kind = "backward"', 'kind = "grad"'))
    assert where(err) == ("calls[0].inputs", None, None)
    assert err.message == 'a grad call needs inputs, e.g. inputs = ["x"]'


def test_bind_on_a_backward_call() -> None:
    err = refused(edited('kind = "backward"', 'kind = "backward"\nbind = "g"'))
    assert where(err) == ("calls[0].bind", None, None)
    assert err.message == "only a grad call returns a value to bind"


def test_an_empty_loss() -> None:
    err = refused(edited('loss = "y.sum()"', 'loss = "  "'))
    assert where(err) == ("calls[0].loss", 1, 1)
    assert err.message == "this is empty: write an expression, e.g. y.sum()"


def test_too_many_calls_and_inputs() -> None:
    calls = '[[calls]]\nloss = "y.sum()"\nretain_graph = true\n' * (MAX_CALLS + 1)
    err = refused(GOOD.split("[[calls]]", maxsplit=1)[0] + calls)
    assert (where(err), err.message) == (("calls", None, None), f"a program has at most {MAX_CALLS} calls")
    inputs = "".join(f'x{i} = "torch.ones(1)"\n' for i in range(MAX_INPUTS + 1))
    err = refused(edited("[inputs]\n", "[inputs]\n" + inputs))
    assert (where(err), err.message) == (
        ("inputs", None, None),
        f"a program has at most {MAX_INPUTS} inputs",
    )


def test_an_expression_error_in_a_multiline_forward_names_the_line_inside_it() -> None:
    err = refused(edited('code = "y = x.square()"', 'code = """\ny = x.square()\nz = y.__dict__\n"""'))
    assert where(err) == ("forward.code", 2, 5)
    assert "attribute '__dict__' is private" in err.message


def test_error_text_is_one_line() -> None:
    for raw in (b"\xff", "a = [" * 3, edited('kind = "backward"', 'kind = "back\\nward"')):
        err = refused(raw)
        assert "\n" not in str(err) and re.match(r"^[^:]+: ", str(err))

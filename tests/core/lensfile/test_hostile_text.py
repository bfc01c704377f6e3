"""Text from a stranger cannot stall the window's process.

A program's text reaches the parent in a recording (a ``.lens`` file is safe to
open). Every function that reads or edits such text finishes in linear time on
long runs of spaces, tabs, commas and comment characters: each call gets a
generous deadline in a forked process that is killed past it (a backtracking
pattern holds the interpreter, so no thread could stop it; the pattern these
tests replaced took hours on 20,000 spaces). And the window finds a recording's
fixes on a pool thread, while stepping goes on.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt

from app.core.lesson.advice import advice_for
from app.core.lesson.edits import changed_lines, find_call, set_call_keyword
from app.core.lesson.recipes import fixes_for
from app.core.loading import load_builtin, parse_program
from app.core.model.graph import Graph
from app.core.model.program import Call, Program
from app.core.model.recording import Recording
from app.core.model.timeline import Timeline
from app.core.recorder.recorder import record
from app.core.report import to_table
from app.core.terminal import terminal_text
from app.core.toml_writer import toml_string
from app.ui.editor.python_highlighter import token_spans
from app.ui.style.breakable import breakable, breakable_code, code_breaks
from app.ui.style.plain_text import plain_tip
from tests.support.deadline import all_finish

RUN = 200_000  # characters of hostile text per call

# -- hostile text --------------------------------------------------------------------------------


def _repeated(pieces: list[tuple[str, int]]) -> str:
    unit = "".join(char * count for char, count in pieces)
    return (unit * (RUN // len(unit) + 1))[:RUN]


def runs(alphabet: str) -> st.SearchStrategy[str]:
    """``RUN`` characters: a short random pattern of ``alphabet`` repeated (``" \\t "``, ``",#"``)."""
    piece = st.tuples(st.sampled_from(alphabet), st.integers(1, 5))
    return st.lists(piece, min_size=1, max_size=4).map(_repeated)


BLANK = runs(" \t")  # whitespace that keeps a program valid between tokens
ANY = runs(" \t,#")  # anything: in a comment, or text that is no program at all


# -- the edits of a call's keywords ---------------------------------------------------------------


def backward_call(code: str) -> Call:
    """The call ``loss.backward(...)`` of ``code`` spanning lines 1 to 3, as a recording holds it."""
    last = code.splitlines()[2]
    return Call("backward", 1, 1, 3, len(last) + 1, " ".join(code[: code.index(")\n") + 1].split()))


FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


@FUZZ
@given(blank=BLANK, comment=ANY)
def test_keyword_edits_finish_in_linear_time(blank: str, comment: str) -> None:
    shapes = [
        f"loss.backward(\n    retain_graph=True{blank}, create_graph=False,\n)\n",
        f"loss.backward(\n    retain_graph=True{blank},{blank}# {comment}\n)\n",
        f"loss.backward(\n    retain_graph=True  # {comment}\n)\n",
    ]
    calls = []
    for code in shapes:
        call = backward_call(code)
        calls += [
            lambda code=code, call=call: set_call_keyword(code, call, "retain_graph", None),
            lambda code=code, call=call: set_call_keyword(code, call, "create_graph", "True"),
            lambda code=code, call=call: find_call(code, call),
        ]
    assert all_finish(calls) == [True] * len(calls)  # each in time, in one forked process
    removed = set_call_keyword(shapes[0], backward_call(shapes[0]), "retain_graph", None)
    assert removed == "loss.backward(\n    create_graph=False,\n)\n"  # still the edit it was
    alone = set_call_keyword(shapes[2], backward_call(shapes[2]), "retain_graph", None)
    assert alone == "loss.backward(\n)\n"


@FUZZ
@given(old=ANY, new=ANY)
def test_changed_lines_finishes_in_linear_time(old: str, new: str) -> None:
    lines = [old[i : i + 50] for i in range(0, RUN, 50)]
    assert all_finish([
        lambda: changed_lines(old, new),
        lambda: changed_lines("\n".join(lines), "\n".join(reversed(lines))),
        lambda: changed_lines("x = 1\n" * (RUN // 6), "y = 2\n" + "x = 1\n" * (RUN // 6)),
    ]) == [True] * 3  # fmt: skip
    assert changed_lines("a\n" + old + "\nb\n", "a\n" + new + "\nb\n") == (
        [] if old == new else [f"- {old}".rstrip(), f"+ {new}".rstrip()]
    )


# -- fixes and advice of recordings whose text holds long runs -----------------------------------

PADDED = (
    "    loss.backward(\n        retain_graph=True{blank}, create_graph=False,\n    )\n"
    "    opt.step(){blank}# {comment}\n"
)


@pytest.fixture(scope="module")
def hostile_recordings() -> dict[str, Recording]:
    """retain-bandaid with its call over three lines, and logged-loss: recorded once, short."""
    bandaid = load_builtin("retain-bandaid")
    code = bandaid.code.replace(
        "    loss.backward(retain_graph=True)\n    opt.step()\n", PADDED.format(blank=" ", comment="")
    )
    return {
        "retain-bandaid": record(bandaid.with_code(code)),
        "logged-loss": record(load_builtin("logged-loss")),
    }


def _with_code(recording: Recording, code: str) -> Recording:
    return replace(recording, program=recording.program.with_code(code))


@FUZZ
@given(blank=BLANK, comment=ANY)
def test_fixes_and_advice_finish_in_linear_time(
    blank: str, comment: str, hostile_recordings: dict[str, Recording]
) -> None:
    failed = hostile_recordings["retain-bandaid"]
    short = PADDED.format(blank=" ", comment="")
    padded = _with_code(
        failed, failed.program.code.replace(short, PADDED.format(blank=blank, comment=comment))
    )
    logged = hostile_recordings["logged-loss"]
    line = "    total_loss += loss          # the tensor, with its graph\n"
    held = _with_code(
        logged, logged.program.code.replace(line, f"    total_loss += loss{blank}# {comment}\n")
    )
    assert all_finish([lambda: fixes_for(padded), lambda: advice_for(held)]) == [True, True]
    detach = [f for f in fixes_for(padded) if f.title == "h.detach() at the end of each iteration"]
    assert detach and "retain_graph" not in detach[0].code
    advice = advice_for(held)
    assert advice is not None and "total_loss += loss.item()" in advice.fixes[0].code


# -- the window's other text: wrapping, colouring, TOML ------------------------------------------


@FUZZ
@given(text=ANY)
def test_the_windows_text_functions_finish_in_linear_time(text: str) -> None:
    functions = (breakable, breakable_code, code_breaks, token_spans, toml_string)
    calls = [*(lambda call=call: call(text) for call in functions), lambda: parse_program(text)]
    calls.append(lambda: parse_program(f"[program]\ncode = '''{text}'''\n{text}"))
    names = [*(f.__name__ for f in functions), "parse_program", "parse_program of a file"]
    assert dict(zip(names, all_finish(calls), strict=True)) == dict.fromkeys(names, True)


# -- the window: the lesson on a pool thread -----------------------------------------------------

HOSTILE = """import torch

w = torch.ones(3, requires_grad=True)
h = torch.zeros(3)
for i in range(3):
    h = torch.tanh(h * w + 1)
    loss = h.sum()
    loss.backward(
        retain_graph=True{spaces}, create_graph=False,
    )
    with torch.no_grad():
        w -= 0.1 * w.grad
"""


def test_a_window_opening_a_hostile_recording_steps_while_its_fixes_are_found(
    qtbot, tmp_path, monkeypatch
) -> None:
    """A 12-line program whose call holds 20,000 spaces (hours of the old fixes' backtracking),
    opened as a ``.lens``: the fixes are found on a pool thread, held here until the test has
    stepped through the whole recording, then shown."""
    from app.core.lensfile import save_lens
    from app.core.lesson import recipes  # the error panel imports fixes_for from it as it finds them
    from app.ui.runtime.settings import AppSettings
    from app.ui.window.main_window import MainWindow

    recording = record(Program(HOSTILE.format(spaces=" " * 20_000), name="hostile"))
    assert recording.failed is not None and len(recording.program.code.splitlines()) == 12
    path = tmp_path / "hostile.lens"
    save_lens(recording, path)
    release, threads = threading.Event(), []
    real = recipes.fixes_for

    def held(rec: Recording, deadline: float | None = None) -> list:
        threads.append(threading.current_thread())
        release.wait(10)  # on the GUI thread this would freeze the window, and the test would see it
        return real(rec, deadline)

    monkeypatch.setattr(recipes, "fixes_for", held)
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")), path)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=30_000):
        window.start()
    qtbot.waitUntil(window.error_panel.prove_button.isVisible, timeout=10_000)  # a .lens: on request
    window.error_panel.prove_button.click()
    qtbot.waitUntil(lambda: bool(threads), timeout=10_000)
    session = window.session
    for index in range(session.last_index + 1):  # the lesson is still being found meanwhile
        session.go_to(index)
        assert session.index == index
    assert not window.error_panel.isHidden() and window.error_panel.fixes == []
    with qtbot.waitSignal(window.error_panel.lesson_shown, timeout=60_000):  # each fix recorded
        release.set()
    assert threads == [t for t in threads if t is not threading.main_thread()]
    titles = [f.title for f in window.error_panel.fixes]
    assert titles[0] == "h.detach() at the end of each iteration", titles
    shown = window.error_panel.fix_codes[0].text().splitlines()
    assert shown == [
        "- " + recording.program.code.splitlines()[8].rstrip(),
        "+         create_graph=False,",
        "+     h = h.detach()",
        "✓ recorded: no error",  # proven before it is offered
    ]


# -- the terminal: text from a recording never reaches it raw -------------------------------------

CONTROL = st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp"])
ANY_TEXT = st.text(st.one_of(CONTROL, st.characters(codec="utf-8")), max_size=40)


def only_printable(text: str) -> bool:
    return all(line.isprintable() for line in text.split("\n"))


@settings(max_examples=200, deadline=None, database=None)
@given(text=ANY_TEXT)
def test_terminal_text_escapes_exactly_what_is_not_printable(text: str) -> None:
    shown = terminal_text(text)
    assert shown.isprintable()
    assert (shown == text) == text.isprintable()
    assert terminal_text(text, newlines=True).split("\n") == [terminal_text(t) for t in text.split("\n")]
    assert all(c in shown for c in text if c.isprintable())  # every printable character is kept


@pytest.fixture(scope="module")
def forgot_retain_recording() -> Recording:
    return record(load_builtin("forgot-retain"))


@settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=ANY_TEXT, printed=ANY_TEXT, error=ANY_TEXT, name=ANY_TEXT)
def test_the_table_writes_no_control_character(
    forgot_retain_recording: Recording, title: str, printed: str, error: str, name: str
) -> None:
    rec = forgot_retain_recording
    steps = [replace(s, printed=(printed,), error=s.error and error + s.error) for s in rec.timeline.steps]
    nodes = [replace(n, name=name + n.name) for n in rec.graph.nodes]
    hostile = replace(
        rec,
        program=replace(rec.program, title=title, name=name or "program"),
        timeline=Timeline(tuple(steps)),
        graph=Graph(tuple(nodes), rec.graph.edges),
        error=error or None,
    )
    table = to_table(hostile)
    assert only_printable(table)
    first = printed.split("\n", maxsplit=1)[0]  # a printed line break starts the row's next line
    assert " " * 12 + f"printed: {terminal_text(first)}" in table.split("\n")


def test_trace_of_a_program_that_prints_escapes_writes_them_escaped(tmp_path, capsys) -> None:
    """A title and a print holding ESC, BEL and a C1 control: stdout shows them as escapes. The
    command runs in this process (a new one spent its time importing torch): what it prints to
    stdout is captured as a pipe would take it."""
    from app.cli import main

    script = tmp_path / "escapes.py"
    script.write_text(
        "# Title \x1b]0;renamed\x07 here\nimport torch\n"
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        'print("\\x1b[2J\\x07bell\\x9b")\n'
        "y = x.square()\ny.sum().backward()\ny.sum().backward()\n",
        encoding="utf-8",
    )
    capsys.readouterr()
    code = main(["trace", "--in-process", str(script)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert only_printable(out)
    assert "Title \\x1b]0;renamed\\x07 here" in out.splitlines()
    assert "printed: \\x1b[2J\\x07bell\\x9b" in out


# -- the window: a recording's text is never read as HTML ----------------------------------------

TAGGED = "# <b>bold</b> title\nimport torch\nx = torch.tensor([1., 2.], requires_grad=True)\n"
TAGGED += "print(\"<img src='missing.png'>\")\ny = x.square()\ny.sum().backward()\ny.sum().backward()\n"
TAGS = ("<b>bold", "<i>", "<h1>", "<img")  # the legend's own <b> is rich text on purpose


def test_a_recordings_tags_show_as_text_in_every_label(qtbot, tmp_path) -> None:
    """A ``.lens`` whose title, summary, node names and printed text hold HTML tags: every label
    that shows any of them at any step shows it as plain text."""
    from PySide6.QtWidgets import QLabel

    from app.core.lensfile import save_lens
    from app.ui.runtime.settings import AppSettings
    from app.ui.window.main_window import MainWindow

    rec = record(Program(TAGGED, name="tagged", title="<b>bold</b> title"))
    nodes = tuple(replace(n, name=f"<i>{n.name}</i>") for n in rec.graph.nodes)
    program = replace(rec.program, summary="<h1>summary</h1>")
    path = tmp_path / "tagged.lens"
    save_lens(replace(rec, graph=Graph(nodes, rec.graph.edges), program=program), path)
    window = MainWindow(AppSettings(str(tmp_path / "settings.ini")), path)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.session.recording_applied, timeout=30_000):
        window.start()
    shown: set[str] = set()
    for index in range(window.session.last_index + 1):
        window.session.go_to(index)
        for label in window.findChildren(QLabel):
            if any(tag in label.text() for tag in TAGS):
                shown.add(label.objectName() or type(label).__name__)
                assert label.textFormat() == Qt.TextFormat.PlainText, (label.objectName(), label.text())
    assert {"programSummary", "errorTitle", "nodeTitle", "CaptionBar"} <= shown, shown


@settings(max_examples=100, deadline=None, database=None)
@given(text=st.text(st.sampled_from("<>/&ab \n'\"=img"), max_size=30).map(lambda t: "<b>" + t))
def test_a_tooltip_shows_its_text_as_written(qapp, text: str) -> None:
    from PySide6.QtGui import QTextDocument

    document = QTextDocument()
    document.setHtml(plain_tip(text))
    assert document.toPlainText() == text

"""The one-file HTML player in a real headless Chromium: every built-in stepped with the keyboard,
the page's DOM checked at each step against ``trace --json``'s own data (its writer, not the
page's), no network request, and hostile recordings kept as text."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from app.core.loading import builtin_names
from app.core.model.graph import Graph
from app.core.model.recording import Recording
from app.core.model.timeline import Timeline
from app.core.trace_json import to_json
from app.render.layout import Layout
from app.render.web import write_player
from app.render.web.steps import GRAD_NUMBERS
from tests.support.json_steps import full_states
from tests.support.recorded import builtin_layout, builtin_recording
from tests.support.web_player_support import OpenPage, browser, open_page, screenshot_dir, wait_until

__all__ = ["browser"]  # the fixture, used by name

HOSTILE = '</script><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>&amp;'


def _recorded(name: str) -> tuple[Recording, Layout]:
    """The built-in's recording and layout, made once per process: both are frozen, and each test
    only reads them (a hostile copy is a new recording)."""
    return builtin_recording(name), builtin_layout(name)


_KEPT: list[Any] = []  # the context of big_tab, open for the whole module


@pytest.fixture(scope="module")
def big_tab(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenPage]:
    """One 1920x1080 page the built-ins' players open in, one after another."""
    blank = tmp_path_factory.mktemp("tab") / "blank.html"
    recording, layout = _recorded("two-losses")
    tab = open_page(browser, write_player(recording, blank, layout), 1920, 1080)
    _KEPT.append(tab.page.context)
    yield tab
    _KEPT.remove(tab.page.context)


@pytest.fixture(autouse=True)
def _pages_closed(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test's own pages closed after it (not big_tab's, whichever test runs first): a page
    left open (one still playing) kept its timers running in the browser through every later test."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            if all(context is not kept for kept in _KEPT):
                context.close()


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [value]


def _expected_nodes(data: dict[str, Any], i: int) -> dict[str, str]:
    """Each node's state at step ``i`` from the JSON alone: not built yet, running or failed (the
    step's own node), gone, ran earlier in this call, or idle."""
    steps, step = data["steps"], data["steps"][i]
    ran = {
        s["node"]
        for s in steps[: i + 1]
        if step["call"] is not None and s["call"] == step["call"] and s["kind"] == "node"
    }
    out = {}
    for node in data["nodes"]:
        nid = node["id"]
        if (node["created_at_step"] or 0) > i:
            out[nid] = "hidden"
        elif step["node"] == nid and step["kind"] in ("node", "error"):
            out[nid] = "running" if step["kind"] == "node" else "failed"
        elif node["gone_at_step"] is not None and node["gone_at_step"] <= i:
            out[nid] = "gone"
        else:
            out[nid] = "done" if nid in ran else "idle"
    return out


def _expected_slot(data: dict[str, Any], full: dict[str, Any], nodes: dict[str, str], key: str) -> str:
    node_id, slot = key.split("/", 1)
    if nodes[node_id] == "hidden":
        return "hidden"
    saved = {s["name"]: s for s in next(n for n in data["nodes"] if n["id"] == node_id)["saved"]}
    if slot not in saved or saved[slot]["kind"] == "value":  # a value, or a node's values in one box
        return "value"
    return str(full["saved_state"].get(node_id, {}).get(slot, "unknown"))


def _error_step(data: dict[str, Any]) -> int | None:
    failed = [c for c in data["calls"] if c["error"] is not None]
    if failed:
        return int(failed[0]["last_step"])
    errors = [s["index"] for s in data["steps"] if s["kind"] == "error"]
    return errors[-1] if errors else None


def _check_step(data: dict[str, Any], full: dict[str, Any], dom: dict[str, Any], i: int) -> None:
    step = data["steps"][i]
    last = len(data["steps"]) - 1
    assert dom["index"] == i
    assert dom["counter"] == f"Step {i} / {last}"
    assert dom["line"] == step["line"]
    assert dom["marked_lines"] == (0 if step["line"] is None else 1)
    assert dom["caption"] == step["caption"]
    nodes = _expected_nodes(data, i)
    assert dom["nodes"] == nodes, f"step {i}"
    for key, shown in dom["slots"].items():
        assert shown == _expected_slot(data, full, nodes, key), f"step {i} slot {key}"
    assert dom["error_shown"] == (i == _error_step(data))
    for leaf, grad in full["grads"].items():
        got = dom["grads"][leaf]
        if grad is None:
            assert got is None, f"step {i} {leaf}.grad"
            continue
        numbers = [float(v) for v in _flat(grad)][:GRAD_NUMBERS]
        shown = [float(v) for v in got["flat"]]
        assert len(shown) == len(numbers) and all(
            a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(shown, numbers, strict=True)
        ), f"step {i} {leaf}.grad"


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_every_step_of_a_builtin_shows_what_trace_json_says(
    big_tab: OpenPage, tmp_path: Path, name: str
) -> None:
    recording, layout = _recorded(name)
    data = to_json(recording)
    full = full_states(data)
    page = big_tab.goto(write_player(recording, tmp_path / "page.html", layout))
    page.page.keyboard.press("Home")
    for i in range(len(data["steps"])):
        dom = page.dom()
        assert set(dom["nodes"]) == {n["id"] for n in data["nodes"]}  # every node drawn
        if i == 0:  # fitted on a 1920x1080 screen, every saved value of a built-in is drawn
            assert len(dom["slots"]) == len(layout.slots)
        _check_step(data, full[i], dom, i)
        page.page.keyboard.press("ArrowRight")
    assert page.dom()["index"] == len(data["steps"]) - 1  # Right stops at the last step
    assert page.others() == [] and page.errors == []


def _after(stops: list[int], i: int, last: int) -> int:
    return next((s for s in stops if s > i), last)


def _before(stops: list[int], i: int) -> int:
    return next((s for s in reversed(stops) if s < i), 0)


def test_keys_step_by_call_iteration_and_ends(browser, tmp_path: Path) -> None:
    """As the window's session: Shift+arrows to the first step or a call's end, Ctrl+arrows to
    the start of a loop iteration, Home and End, Space plays."""
    recording, layout = _recorded("rnn-no-detach")
    page = open_page(browser, write_player(recording, tmp_path / "page.html", layout))
    keys, last = page.page.keyboard, len(recording.timeline) - 1
    assert page.dom()["index"] == recording.opening_step  # opens where the window does
    iterations = list(recording.timeline.iteration_starts())
    calls = sorted({0, *(c.last_step for c in recording.calls)})
    assert len(iterations) >= 2 and len(calls) >= 2
    for stops, key in ((iterations, "Control"), (calls, "Shift")):
        keys.press("Home")
        at = 0
        while at != last:
            keys.press(f"{key}+ArrowRight")
            at, was = page.dom()["index"], at
            assert at == _after(stops, was, last), key
        while at != 0:
            keys.press(f"{key}+ArrowLeft")
            at, was = page.dom()["index"], at
            assert at == _before(stops, was), key
    keys.press("End")
    keys.press("ArrowLeft")
    assert page.dom()["index"] == last - 1
    keys.press("Space")  # from the last step: back to the first, then on, two steps a second
    wait_until(page.page, "window.lensPlayer.index >= 1", 10_000)
    keys.press("Space")


def test_a_jump_back_shows_the_same_as_stepping_there(browser, tmp_path: Path) -> None:
    recording, layout = _recorded("gan-no-detach")
    page = open_page(browser, write_player(recording, tmp_path / "page.html", layout), 1920, 1080)
    last = len(recording.timeline) - 1
    page.page.keyboard.press("Home")
    forward = []
    for _ in range(last + 1):
        forward.append(page.dom())
        page.page.keyboard.press("ArrowRight")
    for i in (last // 2, 3, 0, last, 1):
        page.page.evaluate(f"window.lensPlayer.go({i})")
        assert page.dom() == forward[i], f"step {i}"


def test_the_page_makes_no_request_and_allows_none(browser, tmp_path: Path) -> None:
    recording, layout = _recorded("forgot-retain")
    path = write_player(recording, tmp_path / "page.html", layout)
    text = path.read_text(encoding="utf-8")
    assert "default-src 'none'" in text
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text
    page = open_page(browser, path)
    for key in ("End", "Home", "Control+=", "Control+0"):
        page.page.keyboard.press(key)
    page.page.mouse.wheel(0, -400)
    assert page.requests == [page.url] and page.errors == []


def _hostile(recording: Recording) -> Recording:
    """``recording`` with markup in every name, label, caption, message, title and the code."""
    graph = recording.graph
    nodes = tuple(
        dataclasses.replace(n, name=f"{n.name}{HOSTILE}", label=f"{n.label or ''}{HOSTILE}")
        for n in graph.nodes
    )
    steps = tuple(
        dataclasses.replace(s, caption=f"{s.caption}{HOSTILE}", error=s.error and f"{s.error}{HOSTILE}")
        for s in recording.timeline.steps
    )
    calls = tuple(dataclasses.replace(c, error=c.error and f"{c.error}{HOSTILE}") for c in recording.calls)
    program = dataclasses.replace(
        recording.program, code=f"# {HOSTILE}\n{recording.program.code}", title=HOSTILE, name=HOSTILE
    )
    return dataclasses.replace(
        recording,
        program=program,
        graph=Graph(nodes, graph.edges),
        timeline=Timeline(steps),
        calls=calls,
    )


def test_markup_in_a_recording_stays_text(browser, tmp_path: Path) -> None:
    recording, layout = _recorded("forgot-retain")
    path = write_player(_hostile(recording), tmp_path / "page.html", layout)
    page = open_page(browser, path, 1920, 1080)
    shown = page.page.evaluate(
        """() => ({
        pwned: window.__pwned === undefined ? null : window.__pwned,
        images: document.querySelectorAll("img").length,
        scripts: document.querySelectorAll("script").length,
        title: document.getElementById("title").textContent,
        caption: document.getElementById("caption").textContent,
        error: document.getElementById("error-message").textContent,
        heading: document.getElementById("error-title").textContent,
        code: document.querySelector('#code [data-line="1"] .tx').textContent,
        node: [...document.querySelectorAll("#l-nodes text")].map(t => t.textContent).join("|"),
    })"""
    )
    assert shown["pwned"] is None and shown["images"] == 0 and shown["scripts"] == 2  # data + player
    assert shown["title"] == HOSTILE and shown["code"] == f"# {HOSTILE}"
    assert shown["caption"].endswith(HOSTILE) and HOSTILE in shown["heading"]
    assert HOSTILE not in shown["error"]  # the first sentence of the message; the rest a click away
    page.page.click("#error-more")
    assert page.page.evaluate("document.getElementById('error-message').textContent").endswith(HOSTILE)
    assert HOSTILE[:40] in shown["node"]  # a box's line is clipped to 40 characters
    page.page.keyboard.press("Home")
    assert page.page.evaluate("window.__pwned === undefined") and page.others() == []


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_the_page_fits_the_screen_in_every_theme(browser, tmp_path: Path, width: int, height: int) -> None:
    recording, layout = _recorded("forgot-retain")
    page = open_page(browser, write_player(recording, tmp_path / "page.html", layout), width, height)
    for theme in ("light", "dark", "projector"):
        page.page.select_option("#theme", theme)
        boxes = page.page.evaluate(
            """() => Object.fromEntries(["step-number", "code-panel", "graph-panel", "caption", "slider",
            "error-panel", "fixes", "legend"].map(id => {
              const r = document.getElementById(id).getBoundingClientRect();
              return [id, [r.left, r.top, r.right, r.bottom]];
            }))"""
        )
        for name, (left, top, right, bottom) in boxes.items():
            assert left >= 0 and top >= 0 and right <= width + 0.5, (theme, name)
            if name != "legend":  # the side panel scrolls to its legend
                assert bottom <= height + 0.5, (theme, name)
        background = page.page.evaluate("getComputedStyle(document.body).backgroundColor")
        from app.render.style import PALETTES

        hex_colour = PALETTES[theme].background
        rgb = tuple(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
        assert background == f"rgb({rgb[0]}, {rgb[1]}, {rgb[2]})"
        page.page.screenshot(path=str(screenshot_dir() / f"forgot-retain-{theme}-{width}x{height}.png"))
    assert page.page.evaluate("document.documentElement.scrollWidth") <= width


def test_state_colours_are_the_windows(browser, tmp_path: Path) -> None:
    from app.render.style import PALETTES, node_style, slot_style

    recording, layout = _recorded("forgot-retain")
    page = open_page(browser, write_player(recording, tmp_path / "page.html", layout), 1920, 1080)
    page.page.keyboard.press("End")
    failed = recording.calls[1].failed_node
    for theme in ("light", "dark", "projector"):
        page.page.select_option("#theme", theme)
        fills = page.page.evaluate(
            f"""() => [getComputedStyle(document.querySelector('[data-node="{failed}"] .bx')).fill,
               getComputedStyle(document.querySelector('[data-slot="{failed}/self"] .bx')).fill]"""
        )

        def rgb(hex_colour: str) -> str:
            return "rgb({}, {}, {})".format(*(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)))

        palette = PALETTES[theme]
        assert fills == [
            rgb(node_style("op", "failed", palette).fill),
            rgb(slot_style("freed", palette).fill),
        ]


def test_zoom_draws_text_only_where_it_reads(browser, tmp_path: Path) -> None:
    recording, layout = _recorded("gan-no-detach")
    page = open_page(browser, write_player(recording, tmp_path / "page.html", layout))
    far = "document.getElementById('graph').classList.contains('far-nodes')"
    for _ in range(12):
        page.page.keyboard.press("Control+-")
    assert page.page.evaluate(far)
    for _ in range(24):
        page.page.keyboard.press("Control+=")
    assert not page.page.evaluate(far)
    texts = "[...document.querySelectorAll('#l-nodes text')].filter(t => t.getBBox().width > 0).length"
    assert page.page.evaluate(texts) > 0
    page.page.keyboard.press("Control+0")
    before = page.page.evaluate("document.getElementById('world').getAttribute('transform')")
    page.page.mouse.move(700, 300)
    page.page.mouse.down()
    page.page.mouse.move(760, 340)
    page.page.mouse.up()
    assert page.page.evaluate("document.getElementById('world').getAttribute('transform')") != before


def test_the_export_command_writes_one_page(browser, tmp_path: Path) -> None:
    from app.cli import main

    out = tmp_path / "lesson.html"
    assert main(["export", "two-losses", "--format", "html", "--out", str(out)]) == 0
    page = open_page(browser, out)
    data = json.loads(page.page.evaluate("document.getElementById('lens-data').textContent"))
    assert data["steps"]["name"] == "two-losses" and page.others() == []
    assert len(page.dom()["nodes"]) == len(builtin_recording("two-losses").graph)


def test_a_notebook_cell_shows_the_player_and_saves_it(browser, tmp_path: Path) -> None:
    import torch

    from app import lens

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with lens.record() as rec:
        y = (x * 3).sum()
        y.backward()
    cell = rec._repr_html_()
    assert cell.startswith("<iframe") and "<script" not in cell
    rec.save(tmp_path / "x.html")
    saved = open_page(browser, tmp_path / "x.html")
    saved.page.keyboard.press("End")
    assert saved.dom()["grads"]["x"]["flat"] == [3.0, 3.0] == x.grad.tolist()
    (tmp_path / "cell.html").write_text(f"<!doctype html><body>{cell}</body>", encoding="utf-8")
    notebook = open_page_frame(browser, tmp_path / "cell.html")
    assert notebook["counter"].startswith("Step ") and notebook["grads"]["x"]["flat"] == [3.0, 3.0]


def open_page_frame(browser: Any, path: Path) -> dict[str, Any]:
    """The DOM of the player inside the first frame of the page at ``path``."""
    from tests.support.web_player_support import READ_DOM, READY, wait_until

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.resolve().as_uri())
    frame = page.frames[1]
    wait_until(frame, READY)
    frame.evaluate("window.lensPlayer.go(window.lensPlayer.count - 1)")
    dom: dict[str, Any] = frame.evaluate(READ_DOM)
    assert requests == [path.resolve().as_uri()]
    return dom


def test_a_lens_file_exports_with_the_layout_it_keeps(tmp_path: Path, monkeypatch) -> None:
    """A shared ``.lens`` file's page is drawn where the file says, without running Graphviz."""
    from app.core.lensfile import open_lens
    from app.render import layout as layout_module
    from app.render.layout_store import save_with_layout
    from app.render.web import page as page_module

    recording, layout = _recorded("two-losses")
    save_with_layout(recording, tmp_path / "x.lens")
    read, stored = open_lens(tmp_path / "x.lens")

    def no_graphviz(*args: Any, **kwargs: Any) -> Layout:
        raise AssertionError("Graphviz ran")

    monkeypatch.setattr(page_module, "layout_graph", no_graphviz)
    monkeypatch.setattr(layout_module, "layout_graph", no_graphviz)
    path = page_module.export_html(read, stored, tmp_path, name="x")
    assert path.name == "x.html"
    text = path.read_text(encoding="utf-8")
    data = json.loads(text.split('id="lens-data">', 1)[1].split("</script>", 1)[0])
    placed = {row[0]: row[2:6] for row in data["scene"]["items"]["nodes"]}
    assert placed == {
        node: [round(v, 1) for v in (box.x, box.y, box.width, box.height)]
        for node, box in layout.nodes.items()
    }


def test_the_notebook_player_needs_no_qt() -> None:
    import os
    import subprocess
    import sys

    code = (
        "import sys, torch\n"
        "from app import lens\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "with lens.record() as rec:\n"
        "    (x * 3).sum().backward()\n"
        "cell = rec._repr_html_()\n"
        "qt = sorted({m.split('.')[0] for m in sys.modules} & {'PySide6', 'shiboken6'})\n"
        "print(cell.startswith('<iframe'), qt)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["True", "[]"]


def _torch_nodes(root: Any) -> set[int]:
    """Every node PyTorch's graph reaches from ``root``, by id (the oracle: next_functions)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        todo.extend(child for child, _ in fn.next_functions)
    return seen


def test_a_files_second_block_shows_its_own_lines_and_graph(browser, tmp_path: Path) -> None:
    import html
    import inspect

    import torch

    from app import lens

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with lens.record() as first:
        y = (x * x).sum()
        y.backward()
    w = torch.tensor([3.0], requires_grad=True)
    start = inspect.currentframe().f_lineno + 1  # the second block's `with` line, as the file numbers it
    with lens.record() as second:
        z = (w * 2).sum()
        z.backward()
    end = start + 2
    assert y.grad_fn is not None  # the first block's graph is still held while the second runs
    assert len(second.recording.graph) == len(_torch_nodes(z.grad_fn)) == 3
    assert len(first.recording.graph) == len(_torch_nodes(y.grad_fn))
    assert second.recording.grads_at_end(0)["w"].tolist() == w.grad.tolist()
    cell = second._repr_html_()
    page = html.unescape(cell.split('srcdoc="', 1)[1].split('" title=', 1)[0])
    data = json.loads(page.split('id="lens-data">', 1)[1].split("</script>", 1)[0])
    source = Path(__file__).read_text(encoding="utf-8").splitlines(keepends=True)
    assert data["steps"]["program"] == "".join(source[start - 1 : end])
    assert data["steps"]["first_line"] == start
    shown = tmp_path / "block.html"
    second.save(shown)
    opened = open_page(browser, shown)
    opened.page.keyboard.press("End")
    assert opened.dom()["line"] == end  # the backward's line, numbered as in the file
    numbers = opened.page.evaluate("[...document.querySelectorAll('#code .ln .no')].map(e => +e.textContent)")
    assert numbers == list(range(start, end + 1))


def test_a_pages_error_step_opens_with_the_failing_node_readable(browser, tmp_path: Path) -> None:
    recording, layout = _recorded("gan-no-detach")
    failed = recording.failed
    assert failed is not None and failed.failed_node is not None
    path = write_player(recording, tmp_path / "gan.html", layout)
    opened = open_page(browser, path)
    page = opened.page
    assert page.evaluate("window.lensPlayer.index") == recording.opening_step == failed.last_step
    read = """(node) => {
      const g = document.getElementById("graph"), box = g.getBoundingClientRect();
      const n = document.querySelector(`[data-node="${node}"]`).getBoundingClientRect();
      return {far: g.classList.contains("far-nodes"),
              inside: n.left >= box.left && n.right <= box.right
                && n.top >= box.top && n.bottom <= box.bottom};
    }"""
    shown = page.evaluate(read, failed.failed_node)
    assert shown == {"far": False, "inside": True}  # its name readable, in sight, with no click
    page.keyboard.press("Home")  # away from the error: the whole graph, fitted, as before
    whole = page.evaluate("""() => {
      const g = document.getElementById("graph").getBoundingClientRect();
      const w = document.getElementById("world").getBoundingClientRect();
      return w.width <= g.width + 1 && w.height <= g.height + 1;
    }""")
    assert whole


def _panel_words(recording: Recording) -> list[dict[str, list[str]]]:
    """At each step, each leaf's gradient value line and history as the window's panel words them."""
    from app.core.lesson.panel_words import finished_calls, grad_history, grad_text

    ends: dict[int, Any] = {}
    out = []
    for i in range(len(recording.timeline)):
        state = recording.timeline.state(i)
        for call in finished_calls(recording, i):
            ends.setdefault(call, recording.grads_at_end(call))
        out.append({
            name: [grad_text(name, state.grads.get(name)),
                   "\n".join(grad_history(recording, state.step, name, state.grads.get(name), ends)) or ""]
            for name in recording.leaves
        })  # fmt: skip
    return out


def test_the_gradient_panels_words_are_stored_per_change_and_shown_at_every_step(
    browser, tmp_path: Path
) -> None:
    """The value line and the history change at a few steps (a .grad written, a call ended): the
    page keeps one entry per change, not one per step, and shows the window's words at each step."""
    from app.render.web.steps import step_data

    recording, layout = _recorded("accumulate-no-zero")
    data = step_data(recording)
    words = _panel_words(recording)
    for name in recording.leaves:
        for column, k in (("text", 0), ("history", 1)):
            changes = 1 + sum(a[name][k] != b[name][k] for a, b in pairwise(words))
            assert len(data["grads"][column][name]) == changes < len(recording.timeline) // 2, column
    page = open_page(browser, write_player(recording, tmp_path / "page.html", layout))
    page.page.keyboard.press("Home")
    for i, expected in enumerate(words):
        assert page.dom()["grad_words"] == expected, i
        page.page.keyboard.press("ArrowRight")
    assert page.errors == []

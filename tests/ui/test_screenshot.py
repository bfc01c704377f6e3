"""The real program under a real X server (Xvfb): it starts, paints the graph, and a screenshot is saved.

Three rooms: a fresh start on a 1280x720 projector (the window fits the screen), a
1920x1080 screen at text scale 1.5, and the README's picture (the RNN without
``detach`` at its error step, 1600x1000). Set ``AUTOGRAD_LENS_UPDATE_DOCS=1`` to copy
that one to ``docs/screenshot.png``; set ``AUTOGRAD_LENS_SHOTS=DIR`` to keep all three
in ``DIR`` to look at.
"""

import os
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from PySide6.QtGui import QImage

pytestmark = pytest.mark.xvfb

XVFB = shutil.which("Xvfb")
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 20
RUN_TIMEOUT_S = 180


class Room(NamedTuple):
    screen: tuple[int, int]
    program: str
    step: str = ""
    text_scale: float = 1.0
    size: tuple[int, int] | None = None  # AUTOGRAD_LENS_SIZE; None: a fresh start fits the screen


ROOMS = {
    "projector-1280x720": Room((1280, 720), "two-losses", step="3"),
    "wide-1920x1080-text-1.5": Room((1920, 1080), "rnn-no-detach", step="end", text_scale=1.5),
    "docs": Room((1600, 1000), "rnn-no-detach", step="end", size=(1600, 1000)),
}


@pytest.fixture
def display(request):
    """A fresh Xvfb server; it picks a free display number itself (-displayfd)."""
    if XVFB is None:
        pytest.skip("Xvfb is not installed")
    width, height = ROOMS[request.param].screen
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [XVFB, "-displayfd", str(write_end), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], START_TIMEOUT_S)
        number = os.read(read_end, 64).decode().strip() if ready else ""
        if not number:
            pytest.skip("Xvfb did not start")
        yield f":{number}"
    finally:
        os.close(read_end)
        server.terminate()
        server.wait(timeout=10)


def _distinct_colours(image: QImage, step: int = 4) -> int:
    return len(
        {image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)}
    )


@pytest.mark.parametrize("display", list(ROOMS), indirect=True)
def test_the_real_window_fits_the_screen_paints_the_graph_and_saves_a_screenshot(display, request, tmp_path):
    name = request.node.callspec.params["display"]
    room = ROOMS[name]
    shot = tmp_path / f"{name}.png"
    settings = tmp_path / "settings.ini"
    settings.write_text(f"[view]\nfont_scale={room.text_scale}\n")
    env = {
        **os.environ,
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "AUTOGRAD_LENS_SCREENSHOT": str(shot),
        "AUTOGRAD_LENS_SETTINGS": str(settings),
        "AUTOGRAD_LENS_STEP": room.step,
    }
    env.pop("AUTOGRAD_LENS_SIZE", None)
    if room.size is not None:
        env["AUTOGRAD_LENS_SIZE"] = f"{room.size[0]}x{room.size[1]}"
    done = subprocess.run(
        [sys.executable, "-m", "app", "gui", room.program],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    image = QImage(str(shot))
    assert not image.isNull()
    assert (image.width(), image.height()) == (room.size or room.screen)  # fits the screen exactly
    assert _distinct_colours(image) > 50  # text, graph boxes, charts: far from a blank window
    keep = os.environ.get("AUTOGRAD_LENS_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(keep) / shot.name)
    if name == "docs" and os.environ.get("AUTOGRAD_LENS_UPDATE_DOCS") == "1":
        shutil.copyfile(shot, ROOT / "docs" / "screenshot.png")

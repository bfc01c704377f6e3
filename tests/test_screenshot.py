"""The real program under a real X server (Xvfb): it starts, paints the graph, and a screenshot is saved.

Set ``AUTOGRAD_LENS_UPDATE_DOCS=1`` to copy the screenshot to ``docs/screenshot.png``
(the README's picture of the window).
"""

import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

pytestmark = pytest.mark.xvfb

XVFB = shutil.which("Xvfb")
ROOT = Path(__file__).resolve().parent.parent
SIZE = (1600, 1000)
START_TIMEOUT_S = 20
RUN_TIMEOUT_S = 180


@pytest.fixture
def display():
    """A fresh Xvfb server; it picks a free display number itself (-displayfd)."""
    if XVFB is None:
        pytest.skip("Xvfb is not installed")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [XVFB, "-displayfd", str(write_end), "-screen", "0", f"{SIZE[0]}x{SIZE[1]}x24", "-nolisten", "tcp"],
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


def test_the_real_window_paints_the_graph_and_saves_a_screenshot(display, tmp_path):
    shot = tmp_path / "window.png"
    env = {
        **os.environ,
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "AUTOGRAD_LENS_SCREENSHOT": str(shot),
        "AUTOGRAD_LENS_SETTINGS": str(tmp_path / "settings.ini"),
        "AUTOGRAD_LENS_SIZE": f"{SIZE[0]}x{SIZE[1]}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app", "gui", "forgot-retain"],
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
    assert (image.width(), image.height()) == SIZE
    assert _distinct_colours(image) > 50  # text, graph boxes, charts: far from a blank window
    if os.environ.get("AUTOGRAD_LENS_UPDATE_DOCS") == "1":
        shutil.copyfile(shot, ROOT / "docs" / "screenshot.png")

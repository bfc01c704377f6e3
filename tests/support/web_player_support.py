"""Opening the HTML player's pages in the system's headless Chromium (Playwright, no download).

``browser`` skips the test cleanly where Chromium or Playwright is missing (``./dev.sh test``
installs both, so CI runs these tests). ``open_page`` logs every request the page makes.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
READY = "window.lensPlayer && window.lensPlayer.first_paint_ms !== null"


def wait_until(target: Any, expression: str, timeout_ms: int = 60_000) -> None:
    """Poll ``expression`` in ``target`` (a page or a frame) until it holds.

    Playwright's own ``wait_for_function`` compiles a string predicate with ``new Function``
    inside the page, which the player's Content-Security-Policy (no ``unsafe-eval``) refuses
    whenever the first check does not already hold; ``evaluate`` runs through the debugging
    protocol, which the policy does not govern.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    check = f"() => Boolean({expression})"
    while not target.evaluate(check):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{expression!r} did not hold within {timeout_ms} ms")
        time.sleep(0.02)


# What the page shows at the step on screen, read from its DOM.
READ_DOM = """() => {
  const states = (sel, key) => Object.fromEntries(
    [...document.querySelectorAll(sel)].map(e => [e.getAttribute(key), e.getAttribute("data-state")]));
  const marked = document.querySelector("#code .ln.cur");
  return {
    index: window.lensPlayer.index,
    counter: document.getElementById("step-number").textContent,
    detail: document.getElementById("step-detail").textContent,
    caption: document.getElementById("caption").firstChild
      ? document.getElementById("caption").firstChild.textContent : "",
    line: marked ? Number(marked.getAttribute("data-line")) : null,
    marked_lines: document.querySelectorAll("#code .ln.cur").length,
    nodes: states("#l-nodes [data-node]", "data-node"),
    slots: states("#l-slots [data-slot]", "data-slot"),
    grads: Object.fromEntries([...document.querySelectorAll("#grad-list [data-leaf]")]
      .map(e => [e.getAttribute("data-leaf"), JSON.parse(e.getAttribute("data-grad"))])),
    grad_words: Object.fromEntries([...document.querySelectorAll("#grad-list [data-leaf]")]
      .map(e => [e.getAttribute("data-leaf"), [e.querySelector(".leaf-now").textContent,
        [...e.querySelectorAll(".leaf-history div")].map(d => d.textContent)
          .join(String.fromCharCode(10))]])),
    error_shown: !document.getElementById("error-panel").hidden,
  };
}"""


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    exe = chromium_path()
    if exe is None:
        pytest.skip("Chromium is not installed (./dev.sh test installs it)")
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class OpenPage:
    page: Any
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def dom(self) -> dict[str, Any]:
        result: dict[str, Any] = self.page.evaluate(READ_DOM)
        return result

    def others(self) -> list[str]:
        """Every request but the page's own file."""
        return [url for url in self.requests if url != self.url]

    def goto(self, path: Path) -> OpenPage:
        """Open ``path`` in this page instead, its requests and errors logged afresh (a new
        context per page starts a renderer of its own: about a second each)."""
        self.url = path.resolve().as_uri()
        self.requests.clear()
        self.errors.clear()
        self.page.goto(self.url)
        wait_until(self.page, READY)
        return self


def open_page(browser: Any, path: Path, width: int = 1280, height: int = 720) -> OpenPage:
    """``path`` opened in a fresh context, every request logged (and refused but the page's own)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    opened = OpenPage(page, path.resolve().as_uri())
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("pageerror", lambda exc: opened.errors.append(str(exc)))
    page.on("console", lambda msg: opened.errors.append(msg.text) if msg.type == "error" else None)

    def route(request_route: Any) -> None:
        if request_route.request.url == opened.url:
            request_route.continue_()
        else:
            request_route.abort()

    context.route("**/*", route)
    return opened.goto(path)


def screenshot_dir() -> Path:
    """Where the tests leave their screenshots, to be looked at."""
    folder = Path(tempfile.gettempdir()) / "autograd-lens-web-shots"
    folder.mkdir(exist_ok=True)
    return folder

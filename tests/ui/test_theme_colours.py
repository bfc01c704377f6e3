"""Every view's colours follow the theme: the stylesheet's when it sets them, else the palette's.

NOTE [palette colours] in app/ui/style/theme.py: no view keeps a fixed colour of its own. A
view made without a stylesheet takes its hues at a lightness that reads on its
palette's background; with a theme's stylesheet it takes the theme's.
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.ui.editor.code_edit import CodeEdit
from app.ui.editor.code_panel import CodePanel
from app.ui.panels.grad_panel import GradBars
from app.ui.panels.memory_chart import MemoryChart
from app.ui.style.theme import stylesheet

LIGHT, DARK = ("#ffffff", "#111111"), ("#1e1f22", "#ececec")


def _palette(base: str, text: str) -> QPalette:
    palette = QPalette(QColor(base))
    for role, colour in ((QPalette.ColorRole.Base, base), (QPalette.ColorRole.Window, base)):
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText):
        palette.setColor(role, QColor(text))
    return palette


def _views(qtbot, session, sheet: str = "") -> dict[str, list[QColor]]:
    bars, chart, panel = GradBars(), MemoryChart(session), CodePanel(session)
    for view in (bars, chart, panel):
        qtbot.addWidget(view)
        if sheet:
            view.setStyleSheet(sheet)  # the widget's own: the application's stays as the window set it
        view.ensurePolished()  # the stylesheet's qproperty- values are set at polish
    return {
        "bars": [bars.firstColor, bars.secondColor, bars.thirdColor],
        "chart": [chart.savedColor, chart.deviceColor, chart.aliveColor, chart.markerColor],
        "code": [panel.currentLineColor, panel.failedLineColor],
    }


@pytest.fixture
def no_stylesheet(qtbot):
    app = QApplication.instance()
    before, palette = app.styleSheet(), app.palette()
    app.setStyleSheet("")
    yield app
    app.setPalette(palette)
    app.setStyleSheet(before)


@pytest.mark.parametrize(("base", "text"), [LIGHT, DARK])
def test_without_a_stylesheet_the_colours_come_from_the_palette(qtbot, session, no_stylesheet, base, text):
    no_stylesheet.setPalette(_palette(base, text))
    views = _views(qtbot, session)
    dark = QColor(base).lightnessF() < 0.5
    for colour in views["bars"] + views["chart"]:  # lines and bars: they stand out from the page
        assert (colour.lightnessF() > 0.5) == dark, colour.name()
    for colour in views["code"]:  # tints behind text: on the page's side, the text still reads
        assert (colour.lightnessF() < 0.5) == dark, colour.name()
    assert len({c.name() for c in views["bars"]}) == 3  # one hue per call


def test_a_theme_stylesheet_sets_its_own_colours(qtbot, session):
    views = _views(qtbot, session, stylesheet("dark"))
    assert [c.name() for c in views["bars"]] == ["#5aa9e6", "#ffa94d", "#69db7c"]
    assert views["chart"][2].name() == "#3fe0aa" and views["code"][0].name() == "#5c4b12"


@pytest.mark.parametrize("theme", ["light", "dark", "projector"])
def test_line_numbers_stand_out_from_their_margin_in_every_theme(qtbot, theme):
    edit = CodeEdit()
    qtbot.addWidget(edit)
    edit.setStyleSheet(stylesheet(theme))
    edit.setPlainText("a = 1\nb = 2\n")
    edit.resize(300, 200)
    edit.show()
    qtbot.waitExposed(edit)
    image = edit.grab().toImage()
    margin = edit.line_number_width()
    colours = {image.pixelColor(x, y).lightness() for x in range(2, margin - 2) for y in range(2, 30)}
    base = edit.palette().base().color().lightness()
    assert abs(min(colours, key=lambda c: abs(c - base)) - base) < 40  # the margin sits near the page
    assert max(abs(c - base) for c in colours) > 90  # the numbers on it read


def test_a_narrow_chart_keeps_its_numbers_whole(qtbot, session, two_losses):
    chart = MemoryChart(session)
    qtbot.addWidget(chart)
    session.apply(two_losses)
    alive = chart.alive_series()
    now, peak = alive[session.index], max(alive)
    chart.resize(1000, 300)
    assert chart.shown_alive_title() == chart.alive_title()
    width = chart.fontMetrics().horizontalAdvance(f"╌ Nodes: {now} · peak {peak}") + 20
    chart.resize(width, 300)
    assert chart.shown_alive_title() == f"╌ Nodes: {now} · peak {peak}"

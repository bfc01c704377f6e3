"""The program list reads like a lesson: titles, the seed first, each twin right after its pair."""

from __future__ import annotations

from app.core import load_builtin
from app.core.builtins import builtin_entries
from app.core.loading import builtin_names
from app.ui.window.program_list import TWIN_PREFIX, ProgramList


def test_the_list_shows_every_builtin_by_its_title_seed_first_twins_together(qtbot):
    picker = ProgramList()
    qtbot.addWidget(picker)
    names = picker.builtin_names
    assert sorted(names) == sorted(builtin_names())  # every file that ships, once
    assert names[0] == "two-losses" and picker.current_name() == "two-losses"
    programs = {name: load_builtin(name) for name in names}  # the loader is the oracle
    for position, name in enumerate(names):
        assert picker.itemText(position).removeprefix(TWIN_PREFIX) == programs[name].title
        twin = programs[name].twin
        if twin:
            assert abs(names.index(twin) - position) == 1, (name, twin)  # side by side
            first = min(position, names.index(twin))
            assert picker.itemText(first + 1).startswith(TWIN_PREFIX)
            assert not picker.itemText(first).startswith(TWIN_PREFIX)


def test_a_file_is_listed_after_the_builtins_and_choosing_opens_what_it_names(qtbot):
    picker = ProgramList()
    qtbot.addWidget(picker)
    count = len(builtin_entries())
    picker.show_file("mine (mine.py)", "/somewhere/mine.py")
    picker.show_file("other (other.lens)", "/somewhere/other.lens")
    assert picker.count() == count + 1 and picker.currentIndex() == count
    assert picker.source_at(count) == "/somewhere/other.lens" and picker.current_name() is None
    position = picker.findData("gan-detach")
    assert picker.is_builtin_at(position) and picker.source_at(position) == "gan-detach"
    picker.show_builtin("gan-detach")
    assert picker.current_name() == "gan-detach"

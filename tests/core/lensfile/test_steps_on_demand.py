"""A file's steps made as first asked for (timeline's NOTE [steps on demand]): the same recording
as a whole read makes, each damaged step refused when it is asked for, never before."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.lensfile import LensError, open_lens, save_lens
from tests.support.damaged_lens import lens_with_step, unknown_slot_node


def test_a_lazy_read_makes_no_step_until_one_is_asked_for(tmp_path: Path, forgot_retain) -> None:
    path = tmp_path / "run.lens"
    save_lens(forgot_retain, path)
    recording = open_lens(path, lazy=True)[0]
    timeline = recording.timeline
    assert timeline.steps.made() == 0  # type: ignore[attr-defined]
    # the series over every step come from the heads, and match the recorder's own steps
    assert timeline.call_starts() == forgot_retain.timeline.call_starts()
    assert timeline.iteration_starts() == forgot_retain.timeline.iteration_starts()
    assert timeline.memory_series() == forgot_retain.timeline.memory_series()
    assert [timeline.call_bounds(c.index) for c in recording.calls] == [
        (c.first_step, c.last_step) for c in forgot_retain.calls
    ]
    assert timeline.steps.made() == 0  # type: ignore[attr-defined]
    state = timeline.state(3)
    assert timeline.steps.made() == 4  # type: ignore[attr-defined]  # steps 0..3, replayed
    assert state == forgot_retain.timeline.state(3)
    assert recording == forgot_retain  # every step made, each equal to the recorded one


def test_a_damaged_step_is_refused_when_it_is_asked_for(tmp_path: Path, two_losses) -> None:
    last = len(two_losses.timeline) - 1
    path = lens_with_step(two_losses, tmp_path / "bad.lens", last, unknown_slot_node)
    with pytest.raises(LensError, match=rf"steps\[{last}\]\.slot_changes"):
        open_lens(path)  # read whole: refused at once, as before
    timeline = open_lens(path, lazy=True)[0].timeline
    assert timeline.state(last - 1).step.index == last - 1
    with pytest.raises(LensError, match=rf"steps\[{last}\]\.slot_changes: 'no-such-node' is not a node"):
        timeline.state(last)


def test_a_steps_call_out_of_range_is_refused_at_open(tmp_path: Path, two_losses) -> None:
    def far_call(step: dict) -> None:
        step["call"] = len(two_losses.calls)

    path = lens_with_step(two_losses, tmp_path / "bad.lens", 2, far_call)
    with pytest.raises(LensError, match=r"steps\[2\]\.call: \d+ is outside"):
        open_lens(path, lazy=True)


def test_a_steps_head_of_the_wrong_type_is_refused_at_open_naming_it(tmp_path: Path, two_losses) -> None:
    def words(step: dict) -> None:
        step["saved_bytes"] = "many"

    path = lens_with_step(two_losses, tmp_path / "bad.lens", 5, words)
    with pytest.raises(LensError, match=r"steps\[5\]\.saved_bytes"):
        open_lens(path, lazy=True)

"""The benchmark's report: its JSON object, the table, and the verdict against each target."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common import TARGETS, median, median_of_ratios, p95, ratio
from benchmarks.heartbeat import Responsiveness
from benchmarks.language import LanguageCost
from benchmarks.lens_open import LensOpen
from benchmarks.program import ProgramResult
from benchmarks.real_models import RealModelResult
from benchmarks.sizes import SizeResult

# -- the run -------------------------------------------------------------------------------------------


@dataclass
class Report:
    machine: dict[str, str]
    sizes: list[SizeResult]
    startup_s: list[float]
    torch_import_s: list[float]
    heartbeat: Responsiveness | None
    rss: dict[str, float]
    program: ProgramResult | None = None
    real_model: RealModelResult | None = None
    lens_open: LensOpen = field(default_factory=LensOpen)
    stack: dict[str, Any] | None = None  # the 20,000-node transformer stack (full runs)
    web: dict[str, Any] | None = None  # the HTML player in headless Chromium (benchmarks/web.py)
    language: LanguageCost | None = None  # the Net(nn.Module) loop: plain Python, evaluator, recorded

    def json(self) -> dict[str, Any]:
        stack = [self.stack] if self.stack else []
        return {
            "program": self.program.json() if self.program else None,
            "real_model": self.real_model.json() if self.real_model else None,
            "sizes": [s.json() for s in self.sizes] + stack,
            "startup_s": round(median(self.startup_s), 3),
            "lens_open_s": round(median(self.lens_open.first_s), 3),
            "lens_ready_s": round(median(self.lens_open.ready_s), 3),
            "torch_import_s": round(median(self.torch_import_s), 3),
            "max_heartbeat_gap_ms": round(self.heartbeat.max_gap_ms if self.heartbeat else math.nan, 1),
            "peak_rss_mb": round(self.rss.get("peak_mb", math.nan), 1),
            "web": self.web,
            "language": self.language.json() if self.language else None,
        }


# -- output --------------------------------------------------------------------------------------------


def table(report: Report) -> str:
    return "\n".join(_table_lines(report))


def _table_lines(report: Report) -> Iterator[str]:
    yield "Machine"
    for key, value in report.machine.items():
        yield f"  {key:<9} {value}"
    yield ""
    yield "1. Step latency, ms per step (window: Session.go_to -> graph painted; view: bare GraphView)"
    yield (
        f"  {'nodes':>6} {'steps':>6} {'window med':>10} {'p95':>7} {'view med':>9} {'p95':>7} "
        f"{'full frame':>10} {'re-render':>11} {'n':>3} {'speed-up':>9}"
    )
    for s in report.sizes:
        bound = ">=" if s.rerender.timed_out else "  "
        yield (
            f"  {s.nodes:>6} {s.backward_steps:>6} {median(s.window.ms):>10.2f} {p95(s.window.ms):>7.2f} "
            f"{median(s.view.ms):>9.2f} {p95(s.view.ms):>7.2f} {median(s.window.full_frame_ms):>10.1f} "
            f"{bound}{s.rerender.median_ms:>9.0f} {len(s.rerender.times_ms):>3} "
            f"{bound}{ratio(s.rerender.median_ms, median(s.window.ms)):>7.0f}x"
        )
    for s in report.sizes:
        painted = s.window.painted / max(len(s.window.ms), 1)
        sampled = "a sample of steps" if s.rerender_sampled else "every step"
        yield f"  {s.nodes:>6}: graph painted on {painted:.0%} of window steps; re-render timed on {sampled}"
    yield ""
    yield "2. Recording cost (s, medians) and one-off costs of a new recording"
    yield (
        f"  {'nodes':>6} {'record':>8} {'plain':>8} {'native':>8} {'rec/plain':>9} {'rec/native':>10} "
        f"{'1 thread':>8} {'layout':>8} {'set_model':>9}"
    )
    for s in report.sizes:
        r = s.record
        yield (
            f"  {s.nodes:>6} {median(r.record_s):>8.3f} {median(r.evaluated_s):>8.3f} "
            f"{median(r.native_s):>8.3f} {r.vs_plain:>8.1f}x {r.vs_native:>9.1f}x "
            f"{r.vs_plain_1t:>7.1f}x {s.layout_s:>8.2f} {s.set_model_s:>9.2f}"
        )
    yield "  (rec/plain: median of each round's ratio; 1 thread: the same with torch.set_num_threads(1))"
    yield ""
    yield "5. Memory kept per recorded step"
    yield (
        f"  {'nodes':>6} {'B/step':>8} {'max B':>8} {'changes':>8} {'B/change':>9} "
        f"{'heap':>10} {'replayed':>10}"
    )
    for s in report.sizes:
        b, h = s.step_bytes, s.heap
        heap = f"{h.recording / 1e6:>8.1f}MB {h.after_replay / 1e6:>8.1f}MB" if h else f"{'skipped':>21}"
        yield (
            f"  {s.nodes:>6} {b.mean:>8.0f} {b.max:>8} {b.changes_mean:>8.2f} "
            f"{b.bytes_per_change:>9.0f} {heap}"
        )
    rss = report.rss
    yield (
        f"  peak RSS ({rss.get('nodes', 0):.0f} nodes, fresh process): {rss.get('peak_mb', math.nan):.0f} MB "
        f"(after imports and a 10-node warm-up {rss.get('baseline_mb', math.nan):.0f} MB, after record "
        f"{rss.get('after_record_mb', math.nan):.0f} MB)"
    )
    yield ""
    startup, imports = median(report.startup_s), median(report.torch_import_s)
    yield "3. Start-up (s, medians of interleaved runs)"
    yield (
        f"  first painted graph {startup:.2f}   import torch {imports:.2f}   "
        f"ratio {ratio(startup, imports):.2f}x"
    )
    yield f"  runs: window {_fmt(report.startup_s)}  torch {_fmt(report.torch_import_s)}"
    yield ""
    hb = report.heartbeat
    if hb is not None:
        yield "4. Responsiveness (10 ms heartbeat on the GUI thread)"
        yield f"  largest gap {hb.max_gap_ms:.1f} ms during {hb.phase}"
        yield f"  load took {hb.load_s:.1f} s via the {hb.path}"
        pauses = ", ".join(f"{ms:.0f} ms (gen {gen}, {where})" for ms, gen, where in hb.gc_pauses)
        yield f"  slowest garbage-collector passes meanwhile: {pauses or 'none'}"
        gaps = "; ".join(f"{ms:.0f} ms ({during})" for ms, during in hb.top_gaps)
        yield f"  largest gaps: {gaps}"
        if hb.note:
            yield f"  note: {hb.note}"
        yield ""
    yield from _own_code_lines(report)
    yield ""
    if report.language is not None:
        lang = report.language
        yield "7. The checked language (a Net(nn.Module) training loop written once)"
        yield (
            f"  plain Python {median(lang.plain_python_s):.3f} s, "
            f"evaluator {median(lang.evaluator_s):.3f} s, recorded {median(lang.record_s):.3f} s"
        )
        yield ""
    yield from _target_lines(report)


def _own_code_lines(report: Report) -> Iterator[str]:
    yield "6. Your own code (`python -m app run`)"
    if report.real_model is not None:
        real = report.real_model
        yield (
            f"  TransformerEncoderLayer step ({real.nodes} nodes): record {median(real.record_s):.3f} s, "
            f"plain {median(real.plain_s):.3f} s, ratio {median_of_ratios(real.record_s, real.plain_s):.2f}x"
        )
    lens = report.lens_open
    yield (
        f"  .lens of {lens.nodes} nodes: first painted graph (its preview) "
        f"{median(lens.first_s):.2f} s, graph drawn and steps ready {median(lens.ready_s):.2f} s; "
        f"import torch beside them "
        f"{median(lens.torch_import_s or report.torch_import_s):.2f} s"
    )
    if report.stack:
        yield f"  transformer stack: {json.dumps(report.stack)}"


def _fmt(values: Sequence[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def _target_lines(report: Report) -> Iterator[str]:
    yield "Targets"
    at = next((s for s in report.sizes if 900 <= s.nodes <= 1100), None)
    if at is not None:
        yield _verdict(
            f"step p95 at {at.nodes} nodes < 16 ms", p95(at.window.ms), TARGETS["step_p95_ms"], "<"
        )
        speed = ratio(at.rerender.median_ms, median(at.window.ms))
        yield _verdict(f"step >= 10x faster than re-render at {at.nodes}", speed, 10.0, ">=")
        yield _verdict(f"record <= 3x plain at {at.nodes}", at.record.vs_plain, 3.0, "<=")
    startup = ratio(median(report.startup_s), median(report.torch_import_s))
    yield _verdict("start-up <= 1.5x import torch", startup, 1.5, "<=")
    if report.real_model is not None:
        real = median_of_ratios(report.real_model.record_s, report.real_model.plain_s)
        yield _verdict(
            "transformer step recorded <= 1.5x plain", real, TARGETS["real_model_record_vs_plain"], "<="
        )
    lens = report.lens_open
    lens_open = ratio(median(lens.first_s), median(lens.torch_import_s or report.torch_import_s))
    yield _verdict(".lens open <= 0.5x import torch", lens_open, TARGETS["lens_open_vs_torch"], "<=")
    program = report.program
    if program is not None and program.window is not None and program.window.ms:
        label = f"{program.iterations}-iteration program: step p95 < 16 ms"
        yield _verdict(label, p95(program.window.ms), TARGETS["step_p95_ms"], "<")
    if program is not None and program.heartbeat is not None:
        label = f"{program.iterations}-iteration program: heartbeat gap while it loads < 50 ms"
        yield _verdict(label, program.heartbeat.max_gap_ms, TARGETS["max_heartbeat_gap_ms"], "<")
    if report.stack:
        yield _verdict("20,000-node stack peak RSS < 2 GB", report.stack["peak_rss_mb"], 2048.0, "<")
        for key, label, target in (
            ("step_p95_ms", "20,000-node stack: step p95 < 16 ms", TARGETS["step_p95_ms"]),
            (
                "max_heartbeat_gap_ms",
                "20,000-node stack: heartbeat gap < 50 ms",
                TARGETS["max_heartbeat_gap_ms"],
            ),
        ):
            if key in report.stack:
                yield _verdict(label, report.stack[key], target, "<")
    if report.heartbeat is not None:
        yield _verdict("heartbeat gap < 50 ms", report.heartbeat.max_gap_ms, 50.0, "<")


def _verdict(label: str, value: float, target: float, op: str) -> str:
    if math.isnan(value):
        return f"  [ -- ] {label}: not measured"
    ok = {"<": value < target, "<=": value <= target, ">=": value >= target}[op]
    return f"  [{'met ' if ok else 'MISS'}] {label}: {value:.2f}"

"""Values and sizes as a learner reads them: short, the same in the table, captions and window.

>>> format_values(Values((2,), (2.0, 4.0)))
'[2, 4]'
>>> format_values(Values((), (0.5,)))
'0.5'
>>> format_bytes(3 * 1024)
'3.0 KiB'
"""

from __future__ import annotations

from app.core.model.values import Values

__all__ = ["CALL_STEP_WORDS", "VALUES_SHOWN", "format_bytes", "format_values"]


VALUES_SHOWN = 6  # elements a value shows before the count of the rest


def format_values(values: Values | None, limit: int = VALUES_SHOWN) -> str:
    """``[2, 4]`` for a small value, its first ``limit`` elements and the count for a long one.

    >>> format_values(Values((8,), tuple(float(i) for i in range(8))))
    '[0, 1, 2, 3, 4, 5, … (8 values)]'
    >>> format_values(None)
    'None'
    """
    if values is None:
        return "None"
    flat = values.flat
    shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in flat[:limit])
    more = f", … ({len(flat)} values)" if len(flat) > limit else ""
    return f"[{shown}{more}]" if values.dim() > 0 else shown


def format_bytes(n: int) -> str:
    """``512 B``, ``1.5 KiB``, ``3.0 MiB`` (MiB is the largest unit shown)."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


# What the step counter says of a step of an autograd call, in the window and in the HTML page.
CALL_STEP_WORDS = {
    "node": "running",
    "recompute": "recomputing a checkpoint",
    "call_end": "finished",
    "error": "FAILED",
}

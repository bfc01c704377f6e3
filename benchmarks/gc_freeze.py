"""What ``gc.freeze()`` after the imports buys: the pause of one full collection.

A full collection on the recording worker holds the GIL, so its length is a
pause of the GUI thread. Measured side by side in one process: a full
collection with everything tracked, then (after freezing the import-time
objects) the same collection, alternating thaw/freeze so noise hits both.

    python benchmarks/gc_freeze.py
"""

from __future__ import annotations

import gc
import statistics
import time


def _full_collection_ms() -> float:
    start = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - start) * 1000


def main(rounds: int = 7) -> None:
    import app.core.recorder.recorder
    import app.render.layout  # noqa: F401
    from app.core import load_builtin, record

    record(load_builtin("two-losses"))  # what a first recording also imports
    tracked = len(gc.get_objects())
    plain, frozen = [], []
    for _ in range(rounds):
        gc.unfreeze()
        plain.append(_full_collection_ms())
        gc.freeze()
        frozen.append(_full_collection_ms())
    p, f = statistics.median(plain), statistics.median(frozen)
    print(f"objects tracked after the imports: {tracked:,}")
    print(f"full collection, everything tracked: {p:8.1f} ms (median of {rounds})")
    print(f"full collection, import-time frozen: {f:8.1f} ms (median of {rounds})")
    print(f"GUI pause per full collection: {p:.1f} ms -> {f:.2f} ms")


if __name__ == "__main__":
    main()

"""Meta runs that never load the compiler stack (NOTE [meta runs without Dynamo]).

# NOTE [meta runs without Dynamo]
Many meta kernels are PyTorch's Python references (``torch._refs``,
``torch._decomp``): those of ``x.roll(1)``, ``torch.cumprod``,
``F.logsigmoid``, ``torch.randn_like`` and any ``generator=`` among them. Each
reference that promotes dtypes is wrapped in ``torch._disable_dynamo``, whose
first call imports ``torch._dynamo`` to build the function's disabled
version, and with it ``torch._inductor`` and ``onnx``: 1.1 s and 70 MB that
the warm child then keeps, a ``torchinductor_<user>`` folder and a temporary
file in ``$TMPDIR``, name-service look-ups, and ``torch.manual_seed`` wrapped.
A disabled version differs from its function only while Dynamo traces, and
nothing in a recording's process is compiled (the language offers no
``torch.compile``). So before the first meta run every such wrapper of a
reference is given its own function as its disabled version, which the
wrapper caches in the function's ``__dynamo_disable`` attribute: the wrapper
then calls the function directly and never imports Dynamo. Wrappers of
anything else (an optimizer's, see NOTE [optimizer without Dynamo]) are left
as they are.
"""

from __future__ import annotations

import functools
import gc
from types import FunctionType

from torch._compile import _disable_dynamo

__all__ = ["references_without_dynamo"]

# Where the meta kernels that are Python functions live (all imported with torch).
_REFERENCES = (
    "torch._refs",
    "torch._prims",
    "torch._prims_common",
    "torch._decomp",
    "torch._meta_registrations",
)
_CACHED = "__dynamo_disable"  # where torch._compile's wrapper caches a function's disabled version


def _probe() -> None:  # pragma: no cover - never called, only wrapped
    pass


@functools.cache
def references_without_dynamo() -> int:
    """Give every reference wrapped in ``torch._disable_dynamo`` itself as its disabled version;
    once per process (a walk over the interpreter's objects, ~30 ms). Returns how many.

    The walk sees only what the collector tracks: objects that ``gc.freeze()`` moved to the
    permanent generation are not among ``gc.get_objects()``, so a process that freezes (the
    recording child) calls this before it freezes.
    """
    code = _disable_dynamo(_probe).__code__
    slot = code.co_freevars.index("fn")
    pinned = 0
    for obj in gc.get_objects():
        if type(obj) is not FunctionType or obj.__code__ is not code or obj.__closure__ is None:
            continue
        fn = obj.__closure__[slot].cell_contents
        module = getattr(fn, "__module__", None) or ""
        if module.startswith(_REFERENCES) and getattr(fn, _CACHED, None) is None:
            setattr(fn, _CACHED, fn)
            pinned += 1
    return pinned

"""Settings that only tune speed, accepted in programs: they change nothing a recording shows.

``torch.backends.cudnn.benchmark = True``, ``.deterministic``, ``.enabled``, ``.allow_tf32``,
``torch.backends.cuda.matmul.allow_tf32 = True`` and ``torch.set_float32_matmul_precision("high")``
choose kernels for GPUs; a recording's operations run where it runs (the CPU, or the device picked
in the window), and the setting would outlive the program. So an assignment takes True or False
and is left at that (no real module object is reached), and the precision is checked by PyTorch's
own function, then put back as it was.
"""

from __future__ import annotations

import torch

__all__ = ["SETTING_ATTRIBUTES", "is_setting", "set_float32_matmul_precision"]

# Module attributes a program may assign, by the namespace that holds them, each True or False.
SETTING_ATTRIBUTES: dict[str, frozenset[str]] = {
    "torch.backends.cudnn": frozenset(["deterministic", "benchmark", "enabled", "allow_tf32"]),
    "torch.backends.cuda.matmul": frozenset(
        ["allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"]
    ),
}


def is_setting(path: str, name: str) -> bool:
    """Whether ``<path>.<name> = True`` is a speed setting a program may assign.

    >>> is_setting("torch.backends.cudnn", "benchmark"), is_setting("torch.backends.cudnn", "version")
    (True, False)
    """
    return name in SETTING_ATTRIBUTES.get(path, frozenset())


def set_float32_matmul_precision(precision: str) -> None:
    """``torch.set_float32_matmul_precision(precision)``: PyTorch checks it; nothing stays set.

    >>> set_float32_matmul_precision("high"); torch.get_float32_matmul_precision()
    'highest'
    """
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(precision)
    finally:
        torch.set_float32_matmul_precision(before)


set_float32_matmul_precision.__module__ = "torch"  # its errors are PyTorch's

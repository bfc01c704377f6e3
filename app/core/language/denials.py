"""What stays out, with the reason a learner is shown: denied tensor members, the families of
names denied on any value, and torch members people reach for (NOTE [whitelist] in ``whitelist.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "DENIED_FAMILIES",
    "DENIED_TENSOR_ATTRS",
    "REFUSED_OPS",
    "REFUSED_OP_FAMILIES",
    "REFUSED_TORCH_MEMBERS",
    "denied_attribute",
    "refused_op",
]

_FILES = "programs cannot read or write files"
_MEMORY = "it reaches raw memory, which programs never touch"
_CODE = "it would run Python code of its own, which programs never do"
_UNINITIALISED = "it holds whatever was in memory, different from run to run; use new_zeros"
# Raw storage, decided by principle: set_ makes a tensor share another's storage (with any offset,
# size and stride), resize_ re-sizes the storage in place and leaves new elements uninitialised.
# Neither can be sized as an operation on values, so both stay out, saying what to write instead.
_SHARED_STORAGE = (
    "it makes the tensor share another tensor's storage (raw memory), which programs never touch; "
    "write x.data = y, or x.copy_(y) for the same shape"
)
_RESIZED_STORAGE = (
    "it re-sizes the tensor's storage in place, and new elements are uninitialised memory; "
    "write x.reshape(...), or a new tensor (torch.zeros(...))"
)

# Tensor members a program may not use, and why (the rest of the public API is open).
DENIED_TENSOR_ATTRS: Mapping[str, str] = MappingProxyType(
    {
        "numpy": "NumPy is not part of programs",
        "tofile": _FILES,
        "storage": _MEMORY,
        "untyped_storage": _MEMORY,
        "storage_type": _MEMORY,
        "storage_offset": _MEMORY,
        "data_ptr": _MEMORY,
        "share_memory_": _MEMORY,
        "is_shared": _MEMORY,
        "pin_memory": _MEMORY,
        "record_stream": _MEMORY,
        "set_": _SHARED_STORAGE,
        "resize": _RESIZED_STORAGE,
        "resize_": _RESIZED_STORAGE,
        "resize_as": _RESIZED_STORAGE,
        "resize_as_": _RESIZED_STORAGE,
        "sparse_resize_": _MEMORY,
        "sparse_resize_and_clear_": _MEMORY,
        "as_strided": _MEMORY,
        "as_strided_": _MEMORY,
        "as_strided_scatter": _MEMORY,
        "new": _MEMORY,
        "to_dlpack": _MEMORY,
        "module_load": _MEMORY,
        "as_subclass": _CODE,
        "register_hook": _CODE,
        "register_post_accumulate_grad_hook": _CODE,
        "apply_": _CODE,
        "map_": _CODE,
        "map2_": _CODE,
        "new_empty_strided": _UNINITIALISED,
    }
)

# Members denied by what their names hold, on any value, whatever PyTorch adds beside them:
# const_data_ptr and mutable_data_ptr give an address as data_ptr does; the storages,
# DLPack capsules, shared and pinned memory reach raw memory.
DENIED_FAMILIES: tuple[tuple[str, str], ...] = (
    ("data_ptr", _MEMORY),
    ("storage", _MEMORY),
    ("address", _MEMORY),
    ("dlpack", _MEMORY),
    ("share_memory", _MEMORY),
    ("pin_memory", _MEMORY),
    ("ipc_", _MEMORY),
)


def denied_attribute(name: str) -> str | None:
    """Why ``.name`` is denied (by name, or by its family), or None.

    >>> denied_attribute("const_data_ptr") == denied_attribute("data_ptr"), denied_attribute("grad")
    (True, None)
    """
    reason = DENIED_TENSOR_ATTRS.get(name)
    if reason is None:
        reason = next((why for part, why in DENIED_FAMILIES if part in name), None)
    return reason


# torch members people reach for that stay out, with the reason a learner is shown.
REFUSED_TORCH_MEMBERS: Mapping[str, str] = MappingProxyType(
    {
        "save": _FILES,
        "load": _FILES,
        "from_file": _FILES,
        "serialization": _FILES,
        "package": _FILES,
        "hub": "programs cannot download code or models",
        "ops": "torch.ops reaches PyTorch's raw operators, outside the checked language",
        "library": "torch.library reaches PyTorch's raw operators, outside the checked language",
        "classes": "torch.classes reaches PyTorch's raw operators, outside the checked language",
        "jit": "programs cannot compile code",
        "compile": "programs cannot compile code",
        "fx": "programs cannot compile code",
        "export": "programs cannot compile code",
        "from_numpy": "NumPy is not part of programs",
        "frombuffer": _MEMORY,
        "as_strided": _MEMORY,
        "distributed": "programs run in one process",
        "multiprocessing": "programs run in one process",
        "set_default_device": "choose the device in the window or with --device, not in the program",
        "set_default_dtype": "global settings would leak into later recordings",
        "use_deterministic_algorithms": "global settings would leak into later recordings",
    }
)


# NOTE [torch surface] in torch_names.py: the one deny-list over torch's own registry of
# operations. A name is refused by what it holds (a family), whatever PyTorch adds beside it.
_BACKEND = "it is a backend's or quantisation's own kernel, outside what programs show"
_CALLABLE = "it takes a Python function of its own, which programs never hand to PyTorch"
REFUSED_OP_FAMILIES: tuple[tuple[str, str], ...] = (
    *DENIED_FAMILIES,
    ("quantize", _BACKEND),
    ("quantized", _BACKEND),
    ("qparams", _BACKEND),
    ("q_", _BACKEND),
    ("fbgemm", _BACKEND),
    ("miopen", _BACKEND),
    ("mkldnn", _BACKEND),
    ("cudnn", _BACKEND),
    ("int_repr", _BACKEND),
    ("sym_", "it works on symbolic sizes of compiled code, which programs never make"),
    ("unsafe_", _MEMORY),
    ("as_strided", _MEMORY),
    ("empty", _UNINITIALISED),
    ("distributed", "programs run in one process"),
    ("batch_norm_", _BACKEND),  # batch_norm_stats, batch_norm_elemt: the pieces of SyncBatchNorm
    ("fake_quant", _BACKEND),
)
REFUSED_OPS: Mapping[str, str] = MappingProxyType(
    {
        "lobpcg": _CALLABLE,  # tracker=
        "triplet_margin_with_distance_loss": _CALLABLE,  # distance_function=
        "segment_reduce": _BACKEND,
        "dequantize": _BACKEND,
        "hash_tensor": _MEMORY,
        "get_device": "choose the device in the window or with --device",
    }
)


def refused_op(name: str) -> str | None:
    """Why a function of torch's registry stays out of programs (private, denied by name or by
    family), or None.

    >>> refused_op("quantize_per_tensor") is not None, refused_op("_fused_rms_norm") is not None
    (True, True)
    >>> refused_op("unfold") is None, refused_op("lobpcg") is None
    (True, False)
    """
    if name.startswith("_"):
        return "names starting with _ are PyTorch's own"
    reason = REFUSED_OPS.get(name) or REFUSED_TORCH_MEMBERS.get(name) or DENIED_TENSOR_ATTRS.get(name)
    if reason is None:
        reason = next((why for part, why in REFUSED_OP_FAMILIES if part in name), None)
    return reason

"""Which devices torch reports, and why one cannot be used.

>>> cpu = list_devices()[0]
>>> (cpu.name, cpu.available)
('cpu', True)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from app.core.model.errors import ProgramError

__all__ = ["DeviceInfo", "list_devices", "resolve_device"]


@dataclass(frozen=True)
class DeviceInfo:
    """One device torch reports, whether it can be used, and why not when it cannot.

    >>> DeviceInfo("cuda", "CUDA", False, "no GPU").available
    False
    """

    name: str  # what torch.device() accepts: "cpu", "cuda:0", "mps"
    description: str  # for people: "NVIDIA H200 (cuda:0)"
    available: bool
    reason: str = ""  # why not, when unavailable


def _cuda_devices() -> list[DeviceInfo]:
    if not torch.backends.cuda.is_built():
        return [
            DeviceInfo("cuda", "CUDA", False, "this PyTorch build has no CUDA support (a CPU-only build)")
        ]
    if not torch.cuda.is_available():
        return [DeviceInfo("cuda", "CUDA", False, "PyTorch has CUDA, but it finds no usable GPU or driver")]
    return [
        DeviceInfo(f"cuda:{i}", f"{torch.cuda.get_device_name(i)} (cuda:{i})", True)
        for i in range(torch.cuda.device_count())
    ]


def _mps_devices() -> list[DeviceInfo]:
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_built():
        return []  # torch has no MPS backend here: nothing to offer or explain
    if not mps.is_available():
        return [
            DeviceInfo(
                "mps", "Apple GPU (MPS)", False, "MPS is built in, but needs macOS 12.3+ on Apple silicon"
            )
        ]
    return [DeviceInfo("mps", "Apple GPU (MPS)", True)]


def list_devices() -> list[DeviceInfo]:
    """CPU always; then every CUDA device torch reports, then MPS where torch has it.

    >>> list_devices()[0]
    DeviceInfo(name='cpu', description='CPU', available=True, reason='')
    """
    return [DeviceInfo("cpu", "CPU", True), *_cuda_devices(), *_mps_devices()]


def resolve_device(name: str) -> torch.device:
    """Check ``name`` against what torch reports; raise a clear :class:`ProgramError` if unusable.

    >>> resolve_device("cpu")
    device(type='cpu')
    >>> try:
    ...     resolve_device("gpu0")
    ... except ProgramError as exc:
    ...     print(exc.field, "|", exc.message.split(" (")[0])
    device | 'gpu0' is not a device name
    """
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError) as exc:
        raise ProgramError(f"'{name}' is not a device name ({exc})", field="device") from None
    devices = list_devices()
    report = ", ".join(d.name + ("" if d.available else " (unavailable)") for d in devices)
    if device.type == "cpu":
        return device
    if device.type == "cuda" and torch.cuda.is_available():
        index = 0 if device.index is None else device.index
        if index < torch.cuda.device_count():
            return torch.device("cuda", index)
        raise ProgramError(f"there is no {name}; torch reports: {report}", field="device")
    for info in devices:
        if info.name.split(":")[0] == device.type and info.available:
            return device
        if info.name.split(":")[0] == device.type:
            raise ProgramError(
                f"{name} is unavailable: {info.reason}; torch reports: {report}", field="device"
            )
    raise ProgramError(f"{name} is not a device this PyTorch offers; torch reports: {report}", field="device")

"""The one place that decides which device runs the work."""

from __future__ import annotations

import functools

from .errors import InputError

DEVICES = ("auto", "cpu", "gpu")


@functools.cache
def gpu_status() -> tuple[bool, str]:
    """(available, description): CuPy imports and at least one CUDA device answers."""
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001 - any import failure means no GPU backend
        return False, f"CuPy not importable ({type(exc).__name__}: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no driver, no device
        return False, f"no CUDA device ({type(exc).__name__}: {exc})"
    if count < 1:
        return False, "no CUDA device"
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return True, f"{count} CUDA device(s), device 0: {name}"


def resolve(device: str) -> str:
    """Map ``auto``/``cpu``/``gpu`` to ``cpu`` or ``gpu``; ``gpu`` without one is an error."""
    if device not in DEVICES:
        raise InputError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cpu":
        return "cpu"
    ok, why = gpu_status()
    if device == "gpu":
        if not ok:
            raise InputError(f"device 'gpu' requested but no GPU is usable: {why}")
        return "gpu"
    return "gpu" if ok else "cpu"

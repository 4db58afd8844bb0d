"""The one place that decides which device runs the work."""

from __future__ import annotations

import functools
import numbers

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


def gpu_count() -> int:
    """Number of CUDA devices this process sees (``CUDA_VISIBLE_DEVICES`` applies); 0 without
    a usable GPU."""
    if not gpu_status()[0]:
        return 0
    import cupy

    return int(cupy.cuda.runtime.getDeviceCount())


def check_devices(devices: object) -> tuple[int, ...] | None:
    """``devices`` (None, GPU indices, or a string such as ``"0,1"``) as a tuple of distinct
    indices, None for every visible GPU; an InputError names an index that is not there."""
    if devices is None:
        return None
    if isinstance(devices, str):
        parts = [p.strip() for p in devices.split(",")]
        if not all(p.isdigit() for p in parts):
            raise InputError(f"devices must be comma-separated GPU indices such as 0,1, "
                             f"got {devices!r}")
        devices = [int(p) for p in parts]
    try:
        chosen = list(devices)  # type: ignore[call-overload]
    except TypeError:
        raise InputError(f"devices must be a list of GPU indices, got {devices!r}") from None
    if not chosen or any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0
                         for d in chosen):
        raise InputError(f"devices must be a non-empty list of GPU indices, got {devices!r}")
    chosen = [int(d) for d in chosen]
    if len(set(chosen)) != len(chosen):
        raise InputError(f"devices lists a GPU twice: {devices!r}")
    count = gpu_count()
    for d in chosen:
        if d >= count:
            seen = ", ".join(map(str, range(count))) or "none"
            raise InputError(f"GPU device index {d} does not exist: {count} visible ({seen})")
    return tuple(chosen)


def gpus(devices: tuple[int, ...] | None) -> tuple[int, ...]:
    """The GPUs a run uses: the checked ``devices``, or every visible one."""
    return devices if devices is not None else tuple(range(max(gpu_count(), 1)))

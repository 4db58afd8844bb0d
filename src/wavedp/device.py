"""The one place that decides which device runs the work: :func:`choose` resolves what the
caller asked for (``auto``, ``cpu`` or ``gpu``, and which GPUs) once per call into a
:class:`Device`, which is passed down from there."""

from __future__ import annotations

import ctypes
import functools
import numbers
import os
import threading
from dataclasses import dataclass

from .errors import InputError

DEVICES = ("auto", "cpu", "gpu")

#: where the NVIDIA driver lists the machine's GPUs, one folder each (read before CUDA starts)
DRIVER_GPUS = "/proc/driver/nvidia/gpus"


_probing = threading.Lock()


def gpu_status() -> tuple[bool, str]:
    """(available, description): CuPy imports and at least one CUDA device answers (found
    once; a second thread asking meanwhile waits for the first's answer)."""
    with _probing:
        return _probe()


@functools.cache
def _probe() -> tuple[bool, str]:
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001 - any import failure means no GPU backend
        return False, f"CuPy not importable ({type(exc).__name__}: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no driver, no device
        if _driver_version(cupy) == 0:  # CUDA then says "driver version is insufficient"
            return False, "no NVIDIA driver on this machine"
        return False, f"no usable CUDA device ({type(exc).__name__}: {exc})"
    if count < 1:
        return False, "no CUDA device"
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return True, f"{count} CUDA device(s), device 0: {name}"


def start_gpus(device: str, devices: object = None) -> None:
    """Begin, in background threads, what a call on ``device`` (``auto`` or ``gpu``; the
    CPU needs nothing) will need of its GPUs: the driver's start and each GPU's CUDA
    context, a thread per GPU (:func:`open_contexts`, without the interpreter's lock), and
    CuPy's import on another, so that they and the caller's own work meanwhile overlap.
    Whatever goes wrong is left for :func:`choose` to report; the process waits for the
    threads at exit."""
    if device in ("auto", "gpu"):
        for gpu in gpus_ahead(devices):  # one thread a GPU: their contexts made at once
            threading.Thread(target=open_contexts, args=((gpu,),),
                             name=f"wavedp-gpu-context-{gpu}").start()
        threading.Thread(target=_start, args=(devices,), name="wavedp-gpu-start").start()


#: the CUDA driver's library (the runtime CuPy loads starts it; the contexts it makes are the
#: devices' primary contexts, which the runtime uses)
DRIVER_LIBRARY = "libcuda.so.1"


@functools.cache
def driver() -> ctypes.CDLL:
    """The CUDA driver's C interface (CuPy wraps neither its start on a thread of its own
    nor stream attributes nor the persisting L2 reset); OSError where no driver is
    installed."""
    return ctypes.CDLL(DRIVER_LIBRARY)


def open_contexts(gpus: tuple[int, ...]) -> bool:
    """Start the CUDA driver and make the primary context of each of ``gpus``, through the
    driver's C interface (ctypes lets go of the interpreter's lock for each call): the
    0.2-0.4 s the driver takes then overlaps CuPy's import, which holds the lock, instead
    of following it; CuPy's runtime finds the contexts made. A context is retained once
    and kept to the process's end (the runtime would keep it as long). False where there is
    no driver or it fails (nothing is reported here: :func:`choose` meets it through CuPy)."""
    if not gpus:
        return False
    try:
        cuda = driver()
        if cuda.cuInit(0):
            return False
        for index in gpus:
            handle, context = ctypes.c_int(), ctypes.c_void_p()
            if (cuda.cuDeviceGet(ctypes.byref(handle), index)
                    or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), handle)):
                return False
    except (OSError, AttributeError):  # no driver library, or one without these calls
        return False
    return True


def _start(devices: object) -> None:
    try:
        if not gpu_status()[0]:
            return
        import cupy

        chosen = check_devices(devices)
        for d in chosen if chosen is not None else range(gpu_count()):
            if d != cupy.cuda.runtime.getDevice():
                cupy.cuda.runtime.setDevice(d)  # this thread's device (and its context)
            cupy.cuda.runtime.deviceSynchronize()  # the context, without the lock
    except Exception:  # noqa: BLE001, S110 - choose() meets and reports it again
        pass


def _driver_version(cupy) -> int:
    """The CUDA driver's version, 0 where no driver is installed."""
    try:
        return int(cupy.cuda.runtime.driverGetVersion())
    except Exception:  # noqa: BLE001 - no driver library at all
        return 0


@dataclass(frozen=True)
class Device:
    """A resolved device: ``kind`` ``cpu`` or ``gpu``, the GPU indices the work uses
    (``gpus``, empty on the CPU), and whether ``auto`` chose it."""

    kind: str
    gpus: tuple[int, ...] = ()
    auto: bool = False

    @property
    def gpu(self) -> bool:
        """Whether the work runs on the GPU."""
        return self.kind == "gpu"

    def describe(self) -> str:
        """What runs the work, for the user: ``GPU (2 CUDA device(s), device 0: ...)``."""
        ok, why = gpu_status()
        return f"{self.kind.upper()} ({why if ok else f'no GPU: {why}'})"


def choose(device: str | Device = "auto", devices: object = None) -> Device:
    """The :class:`Device` of a call: ``device`` ``auto`` (the GPU when one is usable, else
    the CPU), ``cpu`` or ``gpu`` (an InputError without one), and on the GPU ``devices``
    (indices, or a string such as ``"0,1"``; default every visible GPU). A Device given is
    already resolved and returned as it is."""
    if isinstance(device, Device):
        if devices is not None:
            raise InputError("devices applies to a device name, not to a resolved Device")
        return device
    kind = _kind(device)
    if devices is not None and kind != "gpu":
        raise InputError("devices applies to the GPU engine only")
    chosen = check_devices(devices)
    if kind == "cpu":
        return Device("cpu", (), device == "auto")
    return Device("gpu", chosen if chosen is not None else tuple(range(max(gpu_count(), 1))),
                  device == "auto")


def _kind(device: str) -> str:
    """Map ``auto``/``cpu``/``gpu`` to ``cpu`` or ``gpu``; ``gpu`` without one is an error
    (:func:`choose` gives the whole :class:`Device`)."""
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
    chosen = _indices(devices)
    if chosen is None:
        return None
    count = gpu_count()
    for d in chosen:
        if d >= count:
            seen = ", ".join(map(str, range(count))) or "none"
            raise InputError(f"GPU device index {d} does not exist: {count} visible ({seen})")
    return chosen


def _indices(devices: object) -> tuple[int, ...] | None:
    """``devices`` parsed as :func:`check_devices` takes it, not checked against the GPUs."""
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
    return tuple(chosen)


def gpus_ahead(devices: object = None) -> tuple[int, ...]:
    """The GPUs a call on ``devices`` is expected to use, told before CuPy is loaded (work
    that depends on them can begin while the GPUs start; :func:`choose` decides): the
    indices given, else as many as the NVIDIA driver lists (:data:`DRIVER_GPUS`), at most
    as many as ``CUDA_VISIBLE_DEVICES`` names; () where no driver is seen or ``devices`` is
    not valid (:func:`choose` reports it)."""
    try:
        found = len(os.listdir(DRIVER_GPUS))
        chosen = _indices(devices)
    except (OSError, InputError):
        return ()
    if chosen is not None:
        return chosen if found else ()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        found = min(found, len([v for v in visible.split(",") if v.strip()]))
    return tuple(range(found))

"""The calibration file: a device's measured constants (:class:`Model`) for the scan's cost
model, stored per device kind (``gpu`` or ``cpu``) in the user's cache directory by
``wavedp calibrate``, and tied to the device and the wavedp version that made it."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable

import platformdirs

from ..device import gpu_status
from ..errors import InputError
from ..version import __version__

#: the calibration file's format (a change makes older files an error)
FORMAT = 8


@dataclasses.dataclass
class Model:
    """Calibrated constants of one device (``kind`` gpu or cpu)."""

    kind: str
    device: str
    version: str
    rates: dict[str, float]  # GPU: "G,R,packed" -> lane-cells/s; CPU: "cells" -> cells/s
    single: dict[str, float] = dataclasses.field(default_factory=dict)  # GPU: "G,R" -> one
    # group of G lanes alone, its first pass, lane-cells/s
    later: dict[str, float] = dataclasses.field(default_factory=dict)  # GPU: G -> a later
    # pass of a group alone, in first passes
    packing: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # GPU:
    # "G,R,packing" -> a group's lane-cells/s (first pass) with k = 1, 2, ... blocks on its
    # SM, as many k as are resident at once
    later_shared: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # GPU:
    # G -> a later pass with k = 1, 2, ... blocks on the SM, in first passes
    launch: float = 0.0  # s per launch (GPU, host) or per query call (CPU)
    start: float = 0.0  # GPU: s of a kernel's fixed start (its blocks placed, profiles read)
    unit: float = 0.0  # GPU, host: s per profile of a launch (its queries gathered)
    profile: float = 0.0  # GPU, host: s per profile word
    subject: float = 0.0  # GPU, host: s per subject of a launch (its indices sent)
    word: float = 0.0  # GPU, on the GPU: s per result word (profile x subject) scattered
    side: float = 0.0  # GPU, on the GPU: s per launch besides its kernel and the per-word
    # scatter (the input copy, the profiles built, the scatter's launch)
    sms: int = 0
    calibrated: bool = True
    seconds: float = 0.0  # how long the calibration took
    grid_cap: int | None = None  # GPU: at most this many blocks per launch (a scan run on
    # part of the GPU, as the energy lab's capped searches run it); a setting, never stored


def capped(model: Model, blocks: int | None) -> Model:
    """``model`` for scans whose launches run at most ``blocks`` blocks (None: ``model``)."""
    return model if blocks is None else dataclasses.replace(model, grid_cap=max(1, int(blocks)))


def model_version() -> str:
    """What a calibration file is tied to besides the device: wavedp's version and FORMAT."""
    return f"{__version__} (format {FORMAT})"


def device_name(kind: str) -> str:
    """What a calibration is tied to: the GPU's name and multiprocessor count ("" without
    a usable GPU), or the CPU's model and core count."""
    if kind == "gpu":
        if not gpu_status()[0]:
            return ""
        import cupy  # optional: present where gpu_status found a GPU

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        return f"{name}, {props['multiProcessorCount']} SMs"
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores"


def cache_path(kind: str) -> str:
    """The calibration file of ``kind`` (gpu or cpu) in the user's cache directory."""
    return os.path.join(platformdirs.user_cache_dir("wavedp"), f"calibration-{kind}.json")


def save(model: Model) -> str:
    """Write ``model`` to its cache file atomically; returns the path."""
    path = cache_path(model.kind)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({k: v for k, v in dataclasses.asdict(model).items() if k != "grid_cap"}, f,
                  indent=1)
    os.replace(tmp, path)
    return path


def load(kind: str, device: str | None = None) -> Model | None:
    """The stored calibration of ``kind`` (None if there is none); an InputError for one of
    another device (``device``: this one's name) or wavedp version, or an unreadable one."""
    path = cache_path(kind)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            model = Model(**json.load(f))
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"file {path}: not a wavedp calibration ({exc}); run wavedp "
                         "calibrate again") from None
    if model.version != model_version():
        raise InputError(f"file {path}: calibrated with wavedp {model.version}, this is "
                         f"{model_version()}; run wavedp calibrate --device {kind} again")
    device = device if device is not None else device_name(kind)
    if device and model.device != device:
        raise InputError(f"file {path}: calibrated on {model.device}, this is {device}; run "
                         f"wavedp calibrate --device {kind} again")
    return model


def kernel_only(model: Model, start: bool = True) -> Model:
    """``model`` with the host's costs and the GPU's besides the kernel at zero (with
    ``start`` False, the kernel's fixed start too): what predicts a kernel alone."""
    return dataclasses.replace(model, launch=0.0, unit=0.0, profile=0.0, subject=0.0,
                               word=0.0, side=0.0, **({} if start else {"start": 0.0}))


def memo(model: Model, key: tuple, compute: Callable[[], object]):
    """``compute()`` once per model and ``key`` (a model's constants do not change once it
    is made; the planner asks for the same shapes' rates thousands of times)."""
    cache = model.__dict__.setdefault("_memo", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]

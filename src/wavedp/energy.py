"""The GPU energy of a run, read through NVML (``nvidia-ml-py``, the ``energy`` extra,
imported when a measurement starts).

``with wavedp.energy.measure() as m: ...`` reads each GPU's total-energy counter
(``nvmlDeviceGetTotalEnergyConsumption``, millijoules) around the block and samples its power
(``nvmlDeviceGetPowerUsage``, milliwatts) every ``SAMPLE_S`` seconds from a background thread.
The counter moves in coarse steps (tens of milliseconds on some GPUs), so a block shorter
than ``COUNTER_MIN_S``, or a GPU without the counter, integrates the samples instead;
``m.source`` says which. GPUs are CUDA device ordinals (default: CuPy's current device), found
in NVML by PCI bus id, since ``CUDA_VISIBLE_DEVICES`` may reorder them.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from .device import gpu_status
from .errors import InputError

#: seconds between power samples
SAMPLE_S = 0.015
#: a block at least this long reports the energy counter, a shorter one the samples' integral
COUNTER_MIN_S = 1.0
SOURCES = {"counter": "NVML energy counter",
           "samples": f"NVML power sampled every {SAMPLE_S * 1e3:.0f} ms, integrated"}


@dataclass
class Measurement:
    """The energy of ``devices`` (CUDA ordinals) over a ``with measure()`` block, filled in
    when the block ends."""
    devices: tuple[int, ...]
    seconds: float = math.nan
    joules: float = math.nan
    #: "counter" or "samples": where ``joules`` comes from
    source: str = ""
    #: the energy counters' difference (None where a GPU has no counter)
    counter_joules: float | None = None
    #: the integral of the power samples
    sample_joules: float = math.nan
    #: (seconds since the start, watts of all the devices)
    samples: list[tuple[float, float]] = field(default_factory=list)

    @property
    def mean_watts(self) -> float:
        return self.joules / self.seconds if self.seconds > 0 else math.nan

    @property
    def peak_watts(self) -> float:
        return max((w for _, w in self.samples), default=math.nan)


def _nvml():
    """The pynvml module, initialised; an InputError where it is missing or NVML fails."""
    try:
        import pynvml
    except ImportError:
        raise InputError("energy measurement needs NVML's Python bindings: "
                         "pip install 'wavedp[energy]' (nvidia-ml-py)") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise InputError(f"energy measurement needs NVML, which is not usable here: "
                         f"{exc}") from None
    return pynvml


def _bus_ids(devices: Sequence[int] | None) -> list[tuple[int, str]]:
    """(CUDA ordinal, PCI bus id) of each device (CuPy's current one for None)."""
    ok, why = gpu_status()
    if not ok:
        raise InputError(f"energy measurement needs a GPU, and none is usable: {why}")
    import cupy

    ordinals = [cupy.cuda.Device().id] if devices is None else list(devices)
    return [(d, cupy.cuda.runtime.deviceGetPCIBusId(d)) for d in ordinals]


def _synchronize(devices: Sequence[int]) -> None:
    """Wait for the work queued on ``devices``."""
    import cupy

    for d in devices:
        with cupy.cuda.Device(d):
            cupy.cuda.runtime.deviceSynchronize()


def _handles(nvml, gpus: list[tuple[int, str]]) -> list:
    handles = []
    for ordinal, bus in gpus:
        try:
            handles.append(nvml.nvmlDeviceGetHandleByPciBusId(bus))
        except nvml.NVMLError as exc:
            raise InputError(f"NVML does not find GPU {ordinal} (PCI bus {bus}): {exc}") from None
    return handles


def _counter(nvml, handles: list) -> float | None:
    """The devices' energy counters summed, in joules; None where one has none."""
    try:
        return sum(nvml.nvmlDeviceGetTotalEnergyConsumption(h) for h in handles) / 1e3
    except nvml.NVMLError:
        return None


def _watts(nvml, handles: list) -> float:
    try:
        return sum(nvml.nvmlDeviceGetPowerUsage(h) for h in handles) / 1e3
    except nvml.NVMLError as exc:
        raise InputError(f"NVML cannot read the GPU's power: {exc}") from None


class _Sampler(threading.Thread):
    """Samples ``read`` (watts) every ``interval`` seconds between :meth:`begin` and
    :meth:`finish`; a failed read ends the sampling, the last reading held to the end."""
    def __init__(self, read: Callable[[], float], interval: float) -> None:
        super().__init__(daemon=True)
        self.read, self.interval = read, interval
        self.halt = threading.Event()
        self.samples: list[tuple[float, float]] = []
        self.t0 = 0.0

    def sample(self) -> None:
        self.samples.append((time.perf_counter() - self.t0, self.read()))

    def begin(self) -> None:
        watts = self.read()
        self.t0 = time.perf_counter()
        self.samples.append((0.0, watts))
        self.start()

    def run(self) -> None:
        with contextlib.suppress(InputError):
            while not self.halt.wait(self.interval):
                self.sample()

    def finish(self) -> float:
        """Stop, with a last sample; the seconds since :meth:`begin`."""
        self.halt.set()
        self.join()
        seconds = time.perf_counter() - self.t0
        try:
            watts = self.read()
        except InputError:
            watts = self.samples[-1][1]
        self.samples.append((seconds, watts))
        return seconds


def integrate(samples: Sequence[tuple[float, float]]) -> float:
    """Joules of (seconds, watts) samples, by the trapezoidal rule."""
    return sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in pairwise(samples))


def busiest_watts(samples: Sequence[tuple[float, float]], seconds: float) -> float:
    """The highest mean power over any stretch of ``seconds`` of (seconds, watts) samples
    (their mean where they span no more; nan where there are none): the power of a run that
    is the busiest stretch of a longer measurement."""
    if not samples:
        return math.nan
    if samples[-1][0] - samples[0][0] <= seconds:
        return sum(w for _, w in samples) / len(samples)
    best, total, end = -math.inf, 0.0, 0
    for start, (t, w) in enumerate(samples):
        while end < len(samples) and samples[end][0] <= t + seconds:
            total += samples[end][1]
            end += 1
        if end == len(samples):  # this stretch, and every later one, runs past the samples
            break
        best = max(best, total / (end - start))
        total -= w
    return best


def choose(seconds: float, counter: float | None, sampled: float) -> tuple[float, str]:
    """(joules, source): the counter for a long enough block where it moved, else the
    samples' integral."""
    if counter is not None and counter > 0 and seconds >= COUNTER_MIN_S:
        return counter, "counter"
    return sampled, "samples"


@contextlib.contextmanager
def measure(device: int | Sequence[int] | None = None,
            interval: float = SAMPLE_S) -> Iterator[Measurement]:
    """Measure the energy the GPU ``device`` (a CUDA ordinal, several, or None for CuPy's
    current device) uses during the ``with`` block; the work queued on it is waited for at
    both ends. An InputError, before the block runs, where NVML or a GPU is missing."""
    nvml = _nvml()
    try:
        gpus = _bus_ids(None if device is None else
                        [device] if isinstance(device, int) else list(device))
        handles = _handles(nvml, gpus)
        m = Measurement(tuple(d for d, _ in gpus))
        _synchronize(m.devices)
        sampler = _Sampler(lambda: _watts(nvml, handles), interval)
        start = _counter(nvml, handles)
        sampler.begin()
        try:
            yield m
            _synchronize(m.devices)
        finally:
            m.seconds = sampler.finish()
        end = _counter(nvml, handles)
        m.samples = sampler.samples
        m.counter_joules = None if start is None or end is None else end - start
        m.sample_joules = integrate(m.samples)
        m.joules, m.source = choose(m.seconds, m.counter_joules, m.sample_joules)
    finally:
        nvml.nvmlShutdown()


def summary(m: Measurement, cells: int) -> str:
    """The one line ``--energy`` prints: joules, seconds, mean and peak watts, where the
    joules come from, GCUPS and GCUPS per watt (cells / 1e9 / joules)."""
    gpus = ",".join(map(str, m.devices))
    per_watt = cells / 1e9 / m.joules if m.joules > 0 else math.nan
    return (f"wavedp: energy: {m.joules:.4g} J in {m.seconds:.3g} s on GPU {gpus} "
            f"(mean {m.mean_watts:.0f} W, peak {m.peak_watts:.0f} W; {SOURCES[m.source]}); "
            f"{cells / m.seconds / 1e9:.4g} GCUPS, {per_watt:.4g} GCUPS/W")

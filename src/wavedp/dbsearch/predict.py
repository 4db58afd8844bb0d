"""The performance predictor as a search and ``wavedp predict`` use it: the device's model
(:func:`model_for`: its calibration or the built-in constants), :func:`calibrate`, and a
whole search's plan (:func:`search_plan`). The cost model and the planner live with the GPU
scan (``engines/cuda/scan``: ``cost``, ``planner``, ``calibrate``), the CPU's with its scan
(``engines/cpu/scan.py``), the calibration file in ``engines/calibration.py``."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..engines.calibration import Model
from ..engines.cpu.scan import calibrate_cpu, cpu_model
from ..engines.cuda.scan.calibrate import calibrate_gpu
from ..engines.cuda.scan.model import gpu_model
from ..engines.cuda.scan.planner import CANDIDATES, schedule, schedules
from ..engines.cuda.scan.shapes import OUT_BYTES, SCRATCH_BYTES, pair_up, scan_need
from .hitlist import query_batches


def model_for(kind: str) -> Model:
    """The model of this process's ``kind`` (``gpu`` or ``cpu``) device: its calibration,
    else the built-in constants (loaded once per process)."""
    return gpu_model() if kind == "gpu" else cpu_model()


def calibrate(kind: str, progress: Callable[[str], None] | None = None) -> Model:
    """Measure ``kind``'s constants (well under a minute, kernel compiles included);
    ``progress`` hears each step with the seconds so far."""
    start = time.perf_counter()

    def say(text: str) -> None:
        if progress:
            progress(f"{time.perf_counter() - start:.1f} s: {text}")

    model = calibrate_gpu(say) if kind == "gpu" else calibrate_cpu(say)
    model.seconds = time.perf_counter() - start
    return model


def search_plan(model: Model, query_m: list[int], subj_n: np.ndarray, alphabet: int,
                packed: bool, batch_cells: float) -> dict[str, list[tuple[int, int, int, float]]]:
    """Each partitioning's launches over a resident database for queries of ``query_m``
    residues (each strand a query), in the search's query batches of about ``batch_cells``
    cells: (query batch, units, subjects, predicted seconds) per launch; ``auto``'s
    candidates, and ``none`` (file order) beside them."""
    subj_n = np.asarray(subj_n, np.int64)
    subj_n = subj_n[subj_n > 0]
    need = scan_need(alphabet, model.sms or 132)
    plans: dict[str, list[tuple[int, int, int, float]]] = {n: [] for n in ("none", *CANDIDATES)}
    todo = [k for k, m in enumerate(query_m) if m > 0]
    total = int(subj_n.sum())
    for b, batch in enumerate(query_batches(todo, [query_m[k] for k in todo], total, batch_cells)):
        live = sorted(batch, key=lambda k: -query_m[k])
        unit_m = np.array([query_m[u[0]] for u in pair_up(live, packed)], np.int64)
        if not subj_n.size:
            continue
        found = schedules(model, unit_m, subj_n, alphabet, packed, need,
                          OUT_BYTES + SCRATCH_BYTES, wide=True)
        found["none"] = schedule(model, "none", unit_m, subj_n, alphabet, packed, need,
                                 OUT_BYTES + SCRATCH_BYTES, wide=True)[1:]
        for name, (batches, seconds) in found.items():
            plans[name] += [(b, x.queries.size, x.subjects.size, s)
                            for x, s in zip(batches, seconds, strict=True)]
    return plans



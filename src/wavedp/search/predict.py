"""The performance predictor, as a search uses it: the cost model and planner of the GPU scan
(``wavedp.engines.cuda.scan``: ``cost``, ``planner``, ``calibrate``) and the CPU engine's
(``wavedp.engines.cpu.scan``), calibrated per device (``wavedp.engines.calibration``), and a
whole search's plan (:func:`search_plan`, for ``wavedp predict``) and launch table
(``trace.explain_lines``, for ``search --explain``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..engines.calibration import Model, cache_path, kernel_only, load, save
from ..engines.cpu.scan import DEFAULT_CPU, calibrate_cpu, cpu_model, cpu_seconds
from ..engines.cuda.scan.calibrate import calibrate_gpu
from ..engines.cuda.scan.cost import gpu_seconds, launch_grid, launch_parts, launch_shape
from ..engines.cuda.scan.model import DEFAULT_GPU, gpu_model
from ..engines.cuda.scan.planner import CANDIDATES, schedule, schedules
from ..engines.cuda.scan.shapes import OUT_BYTES, SCRATCH_BYTES, pair_up, scan_need
from ..trace import explain_lines
from .hitlist import query_batches

__all__ = ["CANDIDATES", "DEFAULT_CPU", "DEFAULT_GPU", "Model", "cache_path", "calibrate",
           "cpu_seconds", "explain_lines", "gpu_seconds", "kernel_only", "launch_grid",
           "launch_parts", "launch_shape", "load", "model_for", "save", "schedule",
           "schedules", "search_plan"]


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
    cells: (query batch, units, subjects, predicted seconds) per launch."""
    subj_n = np.asarray(subj_n, np.int64)
    subj_n = subj_n[subj_n > 0]
    need = scan_need(alphabet, model.sms or 132)
    plans: dict[str, list[tuple[int, int, int, float]]] = {n: [] for n in CANDIDATES}
    todo = [k for k, m in enumerate(query_m) if m > 0]
    total = int(subj_n.sum())
    for b, batch in enumerate(query_batches(todo, [query_m[k] for k in todo], total, batch_cells)):
        live = sorted(batch, key=lambda k: -query_m[k])
        unit_m = np.array([query_m[u[0]] for u in pair_up(live, packed)], np.int64)
        if not subj_n.size:
            continue
        found = schedules(model, unit_m, subj_n, alphabet, packed, need,
                          OUT_BYTES + SCRATCH_BYTES, wide=True)
        for name, (batches, seconds) in found.items():
            plans[name] += [(b, x.queries.size, x.subjects.size, s)
                            for x, s in zip(batches, seconds, strict=True)]
    return plans



"""The scan's planner: a partitioning's launches (``partition.py``) priced by the cost model
(``cost.py``), and ``auto``, the candidate of the least predicted total.

A partitioning's launches are its batches, except that a launch shorter on the GPU than the
host's work to enqueue one (a run of them goes at the host's pace) joins the launch before it
where both have the same units and the joined one fits the memory budget (:func:`coalesce`).
``auto`` prices the candidates in turn and stops pricing one once its launches' GPU seconds,
or its host's, pass the best total so far.
"""

from __future__ import annotations

import numpy as np

from ...calibration import Model
from . import partition as part
from .cost import host_fixed, launch_parts, pipelined

#: what ``auto`` weighs: every scheduler, dynamic2 at several shares (a scheduler and its
#: parameters by name, as the engine logs them)
CANDIDATES: dict[str, tuple[str, dict]] = {
    "none": ("none", {}), "static": ("static", {}), "dynamic1": ("dynamic1", {}),
    "dynamic2": ("dynamic2", {}), "dynamic2 share=0.7": ("dynamic2", {"share": 0.7}),
    "dynamic2 share=0.9": ("dynamic2", {"share": 0.9}),
}

#: ``auto`` compares the candidates on about this many subjects (every k-th in file order,
#: and the longest), then cuts the whole chunk with the winner
CHOICE_SUBJECTS = 100_000


def schedule(model: Model, name: str, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
             packed: bool, need: part.Need, budget: int, *, bound: float = np.inf,
             wide: bool = False) -> tuple[str, list[part.Batch], list[float]]:
    """(partitioning, its launches, each one's predicted seconds) for units of ``unit_m``
    rows x subjects of ``subj_n`` (file order); ``name`` a partitioning or a key of
    CANDIDATES; ``auto``: the candidate of the least predicted total. The launches of
    ``none`` take their subjects in file order. Once the launches' GPU seconds alone (each
    launch adds at least those) pass ``bound``, the rest are not priced: the seconds are
    then [inf]. ``wide``: launches priced on :func:`launch_grid`'s wide choice, as the
    engine runs them."""
    if name == "auto":
        sample, scale = _sample(subj_n)
        scaled = need if scale == 1 else (lambda lq, nq, ls, ns: need(lq, nq, ls,
                                                                      int(ns * scale)))
        found = _candidates(model, unit_m, subj_n[sample], alphabet, packed, scaled, budget,
                            prune=True, wide=wide)
        name = min(found, key=lambda n: _total(found[n][1]))
        if scale == 1:
            return name, found[name][0], _seconds(found[name][1])
    name, batches, parts = _priced(model, name, unit_m, subj_n, alphabet, packed, need, budget,
                                   bound=bound, wide=wide)
    return name, batches, _seconds(parts)


def _priced(model: Model, name: str, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
            packed: bool, need: part.Need, budget: int, *, bound: float, wide: bool
            ) -> tuple[str, list[part.Batch], list[tuple[float, float]] | None]:
    """(name, the launches of partitioning ``name``, their predicted (host, GPU) seconds,
    joined by :func:`coalesce`; None once they cannot beat ``bound``), see :func:`schedule`."""
    scheduler, params = CANDIDATES.get(name, (name, {}))
    batches = part.partition(scheduler, unit_m, subj_n, budget, need, **params)
    if scheduler == "none":
        batches = [part.Batch(b.queries, np.sort(b.subjects)) for b in batches]
    if bound < np.inf and _host_least(model, batches) > bound:
        return name, batches, None
    parts: list[tuple[float, float]] = [(0.0, 0.0)] * len(batches)
    least = 0.0
    # the largest first: a candidate that cannot win shows it after the fewest launches
    cells = [float(unit_m[b.queries].sum()) * float(subj_n[b.subjects].sum()) for b in batches]
    for k in np.argsort(cells, kind="stable")[::-1].tolist():
        b = batches[k]
        parts[k] = launch_parts(model, unit_m[b.queries], subj_n[b.subjects], alphabet, packed,
                                wide=wide)
        least += parts[k][1]
        if least > bound:
            return name, batches, None
    return name, *coalesce(model, batches, parts, unit_m, subj_n, alphabet, packed, need,
                           budget=budget, wide=wide)


def _seconds(parts: list[tuple[float, float]] | None) -> list[float]:
    """Each launch's predicted seconds in the pipeline, from their (host, GPU) seconds
    ([inf] for None: not priced in full)."""
    return [np.inf] if parts is None else pipelined([h for h, _ in parts],
                                                    [g for _, g in parts])


def _total(parts: list[tuple[float, float]] | None) -> float:
    """A schedule's predicted seconds, see :func:`_seconds`."""
    return sum(_seconds(parts))


def _host_least(model: Model, batches: list[part.Batch]) -> float:
    """A lower bound of a scan's seconds from its launches' host work alone (the host
    enqueues them one after another; the profile words left out): a candidate of many small
    launches is pruned by it before any is priced."""
    units = np.array([b.queries.size for b in batches], np.float64)
    counts = np.array([b.subjects.size for b in batches], np.float64)
    return float(np.sum(host_fixed(model, units, counts)))


def coalesce(model: Model, batches: list[part.Batch], parts: list[tuple[float, float]],
             unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int, packed: bool,
             need: part.Need, *, budget: int, wide: bool = False
             ) -> tuple[list[part.Batch], list[tuple[float, float]]]:
    """The launches with each one too short to cover the host's preparation of a launch
    (GPU seconds below its host seconds: a run of them goes at the host's pace) joined to the
    launch before it, where both have the same units, the joined one fits ``budget`` and its
    GPU seconds are no more than the two's: one host's work saved, none added on the GPU.
    ``parts`` are each launch's predicted (host, GPU) seconds (``wide``: see
    :func:`schedule`); returned for the launches returned."""
    out, priced = [batches[0]], [parts[0]]
    for b, (host, gpu) in zip(batches[1:], parts[1:], strict=True):
        last = out[-1]
        if gpu < host and np.array_equal(b.queries, last.queries):
            subjects = np.concatenate([last.subjects, b.subjects])
            q, s = unit_m[b.queries], subj_n[subjects]
            if need(int(q.max()), q.size, int(s.max()), s.size) <= budget:
                joined = launch_parts(model, q, s, alphabet, packed, wide=wide)
                if joined[1] <= priced[-1][1] + gpu:
                    out[-1], priced[-1] = part.Batch(b.queries, subjects), joined
                    continue
        out.append(b)
        priced.append((host, gpu))
    return out, priced


def _sample(subj_n: np.ndarray) -> tuple[np.ndarray, float]:
    """Indices of at most about CHOICE_SUBJECTS subjects standing for all (every k-th and
    the 64 longest, in file order), and how many subjects each stands for."""
    if subj_n.size <= CHOICE_SUBJECTS:
        return np.arange(subj_n.size), 1.0
    every = -(-subj_n.size // CHOICE_SUBJECTS)
    marked = np.zeros(subj_n.size, np.bool_)
    marked[::every] = True
    marked[np.argpartition(subj_n, subj_n.size - 64)[-64:]] = True
    picked = np.flatnonzero(marked)
    return picked, subj_n.size / picked.size


def schedules(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
              packed: bool, need: part.Need, budget: int, *, prune: bool = False,
              wide: bool = False) -> dict[str, tuple[list[part.Batch], list[float]]]:
    """Each candidate's launches and their predicted seconds (``prune``: a candidate that
    cannot beat the best before it is not priced in full; its seconds are [inf];
    ``wide``: see :func:`schedule`)."""
    return {name: (batches, _seconds(parts)) for name, (batches, parts)
            in _candidates(model, unit_m, subj_n, alphabet, packed, need, budget, prune=prune,
                           wide=wide).items()}


def _candidates(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                packed: bool, need: part.Need, budget: int, *, prune: bool, wide: bool
                ) -> dict[str, tuple[list[part.Batch], list[tuple[float, float]] | None]]:
    """Each candidate's launches and their (host, GPU) seconds, see :func:`schedules`."""
    found: dict[str, tuple[list[part.Batch], list[tuple[float, float]] | None]] = {}
    best = np.inf
    for name in CANDIDATES:
        found[name] = _priced(model, name, unit_m, subj_n, alphabet, packed, need, budget,
                              bound=best if prune else np.inf, wide=wide)[1:]
        best = min(best, _total(found[name][1]))
    return found

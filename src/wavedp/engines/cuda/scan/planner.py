"""The scan's planner: a partitioning's launches (``partition.py``) priced by the cost model
(``cost.py``), and ``auto``, the candidate of the least predicted total.

The subjects come sorted longest first (a database stores its order, ``wavedp.db``), so a
sorted partitioning cuts runs of equal lengths, not subjects, and a launch's subjects are a
slice of that order. A launch of more than EXACT subjects is priced on a weighted sample of
whole warps' subjects (:func:`_sample`: the first, longest warp, and one warp from the middle
of each stretch of the rest, standing for its stretch). A partitioning's
launches are its batches, except that a launch shorter on the GPU than the host's work to
enqueue one (a run of them goes at the host's pace) joins the launch before it where both
have the same units and the joined one fits the memory budget (:func:`coalesce`). ``auto``
prices the candidates in turn and stops pricing one once its launches' GPU seconds, or its
host's, pass the best total so far.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...calibration import Model
from . import partition as part
from .cost import Priced, host_fixed, pipelined, priced
from .lines import Subjects
from .shapes import WARP

#: what ``auto`` weighs: the sorted schedulers, dynamic2 at several shares (a scheduler and
#: its parameters by name, as the engine logs them); ``none`` (file order: its warps padded
#: to unsorted neighbours, the stored order sorted back to file order first) runs only when
#: named
CANDIDATES: dict[str, tuple[str, dict]] = {
    "static": ("static", {}), "dynamic1": ("dynamic1", {}),
    "dynamic2": ("dynamic2", {}), "dynamic2 share=0.7": ("dynamic2", {"share": 0.7}),
    "dynamic2 share=0.9": ("dynamic2", {"share": 0.9}),
}

#: a launch of more subjects than this is priced on a sample of about this many
EXACT = 2048

#: ``auto`` over at most this many units is ``static``, the others not priced: for one to
#: three queries against 20,000 to 3,000,000 subjects the candidates' predictions differ by
#: a few percent at most, while pricing them cost 37 ms of a one-query search on the H200
#: machine (each new query length a new choice), more than the scan of a median query
FEW_UNITS = 2

#: the host's seconds to plan one launch once its partitioning is chosen (its pricing, kernel
#: shape and grid: 0.6-0.9 ms on the 2-core machine): ``auto`` weighs them beside the scan, as
#: a later search of the same database plans only the partitioning chosen (``choices.py``)
PLAN_LAUNCH = 1e-3


class Plan(NamedTuple):
    """A scan's launches: the partitioning, its batches, each one's pricing (host and GPU
    seconds, kernel shape and grid), its predicted seconds in the pipeline and its longest
    subject."""

    name: str
    batches: list[part.Batch]
    priced: list[Priced]
    seconds: list[float]
    longest: list[int]


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
    subjects = Subjects.of(subj_n)
    if name == "auto":
        found = plan(model, name, unit_m, subj_n, subjects, alphabet, packed, need,
                     budget=budget, wide=wide)
        return found.name, found.batches, found.seconds
    batches, parts = _priced(model, name, unit_m, subj_n, subjects, alphabet, packed, need,
                             budget=budget, bound=bound, wide=wide)
    return name, batches, _seconds(parts)


def plan(model: Model, name: str, unit_m: np.ndarray, lengths: np.ndarray,
         subjects: Subjects, alphabet: int, packed: bool, need: part.Need, *, budget: int,
         wide: bool = False) -> Plan:
    """The launches of partitioning ``name`` (see :func:`schedule`) for units of ``unit_m``
    rows x ``subjects`` (indices into ``lengths``, sorted; a batch's subjects are such
    indices)."""
    if name == "auto" and unit_m.size <= FEW_UNITS:
        name = "static"
    if name == "auto":
        found = _candidates(model, unit_m, lengths, subjects, alphabet, packed, need,
                            budget=budget, prune=True, wide=wide)
        name = min(found, key=lambda n: _total(found[n][1], True))
        batches, parts = found[name]
    else:
        batches, parts = _priced(model, name, unit_m, lengths, subjects, alphabet, packed,
                                 need, budget=budget, bound=np.inf, wide=wide)
    assert parts is not None  # priced in full: the least total, or no bound
    ordered = CANDIDATES.get(name, (name,))[0] != "none"
    longest = [int(lengths[b.subjects[0]]) if ordered else int(lengths[b.subjects].max())
               for b in batches]
    return Plan(name, batches, parts, _seconds(parts), longest)


def _sample(lengths: np.ndarray, subjects: np.ndarray, ordered: bool
            ) -> tuple[np.ndarray, np.ndarray | None]:
    """The lengths of a launch's ``subjects`` (in launch order), and None; or, for more than
    EXACT subjects longest first (``ordered``), those of a sample of whole warps' subjects
    (the first warp's, and one warp's from the middle of each stretch of the rest) and how
    many subjects each stands for."""
    count = int(subjects.size)
    if count <= EXACT or not ordered:
        return lengths[subjects], None
    stretches = EXACT // WARP - 1
    size = (count - WARP) / stretches
    starts = WARP + ((np.arange(stretches) + 0.5) * size).astype(np.int64) // WARP * WARP
    picked = np.concatenate([np.arange(WARP), (starts[:, None] + np.arange(WARP)).ravel()])
    picked = picked[picked < count]
    weights = np.full(picked.size, size / WARP)
    weights[:WARP] = 1.0
    weights *= count / weights.sum()
    return lengths[subjects[picked]], weights


def _priced(model: Model, name: str, unit_m: np.ndarray, lengths: np.ndarray,
            subjects: Subjects, alphabet: int, packed: bool, need: part.Need, *,
            budget: int, bound: float, wide: bool
            ) -> tuple[list[part.Batch], list[Priced] | None]:
    """The launches of partitioning ``name`` and their pricing, joined by :func:`coalesce`
    (None once they cannot beat ``bound``), see :func:`schedule`."""
    scheduler, params = CANDIDATES.get(name, (name, {}))
    if scheduler == "none":
        index = np.sort(subjects.order)
        batches = [part.Batch(b.queries, index[np.sort(b.subjects)])
                   for b in part.none(unit_m, lengths[index], budget, need)]
    else:
        batches = part.partition(scheduler, unit_m, subjects, budget, need, **params)
    # the bound is a total with planning (see _candidates): this candidate's planning counts
    planning = PLAN_LAUNCH * len(batches)
    if bound < np.inf and _host_least(model, batches) + planning > bound:
        return batches, None
    ordered = scheduler != "none"
    samples = [_sample(lengths, b.subjects, ordered) for b in batches]
    parts: list[Priced | None] = [None] * len(batches)
    least = planning
    # the largest first: a candidate that cannot win shows it after the fewest launches
    cells = [float(unit_m[b.queries].sum()) * float(s.sum() if w is None else np.dot(s, w))
             for b, (s, w) in zip(batches, samples, strict=True)]
    for k in np.argsort(cells, kind="stable")[::-1].tolist():
        sample, weights = samples[k]
        parts[k] = priced(model, unit_m[batches[k].queries], sample, alphabet, packed,
                          wide=wide, weights=weights)
        least += parts[k].gpu
        if least > bound:
            return batches, None
    return coalesce(model, batches, parts, unit_m, lengths, alphabet, packed, need,
                    budget=budget, wide=wide, ordered=ordered)


def _seconds(parts: list[Priced] | None) -> list[float]:
    """Each launch's predicted seconds in the pipeline, from their (host, GPU) seconds
    ([inf] for None: not priced in full)."""
    return [np.inf] if parts is None else pipelined([p.host for p in parts],
                                                    [p.gpu for p in parts])


def _total(parts: list[Priced] | None, planning: bool = False) -> float:
    """A schedule's predicted seconds, see :func:`_seconds` (``planning``: and those of
    planning its launches, PLAN_LAUNCH each)."""
    return sum(_seconds(parts)) + (PLAN_LAUNCH * len(parts) if planning and parts else 0.0)


def _host_least(model: Model, batches: list[part.Batch]) -> float:
    """A lower bound of a scan's seconds from its launches' host work alone (the host
    enqueues them one after another; the profile words left out): a candidate of many small
    launches is pruned by it before any is priced."""
    units = np.array([b.queries.size for b in batches], np.float64)
    counts = np.array([b.subjects.size for b in batches], np.float64)
    return float(np.sum(host_fixed(model, units, counts)))


def coalesce(model: Model, batches: list[part.Batch], parts: list[Priced],
             unit_m: np.ndarray, lengths: np.ndarray, alphabet: int, packed: bool,
             need: part.Need, *, budget: int, wide: bool = False, ordered: bool = True
             ) -> tuple[list[part.Batch], list[Priced]]:
    """The launches with each one too short to cover the host's preparation of a launch
    (GPU seconds below its host seconds: a run of them goes at the host's pace) joined to the
    launch before it, where both have the same units, the joined one fits ``budget`` and its
    GPU seconds are no more than the two's: one host's work saved, none added on the GPU.
    ``parts`` are each launch's pricing (``wide``: see :func:`schedule`; ``ordered``: see
    :func:`_sample`); returned for the launches returned."""
    out, kept = [batches[0]], [parts[0]]
    for b, p in zip(batches[1:], parts[1:], strict=True):
        last = out[-1]
        if p.gpu < p.host and np.array_equal(b.queries, last.queries):
            subjects = _joined(last.subjects, b.subjects)
            q = unit_m[b.queries]
            sample, weights = _sample(lengths, subjects, ordered)
            if need(int(q.max()), q.size, int(sample.max()), subjects.size) <= budget:
                joined = priced(model, q, sample, alphabet, packed, wide=wide, weights=weights)
                if joined.gpu <= kept[-1].gpu + p.gpu:
                    out[-1], kept[-1] = part.Batch(b.queries, subjects), joined
                    continue
        out.append(b)
        kept.append(p)
    return out, kept


def _joined(first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """Two launches' subjects one after the other: a slice of the array both are
    consecutive slices of (a stored order), else a copy."""
    owner, start, stop = part.stretch(first)
    other, begin, end = part.stretch(then)
    if owner is other and stop == begin:
        return owner[start:end]
    return np.concatenate([first, then])


def schedules(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
              packed: bool, need: part.Need, budget: int, *, prune: bool = False,
              wide: bool = False) -> dict[str, tuple[list[part.Batch], list[float]]]:
    """Each candidate's launches and their predicted seconds (``prune``: a candidate that
    cannot beat the best before it is not priced in full; its seconds are [inf];
    ``wide``: see :func:`schedule`)."""
    return {name: (batches, _seconds(parts)) for name, (batches, parts)
            in _candidates(model, unit_m, subj_n, Subjects.of(subj_n), alphabet, packed,
                           need, budget=budget, prune=prune, wide=wide).items()}


def _candidates(model: Model, unit_m: np.ndarray, lengths: np.ndarray,
                subjects: Subjects, alphabet: int, packed: bool, need: part.Need, *,
                budget: int, prune: bool, wide: bool
                ) -> dict[str, tuple[list[part.Batch], list[Priced] | None]]:
    """Each candidate's launches and their pricing, see :func:`schedules`."""
    found: dict[str, tuple[list[part.Batch], list[Priced] | None]] = {}
    best = np.inf
    for name in CANDIDATES:
        found[name] = _priced(model, name, unit_m, lengths, subjects, alphabet, packed,
                              need, budget=budget, bound=best if prune else np.inf,
                              wide=wide)
        best = min(best, _total(found[name][1], True))
    return found

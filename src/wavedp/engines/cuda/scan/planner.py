"""The scan's planner: a partitioning's launches (``partition.py``) priced by the cost model
(``cost.py``), and ``auto``, the candidate of the least predicted total.

The subjects come sorted longest first, with their runs of equal lengths (a database stores
both, ``wavedp.db``), so a sorted partitioning cuts runs, not subjects, and a launch's
subjects are a range of that order. Its launches of more than EXACT subjects are priced on
the runs of their ranges, all at once (``ranges.py``); those of fewer on their subjects
(``cost.priced``: ticket by ticket where they are few). ``auto`` ranks the candidates with
every launch priced on its runs (the host's work for a plan does not grow with the
database), drops one once its host's seconds alone, or its launches' seconds, pass the best
total so far, and plans the least as if named. A partitioning's launches are its batches,
except that a launch shorter on the GPU than the host's work to enqueue one (a run of them
goes at the host's pace) joins the launch before it where both have the same units and the
joined one fits the memory budget (:func:`coalesce`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...calibration import Model
from . import partition as part
from . import ranges
from .cost import Priced, host_fixed, pipelined, priced
from .lines import Subjects

#: what ``auto`` weighs: the sorted schedulers, dynamic2 at two shares (a scheduler and its
#: parameters by name, as the engine logs them; share 0.9, predicted 1.7% or more slower
#: than the best on every seeded set of 30,000 to 3,000,000 subjects, took more of a plan's
#: time than all the others); ``none`` (file order: its warps padded to unsorted neighbours, the
#: stored order sorted back to file order first) runs only when named
CANDIDATES: dict[str, tuple[str, dict]] = {
    "static": ("static", {}), "dynamic1": ("dynamic1", {}),
    "dynamic2": ("dynamic2", {}), "dynamic2 share=0.7": ("dynamic2", {"share": 0.7}),
}

#: a sorted launch of at most this many subjects is priced on its subjects once chosen
EXACT = 2048

#: ``auto`` over at most this many units is ``static``, the others not priced: for one to
#: three queries against 20,000 to 3,000,000 subjects the candidates' predictions differ by
#: a few percent at most
FEW_UNITS = 2

#: the seconds ``auto`` adds per launch to a candidate's predicted scan, so that one of many
#: launches must win by more than that (the host's planning of one launch when each was
#: priced on its own, 0.6-0.9 ms on the 2-core machine; kept, so that the choices stay)
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


class _Pricing(NamedTuple):
    """What prices launches over ``subjects`` (indices into ``lengths``, sorted; ``runs``
    their :class:`ranges.Runs`) for units of ``unit_m`` rows (``wide``: see
    :func:`schedule`); ``cut``: each partitioning's batches, and their pricing on their
    runs, once found."""

    model: Model
    unit_m: np.ndarray
    lengths: np.ndarray
    subjects: Subjects
    runs: ranges.Runs
    alphabet: int
    packed: bool
    wide: bool
    cut: dict[str, list]

    def ranged(self, batches: list[part.Batch]) -> list[Priced]:
        """``batches`` (ranges of the sorted order) priced on their runs."""
        if any(b.start is None for b in batches):
            raise ValueError("a launch's subjects are not a range of the sorted order")
        spans = [(b.queries, b.start, b.stop) for b in batches]
        return ranges.priced(self.model, self.unit_m, spans, self.runs, self.alphabet,
                             self.packed, self.wide)

    def one(self, batch: part.Batch, ordered: bool, exact: bool = True) -> Priced:
        """One launch priced (``ordered``: a range of the sorted order; ``exact``: see
        :func:`_priced`)."""
        if ordered and (batch.subjects.size > EXACT or not exact):
            return self.ranged([batch])[0]
        return priced(self.model, self.unit_m[batch.queries], self.lengths[batch.subjects],
                      self.alphabet, self.packed, wide=self.wide)


def schedule(model: Model, name: str, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
             packed: bool, need: part.Need, budget: int, *, wide: bool = False
             ) -> tuple[str, list[part.Batch], list[float]]:
    """(partitioning, its launches, each one's predicted seconds) for units of ``unit_m``
    rows x subjects of ``subj_n`` (file order); ``name`` a partitioning or a key of
    CANDIDATES; ``auto``: the candidate of the least predicted total. The launches of
    ``none`` take their subjects in file order. ``wide``: launches priced on
    :func:`launch_grid`'s wide choice, as the engine runs them."""
    found = plan(model, name, unit_m, subj_n, Subjects.of(subj_n), alphabet, packed, need,
                 budget=budget, wide=wide)
    return found.name, found.batches, found.seconds


def plan(model: Model, name: str, unit_m: np.ndarray, lengths: np.ndarray,
         subjects: Subjects, alphabet: int, packed: bool, need: part.Need, *, budget: int,
         wide: bool = False) -> Plan:
    """The launches of partitioning ``name`` (see :func:`schedule`) for units of ``unit_m``
    rows x ``subjects`` (indices into ``lengths``, sorted; a batch's subjects are such
    indices). ``auto`` ranks the candidates on their runs alone (:func:`_candidates`), then
    plans the one of the least total as if named."""
    if name == "auto" and unit_m.size <= FEW_UNITS:
        name = "static"
    price = _pricing(model, unit_m, lengths, subjects, alphabet, packed, wide)
    if name == "auto":
        found = _candidates(price, need, budget)
        name = min(found, key=lambda n: _total(found[n][1]))
    batches, parts = _priced(price, name, need, budget, np.inf)
    assert parts is not None  # no bound
    ordered = CANDIDATES.get(name, (name,))[0] != "none"
    longest = [int(lengths[b.subjects[0]]) if ordered else int(lengths[b.subjects].max())
               for b in batches]
    return Plan(name, batches, parts, _seconds(parts), longest)


def _pricing(model: Model, unit_m: np.ndarray, lengths: np.ndarray, subjects: Subjects,
             alphabet: int, packed: bool, wide: bool) -> _Pricing:
    return _Pricing(model, np.asarray(unit_m, np.int64), lengths, subjects,
                    ranges.Runs(subjects.runs), alphabet, packed, wide, {})


def _cut(price: _Pricing, name: str, need: part.Need, budget: int) -> list:
    """[batches, their pricing on their runs (None until asked)] of partitioning ``name``,
    cut once per pricing."""
    if name not in price.cut:
        scheduler, params = CANDIDATES.get(name, (name, {}))
        if scheduler == "none":
            index = np.sort(price.subjects.order)
            batches = [part.Batch(b.queries, index[np.sort(b.subjects)]) for b in
                       part.none(price.unit_m, price.lengths[index], budget, need)]
        else:
            batches = part.partition(scheduler, price.unit_m, price.subjects, budget, need,
                                     **params)
        price.cut[name] = [batches, None]
    return price.cut[name]


def _priced(price: _Pricing, name: str, need: part.Need, budget: int, bound: float,
            exact: bool = True) -> tuple[list[part.Batch], list[Priced] | None]:
    """The launches of partitioning ``name`` and their pricing, joined by :func:`coalesce`
    (None once the host's least work and the planning of them cannot beat ``bound``, a
    candidate's total). A sorted partitioning's
    are priced on their runs, except (``exact``) those of at most EXACT subjects, priced on
    their subjects as those of ``none`` are."""
    found = _cut(price, name, need, budget)
    batches = found[0]
    # the bound is a total with planning (see _candidates): this candidate's planning counts
    least = PLAN_LAUNCH * len(batches)
    if bound < np.inf and _host_least(price.model, batches) + least > bound:
        return batches, None
    ordered = CANDIDATES.get(name, (name,))[0] != "none"
    if ordered and found[1] is None:
        found[1] = price.ranged(batches)
    parts = dict(enumerate(found[1])) if ordered else {}
    mine = [k for k, b in enumerate(batches)
            if not ordered or (exact and b.subjects.size <= EXACT)]
    least += sum(parts[k].gpu for k in parts.keys() - set(mine))
    # those on their subjects one by one, the largest first: a candidate that cannot win
    # shows it soonest
    unit_m, lengths = price.unit_m, price.lengths
    cells = [float(unit_m[batches[k].queries].sum()) * float(lengths[batches[k].subjects].sum())
             for k in mine]
    for k in [mine[i] for i in np.argsort(cells, kind="stable")[::-1].tolist()]:
        if least > bound:
            break
        parts[k] = price.one(batches[k], ordered)
        least += parts[k].gpu
    if least > bound:
        return batches, None
    return coalesce(price, batches, [parts[k] for k in range(len(batches))], need, budget,
                    ordered=ordered, exact=exact)


def _seconds(parts: list[Priced] | None) -> list[float]:
    """Each launch's predicted seconds in the pipeline, from their (host, GPU) seconds
    ([inf] for None: not priced in full)."""
    return [np.inf] if parts is None else pipelined([p.host for p in parts],
                                                    [p.gpu for p in parts])


def _total(parts: list[Priced] | None) -> float:
    """A schedule's predicted seconds, see :func:`_seconds`, and those of planning its
    launches, PLAN_LAUNCH each."""
    return sum(_seconds(parts)) + (PLAN_LAUNCH * len(parts) if parts else 0.0)


def _host_least(model: Model, batches: list[part.Batch]) -> float:
    """A lower bound of a scan's seconds from its launches' host work alone (the host
    enqueues them one after another; the profile words left out): a candidate of many small
    launches is pruned by it before any is priced."""
    units = np.array([b.queries.size for b in batches], np.float64)
    counts = np.array([b.subjects.size for b in batches], np.float64)
    return float(np.sum(host_fixed(model, units, counts)))


def coalesce(price: _Pricing, batches: list[part.Batch], parts: list[Priced],
             need: part.Need, budget: int, *, ordered: bool = True, exact: bool = True
             ) -> tuple[list[part.Batch], list[Priced]]:
    """The launches with each one too short to cover the host's preparation of a launch
    (GPU seconds below its host seconds: a run of them goes at the host's pace) joined to the
    launch before it, where both have the same units, the joined one fits ``budget`` and its
    GPU seconds are no more than the two's: one host's work saved, none added on the GPU.
    ``parts`` are each launch's pricing (``ordered``: sorted subjects; ``exact``: see
    :func:`_priced`); returned for the launches returned."""
    out, kept = [batches[0]], [parts[0]]
    for b, p in zip(batches[1:], parts[1:], strict=True):
        last = out[-1]
        if p.gpu < p.host and np.array_equal(b.queries, last.queries):
            batch = _joined(price, last, b)
            subjects = batch.subjects
            q = price.unit_m[b.queries]
            longest = int(price.lengths[subjects[0]] if ordered
                          else price.lengths[subjects].max())
            if need(int(q.max()), q.size, longest, subjects.size) <= budget:
                joined = price.one(batch, ordered, exact)
                if joined.gpu <= kept[-1].gpu + p.gpu:
                    out[-1], kept[-1] = batch, joined
                    continue
        out.append(b)
        kept.append(p)
    return out, kept


def _joined(price: _Pricing, first: part.Batch, then: part.Batch) -> part.Batch:
    """Two launches of ``then``'s queries, their subjects one after the other: a slice of
    the sorted order where both are ranges of it that meet, else a copy."""
    if first.stop is not None and first.stop == then.start:
        return part.Batch(then.queries, price.subjects.order[first.start:then.stop],
                          first.start, then.stop)
    return part.Batch(then.queries, np.concatenate([first.subjects, then.subjects]))


def schedules(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
              packed: bool, need: part.Need, budget: int, *, wide: bool = False
              ) -> dict[str, tuple[list[part.Batch], list[float]]]:
    """Each candidate's launches and their predicted seconds, as :func:`plan` would plan it
    named (``wide``: see :func:`schedule`)."""
    price = _pricing(model, unit_m, subj_n, Subjects.of(subj_n), alphabet, packed, wide)
    out = {}
    for name in CANDIDATES:
        batches, parts = _priced(price, name, need, budget, np.inf)
        out[name] = batches, _seconds(parts)
    return out


def _candidates(price: _Pricing, need: part.Need, budget: int
                ) -> dict[str, tuple[list[part.Batch], list[Priced] | None]]:
    """Each candidate's launches and their pricing on their runs (``exact`` False, see
    :func:`_priced`), ranked as ``auto`` ranks them: one that cannot beat the best before
    it is not priced in full (None)."""
    found: dict[str, tuple[list[part.Batch], list[Priced] | None]] = {}
    best = np.inf
    for name in CANDIDATES:
        found[name] = _priced(price, name, need, budget, best, False)
        best = min(best, _total(found[name][1]))
    return found

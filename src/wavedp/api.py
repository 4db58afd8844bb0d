"""Public alignment API: validates and encodes once, picks the device, builds Alignments."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import device as _device
from .alignment import Alignment, cigars_from_ops
from .engines.common import GLOBAL, MODES
from .errors import InputError
from .scoring import INVALID, Scoring

SeqLike = Any  # str | bytes | Bio.Seq.Seq | Bio.SeqRecord.SeqRecord


def _text(seq: SeqLike) -> tuple[str, str | None]:
    """(sequence text, record id or None) from str, bytes, Bio.Seq or Bio.SeqRecord."""
    if isinstance(seq, str):
        return seq, None
    if isinstance(seq, (bytes, bytearray)):
        return bytes(seq).decode("ascii", "replace"), None
    if hasattr(seq, "seq") and hasattr(seq, "id"):  # SeqRecord
        return str(seq.seq), str(seq.id)
    if type(seq).__name__ in ("Seq", "MutableSeq"):
        return str(seq), None
    raise InputError(f"a sequence must be str, bytes, Bio.Seq or Bio.SeqRecord, got {type(seq)}")


class Prepared:
    """Sequences validated and encoded once: texts, ids and uint8 code arrays (views of one
    array: all sequences go through the scoring's table at once)."""

    def __init__(self, seqs: Iterable[SeqLike], scoring: Scoring, what: str,
                 ids: Sequence[str] | None = None, path: str | None = None) -> None:
        self.texts: list[str] = []
        self.ids: list[str] = []
        for k, seq in enumerate(seqs):
            text, rid = _text(seq)
            rid = ids[k] if ids is not None else (rid if rid is not None else f"{what}{k + 1}")
            self.texts.append(text)
            self.ids.append(rid)
        # one byte per character ("?" for any other than ASCII), so offsets are lengths
        raw = "".join(self.texts).encode("ascii", "replace")
        codes = scoring.lut[np.frombuffer(raw, dtype=np.uint8)]
        ends = np.cumsum([len(t) for t in self.texts], dtype=np.int64)
        bad = np.flatnonzero(codes == INVALID)
        if bad.size:  # the first record holding one says what and where
            k = int(np.searchsorted(ends, bad[0], side="right"))
            scoring.encode(self.texts[k], what=what, record=self.ids[k], path=path)
        self.codes: list[np.ndarray] = np.split(codes, ends[:-1]) if self.texts else []

    @classmethod
    def from_codes(cls, texts: list[str], ids: list[str], codes: list[np.ndarray]) -> Prepared:
        """Sequences encoded elsewhere (a search database's hits, a reverse complement)."""
        self = cls.__new__(cls)
        self.texts, self.ids, self.codes = list(texts), list(ids), list(codes)
        return self


def _mode_code(mode: str) -> int:
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return MODES[mode]


def _check_scoring(scoring: Scoring) -> Scoring:
    if not isinstance(scoring, Scoring):
        raise InputError(f"scoring must be a wavedp.Scoring, got {type(scoring).__name__}")
    return scoring


def engine_for(device: str):
    """The engine module (``align_pairs``) for a resolved device name."""
    if device == "gpu":
        from .engines import cuda

        return cuda
    from .engines import cpu

    return cpu


def check_gpus(devices: object, resolved: str) -> tuple[int, ...] | None:
    """The checked ``devices`` of a run on the resolved device (None: every visible GPU);
    an InputError where they are given to the CPU engine."""
    if devices is not None and resolved != "gpu":
        raise InputError("devices applies to the GPU engine only")
    return _device.check_devices(devices)


def run_pairs(queries: Prepared, targets: Prepared, pairs: np.ndarray, scoring: Scoring,
              mode: str, traceback: bool, device: str,
              strategy: str | None = None, sync: str | None = None,
              storage: str | None = None, devices: object = None) -> list[Alignment]:
    """Align the (query index, target index) rows of ``pairs`` and wrap the results (on the
    GPU, spread over ``devices``: see :func:`check_gpus`)."""
    code = _mode_code(mode)
    check_pairs_range(queries, targets, pairs, scoring)
    resolved = _device.resolve(device)
    options = {name: value for name, value in
               (("strategy", strategy), ("sync", sync), ("storage", storage)) if value is not None}
    if options and resolved != "gpu":
        name, value = next(iter(options.items()))
        raise InputError(f"{name} {value!r} applies to the GPU engine only")
    engine = engine_for(resolved)
    devices = check_gpus(devices, resolved)

    def align(selection: np.ndarray | None) -> list:
        chosen = pairs if selection is None else pairs[selection]
        return engine.align_pairs(queries.codes, targets.codes, chosen, scoring.table,
                                  scoring.gap_open, scoring.gap_extend, code, traceback,
                                  **options)

    if resolved == "gpu":
        from .distributed import pairs_on_gpus

        raw = pairs_on_gpus(_device.gpus(devices), align, cells(queries, targets, pairs))
    else:
        raw = align(None)
    if not traceback and code == GLOBAL:
        raw = [(found[0], 0, found[2], 0, *found[4:]) for found in raw]
    return alignments(raw, queries, targets, pairs.tolist(), mode)


def cells(queries: Prepared, targets: Prepared, pairs: np.ndarray) -> np.ndarray:
    """The m * n cells of each (query index, target index) row of ``pairs``."""
    qlen = np.array([c.size for c in queries.codes], np.int64)
    tlen = np.array([c.size for c in targets.codes], np.int64)
    return qlen[pairs[:, 0]] * tlen[pairs[:, 1]] if len(pairs) else np.zeros(0, np.int64)


def check_pairs_range(queries: Prepared, targets: Prepared, pairs: np.ndarray,
                      scoring: Scoring) -> None:
    """The int32 score range for every pair: the score bound grows with m + n, so the
    longest pair decides."""
    if len(pairs):
        qlen = np.array([c.size for c in queries.codes], np.int64)[pairs[:, 0]]
        tlen = np.array([c.size for c in targets.codes], np.int64)[pairs[:, 1]]
        k = int(np.argmax(qlen + tlen))
        scoring.check_range(int(qlen[k]), int(tlen[k]))


def alignments(raws: Sequence[tuple], queries: Prepared, targets: Prepared,
               pairs: Sequence[tuple[int, int]], mode: str) -> list[Alignment]:
    """Engines' (score, query start, query end, target start, target end, ops) results as
    the Alignments of their (query index, target index) ``pairs`` (a start of -1: not
    computed; ops None: score-only); the CIGARs are written all at once."""
    traced = [k for k, raw in enumerate(raws) if raw[5] is not None]
    cigars: list[str | None] = [None] * len(raws)
    for k, cigar in zip(traced, cigars_from_ops([raws[k][5] for k in traced]), strict=True):
        cigars[k] = cigar
    return [Alignment(
        score=int(score),
        query_start=None if qs < 0 else int(qs), query_end=int(qe),
        target_start=None if ts < 0 else int(ts), target_end=int(te),
        cigar=cigar, query_id=queries.ids[qi], target_id=targets.ids[ti], mode=mode,
        query_length=len(queries.codes[qi]), target_length=len(targets.codes[ti]),
        query=queries.texts[qi], target=targets.texts[ti],
    ) for (score, qs, qe, ts, te, _), cigar, (qi, ti) in zip(raws, cigars, pairs, strict=True)]


def align(query: SeqLike, target: SeqLike, scoring: Scoring, mode: str = "local",
          traceback: bool = True, device: str = "auto",
          strategy: str | None = None, sync: str | None = None,
          storage: str | None = None) -> Alignment:
    """Align one query against one target; exact (DESIGN.md's recurrence and tie rules).

    ``strategy`` picks the GPU engine's strategy (``multipass``, the default, or the lab's
    score-only ``diagonal`` and ``tiled``); for those, ``sync`` picks the synchronization
    between steps (``wavedp.lab.sync.SYNCS``) and ``storage`` the diagonal's layout
    (``simple`` or ``coalesced``).
    """
    scoring = _check_scoring(scoring)
    _mode_code(mode)
    q = Prepared([query], scoring, "query")
    t = Prepared([target], scoring, "target")
    return run_pairs(q, t, np.zeros((1, 2), dtype=np.int64), scoring, mode, traceback,
                     device, strategy, sync, storage)[0]


def align_all(queries: Iterable[SeqLike], targets: Iterable[SeqLike], scoring: Scoring,
              mode: str = "local", traceback: bool = True, device: str = "auto",
              strategy: str | None = None, sync: str | None = None,
              storage: str | None = None, devices: object = None) -> list[Alignment]:
    """Align every query against every target (all cores, or on the GPU every visible GPU
    or those of ``devices``); results in query-major order."""
    scoring = _check_scoring(scoring)
    _mode_code(mode)
    q = Prepared(queries, scoring, "query")
    t = Prepared(targets, scoring, "target")
    pairs = np.array([(i, j) for i in range(len(q.codes)) for j in range(len(t.codes))],
                     dtype=np.int64).reshape(-1, 2)
    return run_pairs(q, t, pairs, scoring, mode, traceback, device, strategy, sync, storage,
                     devices)


def note_device(device: str) -> str:
    """Resolve ``device`` and, for ``auto``, say on stderr which one was picked."""
    resolved = _device.resolve(device)
    if device == "auto":
        ok, why = _device.gpu_status()
        detail = why if ok else f"no GPU: {why}"
        print(f"wavedp: using {resolved.upper()} ({detail})", file=sys.stderr)
    return resolved

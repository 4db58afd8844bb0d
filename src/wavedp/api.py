"""Public alignment API: validates and encodes once, chooses the device once, runs the engine
and builds Alignments."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import engines
from .alignment import Alignment, built, cigars_from_ops
from .device import Device, choose
from .engines.common import GLOBAL, MODES, SCORE_LIMIT, STRATEGIES, rows_run
from .engines.cuda.diagonal import check_storage
from .engines.cuda.sync import check_sync
from .errors import InputError
from .scoring import INVALID, Scoring

SeqLike = Any  # str | bytes | Bio.Seq.Seq | Bio.SeqRecord.SeqRecord


def record_text(seq: SeqLike) -> tuple[str, str | None]:
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


def encoded(letters: np.ndarray, offsets: np.ndarray, ids: Sequence[str], scoring: Scoring,
            what: str, path: str | None = None, texts: Sequence[str] | None = None
            ) -> np.ndarray:
    """The scoring's codes of ``letters`` (uint8 ASCII, record k at ``offsets[k]``); an
    InputError names the first record holding a letter the scoring does not take, and
    where (its character as in ``texts``, where given: not ASCII is '?' in ``letters``)."""
    codes = _looked_up(scoring.lut, letters)
    # INVALID is uint8's largest: a maximum, not an array of comparisons, finds one
    if codes.size and int(codes.max()) == INVALID:  # the first record holding one says
        bad = np.flatnonzero(codes == INVALID)  # what and where
        k = int(np.searchsorted(offsets, bad[0], side="right")) - 1
        text = texts[k] if texts is not None else \
            letters[offsets[k]:offsets[k + 1]].tobytes().decode("ascii", "replace")
        scoring.encode(text, what=what, record=ids[k], path=path)
        raise InputError(f"{what} {ids[k]!r}: a letter the scoring does not take")
    return codes


#: letters looked up a piece at a time (:func:`_looked_up`)
PIECE = 1 << 20


def _looked_up(table: np.ndarray, letters: np.ndarray) -> np.ndarray:
    """``table[letters]``: up to PIECE letters by ``bytes.translate`` (330,000 letters: 0.13
    ms against NumPy's 0.32, whose fancy index widens every uint8 index to 8 bytes first),
    more a piece at a time on a few threads (600 million letters: 2.0 s on the 2-core
    machine, by pieces 1.15 s, 0.74 s on two threads)."""
    if letters.size <= PIECE and table.dtype == np.uint8 and table.size == 256:
        made = bytearray(np.ascontiguousarray(letters, np.uint8)).translate(table.tobytes())
        return np.frombuffer(made, np.uint8).reshape(letters.shape)
    out = np.empty(letters.shape, table.dtype)
    if letters.size <= PIECE:
        return np.take(table, letters, out=out)
    from concurrent.futures import ThreadPoolExecutor

    from .threads import cores

    flat, into = letters.reshape(-1), out.reshape(-1)
    with ThreadPoolExecutor(min(cores(), 8)) as pool:
        list(pool.map(lambda a: np.take(table, flat[a:a + PIECE], out=into[a:a + PIECE]),
                      range(0, flat.size, PIECE)))
    return out


class Prepared:
    """Sequences validated and encoded once: texts, ids and uint8 code arrays (views of one
    array: all sequences go through the scoring's table at once)."""

    def __init__(self, seqs: Iterable[SeqLike], scoring: Scoring, what: str,
                 ids: Sequence[str] | None = None, path: str | None = None) -> None:
        self.texts: list[str] = []
        self.ids: list[str] = []
        for k, seq in enumerate(seqs):
            text, rid = record_text(seq)
            rid = ids[k] if ids is not None else (rid if rid is not None else f"{what}{k + 1}")
            self.texts.append(text)
            self.ids.append(rid)
        # one byte per character ("?" for any other than ASCII), so offsets are lengths
        raw = "".join(self.texts).encode("ascii", "replace")
        offsets = np.zeros(len(self.texts) + 1, np.int64)
        np.cumsum([len(t) for t in self.texts], out=offsets[1:])
        codes = encoded(np.frombuffer(raw, dtype=np.uint8), offsets, self.ids, scoring, what,
                        path, self.texts)
        self.codes: list[np.ndarray] = np.split(codes, offsets[1:-1]) if self.texts else []

    @classmethod
    def from_records(cls, records: Sequence[tuple[str, str]], scoring: Scoring, what: str,
                     path: str | None = None) -> Prepared:
        """(id, text) records of a file (``seqio.iter_records``'), checked and encoded;
        ``path`` names the file in messages."""
        return cls([seq for _, seq in records], scoring, what,
                   ids=[rid for rid, _ in records], path=path)

    @classmethod
    def from_codes(cls, texts: list[str], ids: list[str], codes: list[np.ndarray]) -> Prepared:
        """Sequences encoded elsewhere (a search database's hits, a reverse complement)."""
        self = cls.__new__(cls)
        self.texts, self.ids, self.codes = list(texts), list(ids), list(codes)
        return self

    def __len__(self) -> int:
        return len(self.codes)


def sequences(seqs: Any, what: str, accepted: str = "a list of sequences"
              ) -> Iterable[SeqLike]:
    """``seqs`` itself where it is a collection of sequences; an InputError for one bare
    sequence (a string would be read letter by letter), None, or anything not iterable."""
    if isinstance(seqs, (str, bytes, bytearray)) or hasattr(seqs, "seq") or \
            type(seqs).__name__ in ("Seq", "MutableSeq"):
        raise InputError(f"{what} must be {accepted}; wrap a single sequence in a list")
    if isinstance(seqs, dict):  # its iteration gives the keys, not the sequences
        raise InputError(f"{what} must be {accepted}, got a dict: pass list(d.values()) (and "
                         "the keys as ids through SeqRecords or wavedp.pairs.Sequences)")
    if seqs is None or not hasattr(seqs, "__iter__"):
        raise InputError(f"{what} must be {accepted}, got {type(seqs).__name__}")
    return seqs


def mode_code(mode: str) -> int:
    """The engines' code of ``mode`` (an InputError names the modes)."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return MODES[mode]


def check_flag(name: str, value: object) -> bool:
    """``value``, a bool (NumPy's too), else an InputError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_scoring(scoring: Scoring) -> Scoring:
    """``scoring`` itself, or an InputError when it is not a Scoring."""
    if not isinstance(scoring, Scoring):
        raise InputError(f"scoring must be a wavedp.Scoring, got {type(scoring).__name__}")
    return scoring


def run_pairs(queries: Prepared, targets: Prepared, pairs: np.ndarray, scoring: Scoring,
              mode: str, traceback: bool, device: Device, *,
              strategy: str | None = None, sync: str | None = None,
              storage: str | None = None) -> list[Alignment]:
    """Align the (query index, target index) rows of ``pairs`` on the resolved ``device``
    (on the GPU, spread over its GPUs) and wrap the results."""
    raw = pair_results(queries, targets, pairs, scoring, mode, traceback, device,
                       strategy=strategy, sync=sync, storage=storage)
    return alignments(raw, queries, targets, pairs, mode)


def pair_results(queries: Prepared, targets: Prepared, pairs: np.ndarray, scoring: Scoring,
                 mode: str, traceback: bool, device: Device, *,
                 strategy: str | None = None, sync: str | None = None,
                 storage: str | None = None, table: np.ndarray | None = None) -> list[tuple]:
    """:func:`run_pairs`' engine results, (score, query start, query end, target start,
    target end, ops or None) per pair, checked first (ranges, options). ``table``: the
    profiles' table (``wavedp.Profile.table``; the queries' codes its rows), the aligned
    columns' ``=`` or ``X`` from the queries' letters (their texts)."""
    code = mode_code(mode)
    if table is not None:
        return _profile_results(queries, targets, pairs, scoring, code, traceback, table,
                                device)
    check_pairs_range(queries, targets, pairs, scoring)
    if strategy is not None and strategy not in STRATEGIES:
        raise InputError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if sync is not None:
        check_sync(sync)
    if storage is not None:
        check_storage(storage)
    options = {name: value for name, value in
               (("strategy", strategy), ("sync", sync), ("storage", storage)) if value is not None}
    if options and not device.gpu:
        name, value = next(iter(options.items()))
        raise InputError(f"{name} {value!r} applies to the GPU engine only")
    raw = engines.align_pairs(device, queries.codes, targets.codes, pairs, scoring.table,
                              scoring.gap_open, scoring.gap_extend, code, traceback=traceback,
                              **options)
    if not traceback and code == GLOBAL:
        raw = [(found[0], 0, found[2], 0, *found[4:]) for found in raw]
    return raw


def _profile_results(queries: Prepared, targets: Prepared, pairs: np.ndarray,
                     scoring: Scoring, code: int, traceback: bool, table: np.ndarray,
                     device: Device) -> list[tuple]:
    """:func:`pair_results` with profiles' ``table``: on the GPU where each query's codes are
    a run of the table's rows (``engines.align_pairs``' ``profile``), else on the CPU."""
    from .profiles.pssm import letter_ops

    if len(pairs):
        qlen = np.array([c.size for c in queries.codes], np.int64)[pairs[:, 0]]
        tlen = np.array([c.size for c in targets.codes], np.int64)[pairs[:, 1]]
        check_table_range(table, scoring, int(np.max(qlen + tlen)))
    gpu = device.gpu and all(rows_run(c) for c in queries.codes)
    raw = engines.align_pairs(device if gpu else choose("cpu"), queries.codes, targets.codes,
                              pairs, table, scoring.gap_open, scoring.gap_extend, code,
                              traceback=traceback, profile=True)
    if not traceback and code == GLOBAL:
        return [(found[0], 0, found[2], 0, *found[4:]) for found in raw]
    letters: dict[int, np.ndarray] = {}
    out = []
    for (qi, ti), found in zip(pairs.tolist(), raw, strict=True):
        if found[5] is not None:
            if qi not in letters:
                letters[qi] = scoring.encode(queries.texts[qi], what="profile query",
                                             record=queries.ids[qi])
            found = (*found[:5], letter_ops(found[5], letters[qi], targets.codes[ti],
                                            found[1], found[3]))
        out.append(found)
    return out


def check_table_range(table: np.ndarray, scoring: Scoring, sides: int) -> None:
    """The int32 score range of pairs of at most ``sides`` letters together under a
    profile's ``table``."""
    bound = sides * max(int(np.abs(table).max()), scoring.gap_open) + scoring.gap_open
    if bound >= SCORE_LIMIT:
        raise InputError(f"alignments of {sides} letters together with this profile could "
                         f"reach |score| {bound}, beyond the engines' int32 range (limit "
                         f"{SCORE_LIMIT})")


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
               pairs: np.ndarray | Sequence[tuple[int, int]], mode: str, **columns: list
               ) -> list[Alignment]:
    """Engines' (score, query start, query end, target start, target end, ops) results as
    the Alignments of their (query index, target index) ``pairs`` (a start of -1: not
    computed; ops None: score-only), with more fields' ``columns`` (as ``built``); the
    CIGARs are written all at once."""
    traced = [k for k, raw in enumerate(raws) if raw[5] is not None]
    cigars: list[str | None] = [None] * len(raws)
    for k, cigar in zip(traced, cigars_from_ops([raws[k][5] for k in traced]), strict=True):
        cigars[k] = cigar
    fields = [[int(v) for v in field]
              for field in zip(*(raw[:5] for raw in raws), strict=True)] or [[]] * 5
    return pair_alignments(*fields, queries, targets, pairs, mode=mode, cigar=cigars, **columns)


def pair_alignments(score: list[int], query_start: list[int], query_end: list[int],
                    target_start: list[int], target_end: list[int], queries: Prepared,
                    targets: Prepared, pairs: np.ndarray | Sequence[tuple[int, int]], *,
                    mode: str, **columns: list) -> list[Alignment]:
    """The Alignments of (query index, target index) ``pairs`` from their columns (a start
    of -1: not computed) and more fields' ``columns`` (as ``built``; the CIGAR None where
    not given, as the E-value, bit score and strand)."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    qi, ti = pairs[:, 0].tolist(), pairs[:, 1].tolist()
    qlen = [c.size for c in queries.codes]
    tlen = [c.size for c in targets.codes]
    given = {"cigar": None, "evalue": None, "bitscore": None, "strand": None,
             "target_title": ""}
    for name in columns:
        given.pop(name)
    return built({
        "score": score,
        "query_start": [None if v < 0 else v for v in query_start], "query_end": query_end,
        "target_start": [None if v < 0 else v for v in target_start],
        "target_end": target_end,
        "query_id": [queries.ids[k] for k in qi], "target_id": [targets.ids[k] for k in ti],
        "query_length": [qlen[k] for k in qi], "target_length": [tlen[k] for k in ti],
        "query": [queries.texts[k] for k in qi], "target": [targets.texts[k] for k in ti],
        **columns}, mode=mode, **given)


def align(query: SeqLike, target: SeqLike, scoring: Scoring, mode: str = "local",
          traceback: bool = True, device: str | Device = "auto", *,
          strategy: str | None = None, sync: str | None = None,
          storage: str | None = None) -> Alignment:
    """Align one query against one target; exact (``docs/design.md``: the recurrence and
    the tie rules).

    ``strategy`` picks the GPU engine's strategy (``multipass``, the default, or the lab's
    score-only ``diagonal`` and ``tiled``); for those, ``sync`` picks the synchronization
    between steps (``wavedp.engines.cuda.sync.SYNCS``) and ``storage`` the diagonal's layout
    (``simple`` or ``coalesced``).
    """
    from .profiles import Profile

    scoring = check_scoring(scoring)
    mode_code(mode)
    check_flag("traceback", traceback)
    t = Prepared([target], scoring, "target")
    if isinstance(query, Profile):
        return _align_profile(query, t, scoring, mode, traceback, device)
    q = Prepared([query], scoring, "query")
    return run_pairs(q, t, np.zeros((1, 2), dtype=np.int64), scoring, mode, traceback,
                     choose(device), strategy=strategy, sync=sync, storage=storage)[0]


def _align_profile(profile, t: Prepared, scoring: Scoring, mode: str, traceback: bool,
                   device: str | Device) -> Alignment:
    """:func:`align` of a ``wavedp.Profile``: its table's rows are the query's positions,
    and the aligned columns' ``=`` or ``X`` come from the letters."""
    q = Prepared.from_codes([profile.query], [profile.id], [profile.codes()])
    pairs = np.zeros((1, 2), dtype=np.int64)
    raw = _profile_results(q, t, pairs, scoring, mode_code(mode), traceback,
                           profile.table(scoring), choose(device))
    return alignments(raw, q, t, pairs, mode)[0]

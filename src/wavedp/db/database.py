"""The memory-mapped sequence database (a ``.wdb`` folder made once, searched many times).

Layout of ``NAME.wdb/`` (all integers little-endian, every array a raw file):

- ``header.json``: format name and version, alphabet, letters, counts, the letter
  composition, the data folder's name and every data file's size and CRC-32; its last line
  holds the CRC-32 of the lines before it, so every byte that decides a result is checked;
- ``data-`` and 16 hex digits: the data folder the header names, holding
  - ``residues.u8``: every sequence's codes, concatenated in file order (code k is letter k
    of the header's ``letters``);
  - ``offsets.i64``: n+1 start offsets into ``residues.u8`` (the last one is the residue
    count);
  - ``lengths.i32``: n sequence lengths;
  - ``ids.txt``: the ids, each followed by a newline, as UTF-8;
  - ``id_offsets.i64``: n+1 start offsets into ``ids.txt``;
  - ``titles.txt`` and ``title_offsets.i64``: the same for the titles (each header line's
    text after the id and one space or tab, the way BLAST's ``stitle`` shows it);
  - ``order.i32``: the indices longest first (ties in file order), and ``runs.i64`` the
    (length, count) of its runs of equal lengths, so a scan plans without sorting
    (``order.py``).

A rebuild writes a new data folder and then replaces the header in one rename
(``files.finish``): a reader sees the old database or the new one, never a mix.

Protein residues use one canonical letter set (Biopython's BLOSUM62 alphabet, U/O/J stored as
X) whatever matrix is used later; ``Database.codes_for`` translates them to another matrix.
DNA uses the DNA scoring codes (A C G T N, U as T, IUPAC ambiguity codes as N).
"""

from __future__ import annotations

import functools
import operator
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future

import numpy as np

from ..engines.common import residue_ranges
from ..engines.cuda.scan.lines import Subjects
from ..errors import InputError
from ..scoring import INVALID, Scoring
from ..threads import check as check_threads
from . import makedb
from .building import (
    check_alphabet,
    composition_of,
    encode_texts,
    label,
    lut_of,
)
from .files import ALPHABETS, FILES
from .order import stored_order
from .reading import (
    REOPEN,
    Gone,
    Ids,
    Window,
    check_offsets,
    expected_sizes,
    fail,
    map_array,
    read_header,
    verify_files,
    verify_files_into,
)


class Database:
    """Sequences encoded once, in file order: memory-mapped from a ``.wdb`` folder or in memory.

    Sequence k (its *database index*) has codes ``residues[offsets[k]:offsets[k+1]]``.
    """

    def __init__(self, *, path: str | None, alphabet: str, letters: str, residues: np.ndarray,
                 offsets: np.ndarray, lengths: np.ndarray, ids: Sequence[str],
                 composition: np.ndarray | None, longest: int,
                 titles: Sequence[str] | None = None) -> None:
        """``composition`` None: counted from ``residues`` when first asked for; ``titles``
        None: none (each empty)."""
        self._path, self._alphabet, self._letters = path, alphabet, letters
        self._residues, self._offsets, self._lengths = residues, offsets, lengths
        self._ids, self._composition, self._longest = ids, composition, longest
        self._titles = titles
        self._letter_bytes = np.frombuffer(letters.encode("ascii"), dtype=np.uint8)
        self._order: Subjects | None = None  # stored, else sorted when first asked for
        self._identity: str | None = None
        self._verifying: Future | None = None  # the checksums read in the background

    # ---- making and opening ----------------------------------------------------------------

    @classmethod
    def build(cls, fasta_path: str | os.PathLike, out_path: str | os.PathLike,
              alphabet: str = "auto", progress: bool = True,
              threads: int | None = None, processes: bool = True) -> Database:
        """Encode a FASTA/FASTQ file (plain or gzip) into the ``.wdb`` folder ``out_path``;
        ``alphabet`` ``protein``, ``dna`` or ``auto`` (the first records decide: DNA when they
        hold only DNA letters, mostly bases).

        The file is parsed in ranges of whole records by ``threads`` processes (default: one
        per core), or threads where this process may not fork (other threads run) or
        ``processes`` is False (default: every core, at most MAKEDB_THREADS); what the
        parser leaves (a fault to name, FASTQ) is read record by record
        (:func:`makedb.build`). Memory is bounded by the ranges in flight (makedb.RANGE a
        process, makedb.MIN_RANGE a thread) and the longest record. Writes into a temporary
        folder beside ``out_path`` and renames it into place only on success; an existing
        database at ``out_path`` is replaced, anything else there is refused.
        """
        check_alphabet(alphabet, auto=True)
        makedb.build(fasta_path, out_path, alphabet, check_threads(threads), progress,
                     processes)
        return cls.open(out_path, verify=False)

    @classmethod
    def open(cls, path: str | os.PathLike, verify: bool | str = True) -> Database:
        """Memory-map a ``.wdb`` folder read-only, after checking it.

        Always checked: the header, every file's presence and size, and the offsets (12 bytes
        read per sequence). ``verify`` also reads every byte to compare CRC-32 checksums
        (on every core: about 0.5 s per GB and core from the page cache, disk speed
        otherwise); without it a corrupt residue goes unnoticed. ``verify="background"``
        reads them on threads of their own while the caller goes on (a search starts its
        device), and :meth:`verified` waits for that check and raises its error: a search
        calls it before its first result.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"a database path must be a str or os.PathLike, got "
                             f"{type(path).__name__}")
        folder = os.fspath(path)
        for _ in range(REOPEN):
            header = read_header(folder)
            try:
                return cls._mapped(folder, header, verify)
            except Gone as gone:  # a rebuild replaced it meanwhile: its new header names
                if read_header(folder)["data"] == header["data"]:  # new data, or not
                    raise fail(gone.path, "missing from the database") from None
        raise fail(folder, f"the database was replaced {REOPEN} times while it was being "
                            "opened")

    @classmethod
    def _mapped(cls, folder: str, header: dict, verify: bool | str) -> Database:
        """:meth:`open`'s checks and memory maps of the data folder ``header`` names; Gone
        where a data file is missing."""
        data = os.path.join(folder, header["data"])
        files = {name: os.path.join(data, name) for name in FILES}
        for name, expected in expected_sizes(header).items():
            try:
                size = os.path.getsize(files[name])
            except OSError:
                raise Gone(files[name]) from None
            if size != expected or header["files"][name].get("bytes") != expected:
                raise fail(files[name], f"{size} bytes where the header says {expected} "
                                         "(truncated or damaged database)")
        n = header["sequences"]
        counts = {"residues.u8": header["residues"], "offsets.i64": n + 1, "lengths.i32": n,
                  "ids.txt": header["id_bytes"], "id_offsets.i64": n + 1,
                  "titles.txt": header["title_bytes"], "title_offsets.i64": n + 1, "order.i32": n,
                  "runs.i64": expected_sizes(header)["runs.i64"] // 8}
        try:
            arrays = {name: map_array(files[name], FILES[name], counts[name]) for name in FILES}
        except FileNotFoundError as exc:
            raise Gone(exc.filename or data) from None
        mapped = {name: (files[name], arrays[name]) for name in FILES}
        if verify and verify != "background":
            verify_files(mapped, header)
        offsets, lengths = arrays["offsets.i64"], arrays["lengths.i32"]
        longest = check_offsets(files["offsets.i64"], offsets, header["residues"], lengths, 0)
        if longest != header["longest"]:
            raise fail(files["lengths.i32"], f"damaged lengths (the longest is {longest}, "
                                              f"the header says {header['longest']})")
        id_offsets = arrays["id_offsets.i64"]
        check_offsets(files["id_offsets.i64"], id_offsets, header["id_bytes"], None, 2)
        title_offsets = arrays["title_offsets.i64"]
        check_offsets(files["title_offsets.i64"], title_offsets, header["title_bytes"], None, 1)
        db = cls(path=folder, alphabet=header["alphabet"], letters=header["letters"],
                 residues=arrays["residues.u8"], offsets=offsets, lengths=lengths,
                 ids=Ids(arrays["ids.txt"], id_offsets),
                 composition=np.asarray(header["composition"], dtype=np.int64),
                 longest=longest, titles=Ids(arrays["titles.txt"], title_offsets))
        db._identity = header["data"]
        db._order = stored_order(files["runs.i64"], arrays["order.i32"], arrays["runs.i64"],
                                 header)
        if verify == "background":
            db._verifying = Future()
            threading.Thread(target=verify_files_into, args=(db._verifying, mapped, header),
                             name="wavedp-verify", daemon=True).start()
        return db

    def verified(self) -> None:
        """Wait for the checksums :meth:`open` reads in the background (if it does); raise
        its InputError when one does not match."""
        if self._verifying is not None:
            self._verifying.result()

    @classmethod
    def from_sequences(cls, texts: list[str], ids: list[str] | None = None,
                       alphabet: str = "protein", titles: list[str] | None = None) -> Database:
        """An in-memory database of ``texts`` (ids default to seq1, seq2, ...; ``titles``
        to none); no files."""
        check_alphabet(alphabet)
        texts = list(texts)
        if not texts:
            raise InputError("a database needs at least one sequence (got none)")
        if any(not isinstance(t, str) for t in texts):
            raise InputError("database sequences must be str")
        ids = [f"seq{k + 1}" for k in range(len(texts))] if ids is None else list(map(str, ids))
        if len(ids) != len(texts):
            raise InputError(f"{len(ids)} ids for {len(texts)} database sequences")
        if titles is not None and len(titles) != len(texts):
            raise InputError(f"{len(titles)} titles for {len(texts)} database sequences")
        codes, lengths = encode_texts(texts, ids, lut_of(alphabet), alphabet, "")
        codes.setflags(write=False)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        letters = ALPHABETS[alphabet]
        composition = composition_of(codes, len(letters))
        return cls(path=None, alphabet=alphabet, letters=letters, residues=codes,
                   offsets=offsets, lengths=lengths.astype(np.int32), ids=ids,
                   composition=composition, longest=int(lengths.max()),
                   titles=None if titles is None else list(map(str, titles)))

    # ---- contents ----------------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """The ``.wdb`` folder, or None for an in-memory database."""
        return self._path

    @property
    def alphabet(self) -> str:
        """``"protein"`` or ``"dna"``."""
        return self._alphabet

    @property
    def letters(self) -> str:
        """The stored letters: code k is ``letters[k]``."""
        return self._letters

    @property
    def residues(self) -> np.ndarray:
        """uint8 codes of every sequence, concatenated (read-only)."""
        return self._residues

    @property
    def offsets(self) -> np.ndarray:
        """int64 start of each sequence in ``residues``, plus the total (n+1 entries)."""
        return self._offsets

    @property
    def lengths(self) -> np.ndarray:
        """int32 length of each sequence."""
        return self._lengths

    @functools.cached_property
    def sizes(self) -> np.ndarray:
        """The distinct lengths of the non-empty sequences, ascending (computed once)."""
        lengths = np.asarray(self._lengths)
        return np.unique(lengths[lengths > 0])

    @property
    def identity(self) -> str | None:
        """What names this build of a ``.wdb`` folder (its data folder: a rebuild makes a new
        one); None in memory."""
        return self._identity

    @property
    def order(self) -> Subjects:
        """The sequences longest first (ties in index order) and the runs of equal lengths:
        stored in a ``.wdb`` folder, sorted once for one in memory."""
        if self._order is None:
            self._order = Subjects.of(self._lengths)
        return self._order

    @property
    def ids(self) -> Sequence[str]:
        """The sequence ids in database order."""
        return self._ids

    @property
    def titles(self) -> Sequence[str]:
        """The sequence titles in database order (each header line's text after the id;
        empty where there is none)."""
        if self._titles is None:
            self._titles = [""] * len(self)
        return self._titles

    @property
    def composition(self) -> np.ndarray:
        """int64 count of each stored letter over the whole database."""
        if self._composition is None:
            self._composition = composition_of(self._residues, len(self._letters))
        return self._composition

    @property
    def total_residues(self) -> int:
        """The number of residues in all sequences."""
        return int(self._offsets[-1])

    @property
    def longest(self) -> int:
        """The length of the longest sequence."""
        return self._longest

    def __len__(self) -> int:
        return len(self._lengths)

    def __repr__(self) -> str:
        where = self._path or "in memory"
        return (f"Database({where!r}, {self._alphabet}, {len(self)} sequences, "
                f"{self.total_residues} residues)")

    def _index(self, k: int) -> int:
        k = operator.index(k)
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"database index {k} out of range (0..{n - 1})")
        return k % n

    def id(self, k: int) -> str:
        """The id of sequence ``k``."""
        return self._ids[self._index(k)]

    def title(self, k: int) -> str:
        """The title of sequence ``k`` (its header line after the id; may be empty)."""
        return self.titles[self._index(k)]

    def codes(self, k: int) -> np.ndarray:
        """The stored codes of sequence ``k`` (a read-only view)."""
        k = self._index(k)
        return self._residues[int(self._offsets[k]):int(self._offsets[k + 1])]

    def text(self, k: int) -> str:
        """The stored letters of sequence ``k`` (upper case; U/O/J read as X, IUPAC as N)."""
        return self._letter_bytes[self.codes(k)].tobytes().decode("ascii")

    def slice(self, start: int, stop: int) -> Database:
        """Sequences ``start:stop`` (``0 <= start < stop <= len(self)``) as a database of their
        own: views of the residues, lengths and ids (no copy), offsets rebased to 0, the same
        alphabet and letters; ``path`` is None. Its sequence k is sequence ``start + k``."""
        start, stop, n = operator.index(start), operator.index(stop), len(self)
        if not 0 <= start < stop <= n:
            raise InputError(f"database slice {start}:{stop} is empty or out of range "
                             f"(0 <= start < stop <= {n})")
        lo, hi = int(self._offsets[start]), int(self._offsets[stop])
        offsets = np.asarray(self._offsets[start:stop + 1], dtype=np.int64) - lo
        offsets.setflags(write=False)
        lengths = self._lengths[start:stop]
        return Database(path=None, alphabet=self._alphabet, letters=self._letters,
                        residues=self._residues[lo:hi], offsets=offsets, lengths=lengths,
                        ids=Window(self._ids, start, stop), composition=None,
                        longest=int(np.max(lengths)),
                        titles=Window(self.titles, start, stop))

    def chunks(self, max_residues: int) -> Iterator[tuple[int, int]]:
        """Consecutive half-open index ranges ``(start, stop)`` covering the database in order,
        each holding at most ``max_residues`` residues (a longer sequence is a chunk alone)."""
        if isinstance(max_residues, bool) or not isinstance(max_residues, (int, np.integer)) \
                or max_residues < 1:
            raise InputError(f"max_residues must be a positive integer, got {max_residues!r}")
        yield from residue_ranges(self._offsets, int(max_residues))

    def codes_for(self, scoring: Scoring) -> np.ndarray | None:
        """A 256-entry uint8 table from stored codes to ``scoring``'s codes (None if equal).

        InputError when the scoring is of the other alphabet (DNA vs protein) or its matrix
        lacks a letter that occurs in the database.
        """
        where = f"file {self._path}" if self._path else "database (in memory)"
        if scoring.is_dna != (self._alphabet == "dna"):
            what = ("DNA scoring (match/mismatch)" if scoring.is_dna else
                    f"matrix scoring ({scoring.matrix}: matrices score protein databases)")
            fix = "a protein matrix" if self._alphabet == "protein" else "match/mismatch scores"
            raise InputError(f"{where}: a {label(self._alphabet)} database cannot be searched "
                             f"with {what}; use {fix} or build the database "
                             f"with alphabet={'dna' if scoring.is_dna else 'protein'!r}")
        if self._letters == scoring.alphabet:
            return None
        table = np.full(256, INVALID, dtype=np.uint8)
        missing = []
        for code, letter in enumerate(self._letters):
            table[code] = scoring.lut[ord(letter)]
            if table[code] == INVALID and self.composition[code] > 0:
                missing.append(letter)
        if missing:
            shown = ", ".join(repr(m) for m in missing)
            raise InputError(f"{where}: letter(s) {shown} occur in the database but not in the "
                             f"{scoring.matrix} matrix")
        table.setflags(write=False)
        return table

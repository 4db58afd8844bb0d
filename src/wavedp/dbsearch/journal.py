"""The crash-safe journal behind ``wavedp search -o FILE --resume``.

``FILE.wavedp-journal/records`` is an append-only file: an 8-byte magic, then records, each
``<u64 body length><u32 CRC-32 of the length and body><body>`` (little-endian). The first
record's body is ``S`` + the run's signature as JSON (every option that changes the output
and the inputs' identities); each further one is ``Q`` + a u64 query index + the text that
query renders to (UTF-8). A record is committed with write, flush and fsync; one whose
length runs past the end of the file or whose CRC fails (a run killed mid-write) ends the
valid part and is dropped on restart. The file with its signature record is created whole
(written beside, fsynced, renamed into place), so a journal either has a signature or is
absent.

When every query is done the output is assembled in query order into
``FILE.wavedp-journal/output.part``, fsynced, renamed onto FILE, and the journal removed; a
run killed at any point before the removal finishes the same way when started again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from ..errors import InputError
from ..partfiles import finish, text_writer

SUFFIX = ".wavedp-journal"
RECORDS = "records"
PART = "output.part"
MAGIC = b"WDPJRNL1"
_HEAD = struct.Struct("<QI")
_INDEX = struct.Struct("<Q")
SIGNATURE, QUERY = b"S", b"Q"


def journal_path(output: str) -> str:
    """The journal folder of an output file."""
    return os.path.abspath(output) + SUFFIX


def file_identity(path: str) -> dict:
    """A file's identity for the signature: real path, size and modification time."""
    st = os.stat(path)
    return {"path": os.path.realpath(path), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def _record(body: bytes) -> bytes:
    length = _INDEX.pack(len(body))
    return _HEAD.pack(len(body), zlib.crc32(body, zlib.crc32(length))) + body


def _fsync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _differences(old: dict, new: dict) -> list[str]:
    return [key for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


class Journal:
    """One output file's journal: which queries are done, and their committed text."""

    def __init__(self, output: str, signature: dict) -> None:
        """Read the journal of ``output`` if there is one (nothing is written yet).

        InputError when its signature differs from ``signature`` (the journal is left as it
        is) or when another process holds it.
        """
        self.output = output
        self.folder = journal_path(output)
        self.path = os.path.join(self.folder, RECORDS)
        self.signature = signature
        self.done: dict[int, tuple[int, int]] = {}  # query index -> (offset, length) of text
        self.end = 0  # the end of the valid records; 0 when there is no usable journal
        self.fh: BinaryIO | None = None
        try:
            self.fh = open(self.path, "r+b")  # noqa: SIM115 (held until close())
        except FileNotFoundError:
            return
        except OSError as exc:
            raise InputError(f"cannot read journal {self.path}: {exc.strerror or exc}") from None
        try:
            self._lock()
            self._scan()
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        assert self.fh is not None
        try:
            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"output file {self.output}: another wavedp run is writing it "
                             f"(its journal {self.folder} is locked)") from None

    def _records(self) -> Iterator[tuple[int, bytes]]:
        """(offset of the body, body) of each valid record, in file order."""
        assert self.fh is not None
        size = os.fstat(self.fh.fileno()).st_size
        self.fh.seek(0)
        if self.fh.read(len(MAGIC)) != MAGIC:
            return
        pos = len(MAGIC)
        while pos + _HEAD.size <= size:
            length, crc = _HEAD.unpack(self.fh.read(_HEAD.size))
            if pos + _HEAD.size + length > size:
                return
            body = self.fh.read(length)
            if zlib.crc32(body, zlib.crc32(_INDEX.pack(length))) != crc:
                return
            yield pos + _HEAD.size, body
            pos += _HEAD.size + length
            self.end = pos

    def _scan(self) -> None:
        records = self._records()
        first = next(records, None)
        if first is None or first[1][:1] != SIGNATURE:
            self.end = 0  # no committed signature: a fresh start
            return
        try:
            old = json.loads(first[1][1:].decode("utf-8"))
        except ValueError:
            raise InputError(f"journal {self.path} is damaged (its signature is unreadable); "
                             "delete it to start over") from None
        changed = _differences(old, self.signature)
        if changed:
            raise InputError(
                f"--resume: {self.folder} was written by another command (it differs in: "
                f"{', '.join(changed)}); rerun that command to finish it, or delete the "
                "journal (or leave out --resume) to start over")
        for offset, body in records:
            if body[:1] == QUERY and len(body) >= 1 + _INDEX.size:
                (k,) = _INDEX.unpack_from(body, 1)
                skip = 1 + _INDEX.size
                self.done.setdefault(k, (offset + skip, len(body) - skip))

    def start(self) -> None:
        """Open for appending: create the journal, or drop a torn last record."""
        if self.end:
            assert self.fh is not None
            try:
                self.fh.truncate(self.end)
                self.fh.seek(self.end)
                os.fsync(self.fh.fileno())
            except OSError as exc:
                raise InputError(f"cannot write journal {self.path}: "
                                 f"{exc.strerror or exc}") from None
            return
        held = self.fh is not None  # a journal with no usable record, locked by this run
        self.close()
        body = SIGNATURE + json.dumps(self.signature, sort_keys=True).encode("utf-8")
        tmp = f"{self.path}.{os.getpid()}.new"
        try:
            os.makedirs(self.folder, exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(MAGIC + _record(body))
                fh.flush()
                os.fsync(fh.fileno())
            self.fh = open(tmp, "r+b")  # noqa: SIM115 (held until close())
            self._lock()
            if held:
                os.replace(tmp, self.path)
            else:  # created only where none is: a run starting at the same time loses here
                try:
                    os.link(tmp, self.path)
                except FileExistsError:
                    self.close()
                    raise InputError(f"output file {self.output}: another wavedp run is "
                                     f"writing it (its journal {self.folder} is locked)"
                                     ) from None
                finally:
                    os.unlink(tmp)
            _fsync_folder(self.folder)
        except OSError as exc:
            raise InputError(f"cannot write journal {self.folder}: {exc.strerror or exc}"
                             ) from None
        self.fh.seek(0, os.SEEK_END)
        self.end = self.fh.tell()
        self.done = {}

    def commit(self, k: int, text: str) -> None:
        """Append query ``k``'s text and make it durable (write, flush, fsync)."""
        assert self.fh is not None and self.end
        data = text.encode("utf-8", "surrogateescape")
        body = QUERY + _INDEX.pack(k) + data
        try:
            self.fh.write(_record(body))
            self.fh.flush()
            os.fsync(self.fh.fileno())
        except OSError as exc:
            raise InputError(f"cannot write journal {self.path}: {exc.strerror or exc}"
                             ) from None
        head = self.end + _HEAD.size + 1 + _INDEX.size
        self.done[k] = (head, len(data))
        self.end = head + len(data)

    def text(self, k: int) -> str:
        """The committed text of query ``k``."""
        assert self.fh is not None
        offset, length = self.done[k]
        self.fh.seek(offset)
        data = self.fh.read(length)
        if len(data) != length:
            raise InputError(f"journal {self.path} is damaged (query {k + 1}'s record is "
                             "short); delete it to start over")
        return data.decode("utf-8", "surrogateescape")

    @contextlib.contextmanager
    def assemble(self) -> Iterator[TextIO]:
        """A text file to write the whole output into; on success it is fsynced and renamed
        onto the output file, and the journal removed."""
        part = os.path.join(self.folder, PART)
        try:
            with open(part, "wb") as raw:
                fh = text_writer(raw, self.output)
                yield fh
                finish(fh)
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(part, self.output)
            _fsync_folder(os.path.dirname(os.path.abspath(self.output)))
        except OSError as exc:
            raise InputError(f"cannot write output file {self.output}: "
                             f"{exc.strerror or exc}") from None
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def close(self) -> None:
        """Release the file (and its lock). A failure to close is not raised: every record
        was written, flushed and synced by :meth:`commit`, and on a full disk the close
        fails again and would hide the message naming the journal."""
        if self.fh is not None:
            fh, self.fh = self.fh, None
            try:
                fh.close()
            except OSError:
                pass

"""The command line under random hostile input (hypothesis): random FASTA bytes (NUL, BOM, CR
and CR-only line ends, control bytes, empty records, long lines), random option values, random
``-o`` targets (an existing file, an input, an input or a new file as ``/dev/fd/N``, symlinks,
a FIFO, a device copy, a folder, a missing folder), a database whose header has one bit
flipped, and makedb racing another makedb of the same output. Every run exits 0, 1 or 2 with
at most one ``wavedp: error:`` line and never a traceback, changes no input and leaves no
temporary file; a flipped header is refused; a raced output is one sound database."""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import db_data, fresh_env
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import wavedp
from wavedp.cli import cli

#: the bytes sequences are drawn from: residues of both alphabets, FASTA/FASTQ syntax, white
#: space of every kind, control bytes, and bytes past ASCII
PIECES = [b"A", b"C", b"G", b"T", b"N", b"U", b"M", b"K", b"W", b"Y", b"X", b"*", b"-", b"a",
          b"c", b"q", b">", b"@", b"+", b"\n", b"\r\n", b"\r", b" ", b"\t", b"\x00", b"\x01",
          b"\x1b", b"\x7f", b"\xff", b"\xef\xbb\xbf", b"\xc3\xa9", b"1", b";"]
RESIDUES = "ACDEFGHIKLMNPQRSTVWY"


@st.composite
def fasta(draw) -> bytes:
    """A FASTA-like file: records (some empty, some with hostile bytes, some long), or noise;
    about half the files are valid protein FASTA."""
    if draw(st.integers(0, 9)) == 0:
        return b"".join(draw(st.lists(st.sampled_from(PIECES), max_size=60)))
    hostile = draw(st.booleans())
    out = [draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf", b"\n\n", b" "])) if hostile
           else b""]
    for k in range(draw(st.integers(1 - hostile, 4))):
        header = (draw(st.sampled_from([b">r%d" % k, b">r%d desc" % k, b">", b">r0", b"@r%d" % k]))
                  if hostile else b">r%d" % k)
        kind = draw(st.integers(0, 5)) if hostile else 5
        if kind == 0:
            body = b""
        elif kind == 1:
            body = b"".join(draw(st.lists(st.sampled_from(PIECES), max_size=40)))
        elif kind == 2:
            body = draw(st.text(RESIDUES, min_size=1, max_size=30)).encode() * draw(
                st.integers(1, 200))  # a long line
        else:
            body = draw(st.text(RESIDUES + "acgt", min_size=1, max_size=80)).encode()
        eol = draw(st.sampled_from([b"\n", b"\r\n", b"\n", b"", b"\r"])) if hostile else b"\n"
        out.append(header + eol + body + eol)
    return b"".join(out)


def _values(good: list[str], bad: list[str]) -> st.SearchStrategy[str]:
    """Mostly ``good`` values, sometimes ``bad`` ones."""
    return st.one_of(st.sampled_from(good), st.sampled_from(good), st.sampled_from(bad))


BAD_NUMBERS = ["-1", "1099511627776", "x", "2.5", "nan", "-inf", ""]
OPTIONS = {
    "--mode": _values(["local", "global", "semiglobal"], ["bogus"]),
    "--matrix": _values(["BLOSUM62", "PAM30", "BLOSUM45"], ["NUC.4.4", "GONNET1992", "nope"]),
    "--gap-open": _values(["11", "5", "20"], BAD_NUMBERS),
    "--gap-extend": _values(["1", "2", "0"], BAD_NUMBERS),
    "--format": _values(["blast6", "sam", "json", "pairwise"], ["xml"]),
}
SEARCH = {"--top": _values(["0", "1", "5"], BAD_NUMBERS),
          "--evalue": _values(["10", "1e-3", "inf", "1e300"], ["0", *BAD_NUMBERS]),
          "--min-score": _values(["0", "5", "30"], BAD_NUMBERS),
          "--fraction": _values(["0.5", "1", "0.1"], ["0", "2", *BAD_NUMBERS]),
          "--strand": _values(["both"], ["plus", "minus", "up"]),
          "--partition": _values(["auto", "none", "dynamic2"], ["best"])}
FLAGS = ["--score-only", "--resume"]
TARGETS = ["none", "new", "existing", "query", "link-to-query", "link-to-new", "fifo", "device",
           "folder", "missing-folder", "stdout-dash", "inside-wdb", "fd-of-query", "fd-of-new"]


@st.composite
def command(draw) -> tuple[str, list[str], str]:
    """(command, its arguments with the placeholders Q, T, W, and the output target kind)."""
    name = draw(st.sampled_from(["align", "search", "search", "makedb", "fold", "chain"]))
    if name == "chain":
        args = draw(st.lists(_values(["30", "35", "15", "5"], ["0", "-2", "x", "Q", "1e3"]),
                             min_size=1, max_size=5))
    elif name == "fold":
        args = ["Q", *draw(st.sampled_from([[], ["--min-loop", "0"], ["--no-gu"],
                                            ["--min-loop", "-1"], ["--format", "json"]]))]
    elif name == "makedb":
        args = ["Q", *draw(st.sampled_from([[], ["--alphabet", "dna"], ["--alphabet", "protein"],
                                            ["--alphabet", "rna"]]))]
    else:
        args = ["Q", draw(st.sampled_from(["T", "W"])) if name == "search" else "T"]
        pool = {**OPTIONS, **(SEARCH if name == "search" else {})}
        for option in draw(st.lists(st.sampled_from(sorted(pool)), max_size=3, unique=True)):
            args += [option, draw(pool[option])]
        if draw(st.integers(0, 3)) == 0:
            args.append(draw(st.sampled_from(FLAGS if name == "search" else FLAGS[:1])))
    if name not in ("chain", "makedb"):  # makedb takes no --device
        args += ["--device", "cpu"]
    fine = ["none", "new", "existing", "link-to-new", "fifo", "device", "stdout-dash",
            "fd-of-new"]
    target = draw(_values(fine, TARGETS) if name != "makedb" else
                  _values(["new"], ["existing", "query", "folder", "missing-folder"]))
    return name, args, target


def _digests(paths: list[Path]) -> dict[str, str]:
    """sha256 of each file, and of each file in each folder, of ``paths``."""
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*")))]
    return {str(f): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in files if f.is_file() and not f.is_symlink()}


@contextlib.contextmanager
def _drained(fifo: Path):
    """A reader of ``fifo`` for as long as the block runs (so a writer never blocks)."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    done = threading.Event()

    def drain() -> None:
        while not done.is_set():
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(fd, 1 << 16)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        yield
    finally:
        done.set()
        reader.join()
        os.close(fd)


def _output(kind: str, base: Path, inputs: Path, fds: list[int]
            ) -> tuple[str | None, Path | None]:
    """The ``-o`` argument for ``kind`` (made in ``base``; file descriptors it opens go
    into ``fds``) and a FIFO to drain, if any."""
    out = base / "out.txt"
    if kind == "none":
        return None, None
    if kind in ("fd-of-query", "fd-of-new"):  # an input, or a new file, by another name
        fds.append(os.open(inputs / "q.fa", os.O_RDONLY) if kind == "fd-of-query" else
                   os.open(out, os.O_WRONLY | os.O_CREAT, 0o644))
        return f"/dev/fd/{fds[-1]}", None
    if kind == "existing":
        out.write_text("an older output\n")
    elif kind == "query":
        return str(inputs / "q.fa"), None
    elif kind == "link-to-query":
        out.symlink_to(inputs / "q.fa")
    elif kind == "link-to-new":
        out.symlink_to(base / "target.txt")
    elif kind == "fifo":
        os.mkfifo(out)
        return str(out), out
    elif kind == "device":
        if os.geteuid() != 0:
            return str(out), None
        os.mknod(out, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null
    elif kind == "folder":
        out.mkdir()
    elif kind == "missing-folder":
        return str(base / "missing" / "out.txt"), None
    elif kind == "stdout-dash":
        return "-", None
    elif kind == "inside-wdb":
        return str(db_data(inputs / "w.wdb") / "residues.u8"), None
    return str(out), None


@pytest.fixture(scope="module")
def wdb(tmp_path_factory) -> Path:
    """A small protein database, copied into every example's inputs."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "db.fa").write_text(">s1\nMKTAYIAKQRQISFVKSHFSRQ\n>s2\nACDEFGHIKL\n>s3\nW\n")
    wavedp.Database.build(folder / "db.fa", folder / "w.wdb", progress=False)
    return folder / "w.wdb"


@settings(max_examples=500, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(query=fasta(), target=fasta(), call=command(),
       flip=st.one_of(st.none(), st.none(), st.none(), st.integers(0, 1 << 20)),
       race=st.integers(0, 3))
def test_hostile_command_lines(wdb: Path, query: bytes, target: bytes, call, flip, race
                               ) -> None:
    name, args, kind = call
    fds: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        inputs = base / "in"
        inputs.mkdir()
        (inputs / "q.fa").write_bytes(query)
        (inputs / "t.fa").write_bytes(target)
        shutil.copytree(wdb, inputs / "w.wdb")
        flipped = flip is not None and "W" in args
        if flipped:  # one bit of the database's header
            header = inputs / "w.wdb" / "header.json"
            sealed = bytearray(header.read_bytes())
            sealed[flip // 8 % len(sealed)] ^= 1 << flip % 8
            header.write_bytes(bytes(sealed))
        places = {"Q": inputs / "q.fa", "T": inputs / "t.fa", "W": inputs / "w.wdb"}
        argv = [name, *(str(places.get(a, a)) for a in args)]
        out, fifo = _output(kind, base, inputs, fds)
        if name == "makedb":
            argv += ["-o", out or str(base / "db.wdb")]
        elif out is not None:
            argv += ["-o", out]
        read = [places[a] for a in set(args) if a in places]  # this command's inputs
        before = _digests(read)
        rival = None
        if name == "makedb" and kind == "new" and race == 0:  # another makedb, same output
            (base / "r.fa").write_text(">r1 a sound input\nMKTAYIAKQRQISFVKSHFSRQ\n")
            rival = subprocess.Popen(
                [sys.executable, "-m", "wavedp.cli", "makedb", str(base / "r.fa"), "-o",
                 argv[-1]], env=fresh_env(), stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True)
        try:
            with _drained(fifo) if fifo else contextlib.nullcontext():
                result = CliRunner().invoke(cli, argv)
        finally:
            for fd in fds:
                os.close(fd)
            rivalled = rival.communicate(timeout=300) if rival else None
        event(f"{name} exit {result.exit_code}")
        if flipped:
            event("a header bit flipped")
            assert result.exit_code == 2, (argv, flip, result.output)
        if kind.startswith("fd-"):
            event(f"-o /dev/fd/N ({kind}): {name} exit {result.exit_code}")
        if kind == "fd-of-query" and "Q" in args:  # the input by another name: refused
            assert result.exit_code == 2, (argv, result.output)
        if rival is not None:
            event(f"makedb raced: exits {result.exit_code}, {rival.returncode}")
            assert rival.returncode in (0, 1, 2) and "Traceback" not in rivalled[1], rivalled
            assert rivalled[1].count("wavedp: error:") == (rival.returncode != 0), rivalled
            if 0 in (result.exit_code, rival.returncode):  # one build's database, whole
                wavedp.Database.open(argv[-1], verify=True)
        assert result.exit_code in (0, 1, 2), (argv, result.exit_code, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            argv, repr(result.exception))
        assert "Traceback" not in result.output, (argv, result.output)
        errors = [line for line in result.stderr.splitlines()
                  if line.startswith("wavedp: error:")]
        assert len(errors) <= 1, (argv, result.stderr)
        assert (result.exit_code == 0) == (not errors), (argv, result.stderr)
        assert _digests(read) == before, argv  # no input changed
        parts = [str(p) for p in base.rglob("*.part")]
        assert not parts, (argv, parts)  # no temporary file left

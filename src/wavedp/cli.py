"""The ``wavedp`` command line: ``align``, ``makedb``, ``search`` and ``info``.

Results go to stdout or ``-o FILE`` (written to a temporary file beside it and renamed at the
end, so no partial file is ever left; ``search --resume`` journals each finished query beside
it instead); progress and notes go to stderr. User errors print one line,
``wavedp: error: <message>``, and exit with status 2.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shlex
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from typing import TextIO

import click
import numpy as np

from . import __version__
from . import device as _device
from . import distributed as _distributed
from .alignment import Alignment
from .api import Prepared, check_gpus, note_device, run_pairs
from .engines.common import MODES
from .errors import DeviceError, InputError
from .formats import FORMATS, format_alignment, sam_header, sam_header_lines
from .lab.commands import lab
from .lab.sync import SYNCS
from .scoring import Scoring
from .search.api import DEFAULT_EVALUE, iter_search, open_database
from .search.database import ALPHABETS, HEADER, Database
from .search.hits import check_fraction
from .search.journal import Journal, file_identity
from .search.strands import STRANDS
from .seqio import read_records

#: exit status for user errors (click's usage errors use it too)
USAGE_EXIT = 2
#: one engine call gets about this many DP cells (and at most CHUNK_PAIRS pairs)
CHUNK_CELLS = 1 << 27
CHUNK_PAIRS = 1 << 14

PROTEIN_DEFAULTS = (11, 1)
DNA_DEFAULTS = (5, 2)
#: SAM @SQ lines are streamed from a database this many sequences at a time
SQ_BLOCK = 1 << 16
#: seconds ``search --scheduler`` waits for the Dask scheduler to answer
CONNECT_TIMEOUT = _distributed.CONNECT_TIMEOUT


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", None)  # click >= 8.2


def _error(message: str) -> None:
    click.echo(f"wavedp: error: {' '.join(str(message).split())}", err=True)


class _Cli(click.Group):
    """Turns InputError and click's usage errors into one stderr line and exit status 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        args = sys.argv[1:] if args is None else list(args)
        extra.setdefault("obj", {"argv": args})
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name or "wavedp", complete_var, False, **extra)
        except InputError as exc:
            _error(str(exc))
            sys.exit(USAGE_EXIT)
        except DeviceError as exc:  # the GPU or cluster failed mid-run: one line, no traceback
            _error(str(exc))
            sys.exit(1)
        except click.ClickException as exc:
            if _NO_ARGS_IS_HELP is not None and isinstance(exc, _NO_ARGS_IS_HELP):
                exc.show()  # bare ``wavedp``: the help text, as click prints it
                sys.exit(USAGE_EXIT)
            _error(exc.format_message())
            sys.exit(USAGE_EXIT if isinstance(exc, click.UsageError) else exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            _error("interrupted")
            sys.exit(130)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(name="wavedp", cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="wavedp")
def cli() -> None:
    """wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs."""


def _scoring(matrix: str | None, match: int | None, mismatch: int | None,
             gap_open: int | None, gap_extend: int | None) -> Scoring:
    dna = match is not None or mismatch is not None
    default_open, default_extend = DNA_DEFAULTS if dna and matrix is None else PROTEIN_DEFAULTS
    return Scoring(
        matrix=matrix, match=match, mismatch=mismatch,
        gap_open=default_open if gap_open is None else gap_open,
        gap_extend=default_extend if gap_extend is None else gap_extend,
    )


def _prepare(path: str, scoring: Scoring, what: str) -> Prepared:
    records = read_records(path)
    return Prepared([seq for _, seq in records], scoring, what,
                    ids=[rid for rid, _ in records], path=path)


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """stdout, or a temporary file beside ``path`` renamed onto it only on success."""
    if path is None or path == "-":
        yield sys.stdout
        return
    if os.path.isdir(path):
        raise InputError(f"cannot write output file {path}: it is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part",
                                   dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write output file {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # the mode a plain open() would have given
            yield fh
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # disk full, permission lost, rename refused
            raise InputError(f"cannot write output file {path}: {exc.strerror or exc}") from None
        raise


def _chunks(qlens: np.ndarray, tlens: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """All (query, target) index pairs in query-major order, cut into engine-sized chunks."""
    qi, ti = np.divmod(np.arange(qlens.size * tlens.size, dtype=np.int64), tlens.size)
    cells = np.maximum(qlens[qi], 1) * np.maximum(tlens[ti], 1)
    cuts = np.flatnonzero(np.diff(np.cumsum(cells) // CHUNK_CELLS)) + 1
    pairs = np.stack([qi, ti], axis=1)
    out = []
    for part, work in zip(np.split(pairs, cuts), np.split(cells, cuts), strict=True):
        for start in range(0, len(part), CHUNK_PAIRS):
            out.append((part[start:start + CHUNK_PAIRS],
                        int(work[start:start + CHUNK_PAIRS].sum())))
    return out


@contextlib.contextmanager
def _progress(total_cells: int, n_pairs: int, show: bool):
    """A rich progress bar on stderr (only on a terminal and for long work)."""
    import rich.progress as rp
    from rich.console import Console

    console = Console(stderr=True)
    progress = rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(),
                           rp.TaskProgressColumn(), rp.TimeElapsedColumn(),
                           rp.TimeRemainingColumn(), console=console,
                           disable=not (show and console.is_terminal), transient=True)
    with progress:
        task = progress.add_task(f"aligning {n_pairs} pair(s)", total=total_cells)
        yield lambda cells: progress.advance(task, cells)


ENERGY_HELP = ("Measure the GPU energy of the run (NVML; pip install 'wavedp[energy]') and "
               "print joules and GCUPS per watt on stderr.")


def _energy(enabled: bool, device: str, devices: str | None):
    """The run's energy meter (``--energy``; a GPU and NVML checked before any work), or a
    context that measures nothing."""
    if not enabled:
        return contextlib.nullcontext()
    if _device.resolve(device) != "gpu":
        why = "--device cpu" if device == "cpu" else f"no GPU usable: {_device.gpu_status()[1]}"
        raise InputError(f"--energy measures GPU energy, and this run uses the CPU ({why})")
    from . import energy

    return energy.measure(_device.gpus(_device.check_devices(devices)))


def _energy_line(meter, cells: int) -> None:
    if meter is not None:
        from . import energy

        click.echo(energy.summary(meter, cells), err=True)


ALIGN_HELP = f"""Align every record of QUERY against every record of TARGET.

QUERY and TARGET are FASTA or FASTQ files, plain or gzipped. Results are written in
query-major order (all targets for the first query, then the next query).

\b
Scoring defaults:
  protein: --matrix BLOSUM62 --gap-open {PROTEIN_DEFAULTS[0]} --gap-extend {PROTEIN_DEFAULTS[1]}
  DNA (given --match and --mismatch): --gap-open {DNA_DEFAULTS[0]} --gap-extend {DNA_DEFAULTS[1]}

\b
Gap convention: a gap of length k costs gap-open + (k-1)*gap-extend
(as parasail and Biopython count). BLAST's -gapopen 11 -gapextend 1
equals --gap-open 12 --gap-extend 1 here.

\b
Formats: pairwise (human-readable), sam (with header; the target is the
reference), blast6 (the 12 BLAST tabular columns, 1-based coordinates;
evalue and bitscore print NA: they are search statistics, see wavedp search),
json (one object per line).
"""


def _scoring_options(command: Callable) -> Callable:
    """The alignment options shared by ``align`` and ``search``: mode, scoring, score-only."""
    options = [
        click.option("--mode", type=click.Choice(list(MODES)), default="local",
                     show_default=True,
                     help="local (Smith-Waterman/Gotoh), global (Needleman-Wunsch) or "
                          "semiglobal (end gaps free)."),
        click.option("--matrix", default=None,
                     help="Substitution matrix by name (any integer matrix Biopython ships). "
                          "[default: BLOSUM62]"),
        click.option("--match", type=int, default=None,
                     help="DNA match score (with --mismatch)."),
        click.option("--mismatch", type=int, default=None,
                     help="DNA mismatch score (with --match)."),
        click.option("--gap-open", type=int, default=None,
                     help=f"Cost of a gap's first residue. [default: {PROTEIN_DEFAULTS[0]} "
                          f"protein, {DNA_DEFAULTS[0]} DNA]"),
        click.option("--gap-extend", type=int, default=None,
                     help=f"Cost of each further gap residue. [default: "
                          f"{PROTEIN_DEFAULTS[1]} protein, {DNA_DEFAULTS[1]} DNA]"),
        click.option("--score-only", is_flag=True,
                     help="Scores and end coordinates only (no traceback, no CIGAR)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _output_options(default_format: str) -> Callable[[Callable], Callable]:
    """--format, --device and -o, shared by ``align`` and ``search``."""

    def apply(command: Callable) -> Callable:
        options = [
            click.option("--format", "fmt", type=click.Choice(FORMATS), default=default_format,
                         show_default=True, help="Output format."),
            click.option("--device", type=click.Choice(_device.DEVICES), default="auto",
                         show_default=True,
                         help="auto picks the GPU when one is usable, else the CPU."),
            click.option("--devices", default=None, metavar="LIST",
                         help="GPUs to use, e.g. 0,1 (CUDA_VISIBLE_DEVICES numbering). "
                              "[default: every visible GPU]"),
            click.option("-o", "--output", default=None, metavar="FILE",
                         help="Write results to FILE instead of stdout ('-' is stdout)."),
        ]
        for option in reversed(options):
            command = option(command)
        return command

    return apply


@cli.command(help=ALIGN_HELP)
@click.argument("query")
@click.argument("target")
@_scoring_options
@_output_options("pairwise")
@click.option("--strategy", default=None, metavar="NAME",
              help="GPU strategy: multipass (default), or the lab's score-only diagonal or "
                   "tiled.")
@click.option("--sync", type=click.Choice(SYNCS), default=None,
              help="Synchronization between the steps of diagonal and tiled. "
                   "[default: cpu-implicit]")
@click.option("--storage", default=None, metavar="NAME",
              help="Storage of the diagonal strategy: coalesced (default) or simple.")
@click.option("--energy", is_flag=True, help=ENERGY_HELP)
@click.pass_obj
def align(obj, query: str, target: str, mode: str, matrix: str | None, match: int | None,
          mismatch: int | None, gap_open: int | None, gap_extend: int | None,
          score_only: bool, fmt: str, device: str, devices: str | None, output: str | None,
          strategy: str | None, sync: str | None, storage: str | None, energy: bool) -> None:
    scoring = _scoring(matrix, match, mismatch, gap_open, gap_extend)
    queries = _prepare(query, scoring, "query")
    targets = _prepare(target, scoring, "target")
    qlens = np.array([c.size for c in queries.codes], dtype=np.int64)
    tlens = np.array([c.size for c in targets.codes], dtype=np.int64)
    scoring.check_range(int(qlens.max()), int(tlens.max()))  # the worst pair, before any work
    chunks = _chunks(qlens, tlens)
    total = sum(cells for _, cells in chunks)
    argv = (obj or {}).get("argv", [])
    with _energy(energy, device, devices) as meter, _output(output) as out:
        resolved = note_device(device)
        gpus = check_gpus(devices, resolved)
        if fmt == "sam":
            header = sam_header(list(zip(targets.ids, tlens.tolist(), strict=True)),
                                command_line=shlex.join(["wavedp", *argv]))
            out.write(header + "\n")
        first = True
        with _progress(total, len(qlens) * len(tlens), total >= CHUNK_CELLS) as advance:
            for pairs, cells in chunks:
                results = run_pairs(queries, targets, pairs, scoring, mode, not score_only,
                                    resolved, strategy, sync, storage, gpus)
                for aln in results:
                    if fmt == "pairwise" and not first:
                        out.write("\n")
                    out.write(format_alignment(aln, fmt) + "\n")
                    first = False
                out.flush()
                advance(cells)
    _energy_line(meter, int(qlens.sum()) * int(tlens.sum()))


MAKEDB_HELP = """Build a search database (a .wdb folder) from FASTA.

FASTA is a FASTA or FASTQ file, plain or gzipped. Its records are checked and encoded once
into DB.wdb (memory-mapped by wavedp search, with checksums); an older database at DB.wdb is
replaced, anything else there is refused.
"""


@cli.command(help=MAKEDB_HELP)
@click.argument("fasta")
@click.option("-o", "--output", required=True, metavar="DB.wdb", help="The database folder.")
@click.option("--alphabet", type=click.Choice(list(ALPHABETS)), default="protein",
              show_default=True, help="Residue alphabet of the sequences.")
def makedb(fasta: str, output: str, alphabet: str) -> None:
    db = Database.build(fasta, output, alphabet=alphabet, progress=True)
    click.echo(f"wavedp: {output}: {len(db):,} sequences, {db.total_residues:,} residues "
               f"({alphabet})", err=True)


SEARCH_HELP = f"""Search every record of QUERIES against every sequence of DB.

QUERIES is a FASTA or FASTQ file (plain or gzipped); DB a database folder made by
wavedp makedb, or a FASTA/FASTQ file. Every pair is scored exactly (no seeds, no
heuristic filter); per query the --top best hits are reported (ties by database order),
each aligned as wavedp align would align the pair.

\b
Scoring defaults (as wavedp align):
  protein: --matrix BLOSUM62 --gap-open {PROTEIN_DEFAULTS[0]} --gap-extend {PROTEIN_DEFAULTS[1]}
  DNA (given --match and --mismatch): --gap-open {DNA_DEFAULTS[0]} --gap-extend {DNA_DEFAULTS[1]}

\b
E-values (local mode, BLAST's gapped tables, n = database residues):
hits with an E-value above --evalue (default 10) are left out. Where
no table exists (other gap costs, global or semiglobal mode) evalue
and bitscore print NA and --evalue is an error.

\b
DNA searches both strands unless --strand says otherwise; a minus-strand
hit aligns the query's reverse complement (blast6: sstart > send,
sam: FLAG 16).

\b
--resume (with -o FILE) journals each finished query beside FILE: a run
that was stopped, even killed, continues where it stopped when the same
command is run again, and writes exactly the file of an uninterrupted run.

\b
--scheduler tcp://HOST:8786 scans DB, a .wdb folder at the same path on
every worker, on the workers of a running Dask cluster; --cluster local
starts one on this machine for the run. The output is the same.
"""


def _database_identity(path: str) -> dict:
    """A database's identity for the --resume signature (a .wdb: its header's checksum)."""
    if not os.path.isdir(path):
        return file_identity(path)
    with open(os.path.join(path, HEADER), "rb") as fh:
        crc = zlib.crc32(fh.read())
    return {"path": os.path.realpath(path), "header crc32": f"{crc:08x}"}


def _signature(query: str, database: str, scoring: Scoring, options: dict) -> dict:
    """Everything that decides a search's output, for ``--resume`` to compare."""
    table = np.ascontiguousarray(scoring.table, dtype="<i4")
    return {
        "wavedp version": __version__,
        "query file": file_identity(query),
        "database": _database_identity(database),
        "scoring": {"matrix": scoring.matrix, "match": scoring.match,
                    "mismatch": scoring.mismatch, "gap_open": scoring.gap_open,
                    "gap_extend": scoring.gap_extend,
                    "table crc32": f"{zlib.crc32(table.tobytes()):08x}"},
        **{f"--{name}": value for name, value in options.items()},
    }


def _render(hits: list[Alignment], fmt: str) -> str:
    """One query's hits as text: a line (or block) per hit, blocks a blank line apart."""
    if fmt == "pairwise":
        return "\n".join(format_alignment(h, fmt) + "\n" for h in hits)
    return "".join(format_alignment(h, fmt, search=True) + "\n" for h in hits)


class _Writer:
    """Writes a search's output: the header, then each query's text in query order (pairwise
    blocks of consecutive queries a blank line apart, as ``wavedp align`` writes them)."""

    def __init__(self, out: TextIO, fmt: str) -> None:
        self.out, self.fmt, self.started = out, fmt, False

    def header(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.out.write(line + "\n")

    def query(self, text: str) -> None:
        if not text:
            return
        if self.fmt == "pairwise" and self.started:
            self.out.write("\n")
        self.out.write(text)
        self.started = True


def _sam_header(db: Database, argv: list[str]) -> Iterator[str]:
    """The search's SAM header, its @SQ lines streamed from the database."""

    def targets() -> Iterator[tuple[str, int]]:
        for start in range(0, len(db), SQ_BLOCK):
            stop = min(start + SQ_BLOCK, len(db))
            lengths = np.asarray(db.lengths[start:stop]).tolist()
            yield from zip(db.ids[start:stop], lengths, strict=True)

    return sam_header_lines(targets(), command_line=shlex.join(["wavedp", *argv]))


def _si(count: float) -> str:
    """A count with an SI suffix: 17845600 -> '17.8M'."""
    for suffix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f}{suffix}"
    return f"{count:.0f}"


class _Meter:
    """Search progress on stderr (rich, only on a terminal): queries done, residues scanned,
    GCUPS (DP cells per second)."""

    def __init__(self, total_cells: int, queries: int, scans: int, show: bool) -> None:
        import rich.progress as rp
        from rich.console import Console

        console = Console(stderr=True)
        self.progress = rp.Progress(
            rp.TextColumn("{task.description}"), rp.BarColumn(bar_width=20),
            rp.TaskProgressColumn(), rp.TextColumn("{task.fields[status]}"), rp.TimeElapsedColumn(),
            rp.TimeRemainingColumn(), console=console,
            disable=not (show and console.is_terminal), transient=True)
        self.total, self.queries, self.scans = max(total_cells, 1), queries, scans
        self.cells = self.done = 0
        self.start = time.perf_counter()
        self.task = self.progress.add_task("searching", total=self.total, status="")

    def __enter__(self) -> _Meter:
        self.progress.__enter__()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def advance(self, cells: int) -> None:
        """Work completed: ``cells`` DP cells (query length x residues scanned)."""
        self.cells += int(cells)
        self._show()

    def query_done(self) -> None:
        self.done += 1
        self._show()

    def _show(self) -> None:
        seconds = max(time.perf_counter() - self.start, 1e-9)
        residues = self.scans * min(self.cells / self.total, 1.0)  # residues of all scans
        status = (f"{self.done:,}/{self.queries:,} queries, {_si(residues)} residues "
                  f"scanned, {self.cells / seconds / 1e9:.1f} GCUPS")
        self.progress.update(self.task, completed=self.cells, status=status)


class _Dask:
    """The Dask client of ``--scheduler`` or ``--cluster local``: connected when the search
    asks for it (after the input is validated); ``close`` closes it and a cluster it
    started."""

    def __init__(self, scheduler: str | None, cluster: str | None,
                 workers: int | None) -> None:
        self.scheduler, self.cluster, self.workers = scheduler, cluster, workers
        self.client = None

    def __call__(self):
        self.client = _distributed.connect(self.scheduler, self.cluster, self.workers,
                                           timeout=CONNECT_TIMEOUT)
        threads = self.client.nthreads()
        click.echo(f"wavedp: using the Dask cluster at {self.client.scheduler.address} "
                   f"({len(threads)} workers, {sum(threads.values())} threads)", err=True)
        return self.client

    def close(self) -> None:
        if self.client is not None:
            _distributed.close(self.client)


@cli.command(name="search", help=SEARCH_HELP)
@click.argument("query", metavar="QUERIES")
@click.argument("database", metavar="DB")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Hits reported per query (0 = all).")
@click.option("--evalue", type=float, default=None,
              help="Report hits with an E-value at most this. [default: 10 where statistics "
                   "exist]")
@click.option("--min-score", type=int, default=None, help="Report hits scoring at least this.")
@click.option("--fraction", type=float, default=None,
              help="Local mode: expand each reported pair into its non-intersecting "
                   "alignments scoring at least this fraction (0, 1] of the pair's best "
                   "(Waterman-Eggert); --top then counts pairs.")
@_scoring_options
@click.option("--strand", type=click.Choice(STRANDS), default="both", show_default=True,
              help="DNA: the query strands searched.")
@_output_options("blast6")
@click.option("--resume", is_flag=True,
              help="With -o: journal finished queries beside FILE; rerunning the same "
                   "command continues a stopped run.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Scan DB (a .wdb folder at the same path on every worker) on the Dask "
                   "cluster of this scheduler, e.g. tcp://HOST:8786.")
@click.option("--cluster", type=click.Choice(["local"]), default=None,
              help="Start a Dask cluster on this machine for the run (with dask-cuda: one "
                   "worker per GPU).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes of --cluster local. [default: one per GPU with "
                   "dask-cuda, else Dask's split of the cores]")
@click.option("--partition", default="auto", show_default=True, metavar="NAME",
              help="How the GPU scan cuts queries x DB into launches: none, static, "
                   "dynamic1, dynamic2, or auto (the predictor's fastest).")
@click.option("--explain", is_flag=True,
              help="Print each scan launch's predicted and measured time on stderr.")
@click.option("--energy", is_flag=True, help=ENERGY_HELP)
@click.pass_obj
def search_command(obj, query: str, database: str, top: int, evalue: float | None,
                   min_score: int | None, fraction: float | None, mode: str,
                   matrix: str | None, match: int | None, mismatch: int | None,
                   gap_open: int | None, gap_extend: int | None,
                   score_only: bool, strand: str, fmt: str, device: str, devices: str | None,
                   output: str | None, resume: bool, scheduler: str | None, cluster: str | None,
                   workers: int | None, partition: str, explain: bool, energy: bool) -> None:
    scoring = _scoring(matrix, match, mismatch, gap_open, gap_extend)
    if fraction is not None:
        check_fraction(fraction)
    if resume and output in (None, "-"):
        raise InputError("--resume needs -o FILE (the journal is kept beside the output file)")
    if resume and os.path.isdir(output):
        raise InputError(f"cannot write output file {output}: it is a directory")
    if scheduler is not None and cluster is not None:
        raise InputError("--scheduler and --cluster exclude each other: give one of them")
    if workers is not None and cluster is None:
        raise InputError("--workers applies to --cluster local only")
    if energy and (scheduler is not None or cluster is not None):
        raise InputError("--energy measures this process's GPUs: not with --scheduler or "
                         "--cluster")
    queries = _prepare(query, scoring, "query")
    db = open_database(database, scoring)
    journal = None
    if resume:  # the cluster options do not change the output: not in the signature
        options = {"mode": mode, "top": top, "evalue": evalue, "min-score": min_score,
                   "score-only": score_only, "strand": strand, "format": fmt,
                   "fraction": fraction}
        journal = Journal(output, _signature(query, database, scoring, options))
    dask = None if scheduler is None and cluster is None else _Dask(scheduler, cluster, workers)
    try:
        done = set(journal.done) if journal else set()
        todo = [k for k in range(len(queries.codes)) if k not in done]
        strands = 2 if scoring.is_dna and strand == "both" else 1
        scans = len(todo) * strands * db.total_residues  # residues of every scan
        cells = sum(queries.codes[k].size for k in todo) * strands * db.total_residues
        meter = _Meter(cells, len(todo), scans, show=True)
        started = _explain_start() if explain else 0.0
        with _energy(energy, device, devices) as power:
            # with a cluster the workers resolve the device of the scan
            results = iter_search(queries, db, scoring, top=top,
                                  evalue=DEFAULT_EVALUE if evalue is None else evalue,
                                  min_score=min_score, mode=mode, traceback=not score_only,
                                  strand=strand,
                                  device=device if dask is not None else _device.resolve(device),
                                  progress=meter.advance, skip=done, fraction=fraction,
                                  client=dask, devices=devices, partition=partition)
            argv = (obj or {}).get("argv", [])
            header = _sam_header(db, argv) if fmt == "sam" else ()
            if journal is None:
                with _output(output) as out, meter:
                    if dask is None:
                        note_device(device)
                    writer = _Writer(out, fmt)
                    writer.header(header)
                    for _, hits in results:
                        writer.query(_render(hits, fmt))
                        out.flush()
                        meter.query_done()
            else:
                journal.start()
                if dask is None:
                    note_device(device)
                with meter:
                    for k, hits in results:
                        journal.commit(k, _render(hits, fmt))
                        meter.query_done()
                with journal.assemble() as out:
                    writer = _Writer(out, fmt)
                    writer.header(header)
                    for k in range(len(queries.codes)):
                        writer.query(journal.text(k))
        _energy_line(power, cells)
        if explain:
            _explain(started, [queries.codes[k].size for k in todo for _ in range(strands)],
                     db.total_residues)
    finally:
        if journal is not None:
            journal.close()
        if dask is not None:
            dask.close()


def _explain_start() -> float:
    from .engines.cuda import search as gpu_search

    gpu_search.LOG.clear()
    return time.perf_counter()


def _explain(started: float, query_m: list[int], residues: int) -> None:
    """``search --explain``: the GPU scan's launches predicted beside measured, or the CPU
    engine's predicted scan beside the whole run."""
    from .engines.cuda import search as gpu_search
    from .search import predict

    if gpu_search.LOG:
        lines = predict.explain_lines(gpu_search.LOG)
    else:
        guess = predict.cpu_seconds(predict.model_for("cpu"), np.array(query_m), residues)
        lines = [f"CPU scan predicted {guess:.3f} s; the whole search (scan, alignments, "
                 f"output) took {time.perf_counter() - started:.3f} s"]
    click.echo("\n".join(["wavedp: explain:", *lines]), err=True)


def _cupy_version() -> str | None:
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name == "cupy" or name.startswith("cupy-cuda"):
            return f"{dist.metadata['Name']} {dist.version}"
    return None


@cli.command()
def info() -> None:
    """Print the version, the backends and the GPU devices found."""
    import numba

    ok, why = _device.gpu_status()
    cupy = _cupy_version()
    lines = [
        f"wavedp {__version__}",
        f"python: {platform.python_version()} ({sys.executable})",
        f"numpy: {np.__version__}",
        f"numba: {numba.__version__} (CPU engine: {numba.config.NUMBA_NUM_THREADS} threads, "
        f"{os.cpu_count()} CPUs)",
        f"cupy: {cupy or 'not installed'}" + ("" if ok else f"; not usable: {why}"),
        f"gpu: {why}" if ok else "gpu: none",
        f"device auto: {_device.resolve('auto')}",
    ]
    click.echo("\n".join(lines))


cli.add_command(lab)


from .polyadic.commands import chain, fold  # noqa: E402 - they import this module's helpers
from .search.commands import calibrate, predict_command  # noqa: E402

cli.add_command(chain)
cli.add_command(fold)
cli.add_command(calibrate)
cli.add_command(predict_command)


def main() -> None:
    """Console-script entry point (``wavedp = "wavedp.cli:main"``)."""
    cli()


if __name__ == "__main__":
    main()

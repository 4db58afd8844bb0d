"""The ``wavedp`` command line: ``wavedp align`` and ``wavedp info``.

Results go to stdout or ``-o FILE`` (written to a temporary file beside it and renamed at the
end, so no partial file is ever left); progress and notes go to stderr. User errors print one
line, ``wavedp: error: <message>``, and exit with status 2.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shlex
import sys
import tempfile
from collections.abc import Iterator
from importlib import metadata
from typing import TextIO

import click
import numpy as np

from . import __version__
from . import device as _device
from .api import Prepared, note_device, run_pairs
from .engines.common import MODES
from .errors import DeviceError, InputError
from .formats import FORMATS, format_alignment, sam_header
from .scoring import Scoring
from .seqio import read_records

#: exit status for user errors (click's usage errors use it too)
USAGE_EXIT = 2
#: one engine call gets about this many DP cells (and at most CHUNK_PAIRS pairs)
CHUNK_CELLS = 1 << 27
CHUNK_PAIRS = 1 << 14

PROTEIN_DEFAULTS = (11, 1)
DNA_DEFAULTS = (5, 2)


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
        except DeviceError as exc:  # the GPU failed mid-run: one line, no traceback
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
evalue and bitscore print NA until the search feature adds statistics),
json (one object per line).
"""


@cli.command(help=ALIGN_HELP)
@click.argument("query")
@click.argument("target")
@click.option("--mode", type=click.Choice(list(MODES)), default="local", show_default=True,
              help="local (Smith-Waterman/Gotoh), global (Needleman-Wunsch) or semiglobal "
                   "(end gaps free).")
@click.option("--matrix", default=None,
              help="Substitution matrix by name (any integer matrix Biopython ships). "
                   "[default: BLOSUM62]")
@click.option("--match", type=int, default=None, help="DNA match score (with --mismatch).")
@click.option("--mismatch", type=int, default=None, help="DNA mismatch score (with --match).")
@click.option("--gap-open", type=int, default=None,
              help=f"Cost of a gap's first residue. [default: {PROTEIN_DEFAULTS[0]} protein, "
                   f"{DNA_DEFAULTS[0]} DNA]")
@click.option("--gap-extend", type=int, default=None,
              help=f"Cost of each further gap residue. [default: {PROTEIN_DEFAULTS[1]} protein, "
                   f"{DNA_DEFAULTS[1]} DNA]")
@click.option("--score-only", is_flag=True,
              help="Scores and end coordinates only (no traceback, no CIGAR).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="pairwise",
              show_default=True, help="Output format.")
@click.option("--device", type=click.Choice(_device.DEVICES), default="auto",
              show_default=True, help="auto picks the GPU when one is usable, else the CPU.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write results to FILE instead of stdout ('-' is stdout).")
@click.pass_obj
def align(obj, query: str, target: str, mode: str, matrix: str | None, match: int | None,
          mismatch: int | None, gap_open: int | None, gap_extend: int | None,
          score_only: bool, fmt: str, device: str, output: str | None) -> None:
    scoring = _scoring(matrix, match, mismatch, gap_open, gap_extend)
    queries = _prepare(query, scoring, "query")
    targets = _prepare(target, scoring, "target")
    qlens = np.array([c.size for c in queries.codes], dtype=np.int64)
    tlens = np.array([c.size for c in targets.codes], dtype=np.int64)
    scoring.check_range(int(qlens.max()), int(tlens.max()))  # the worst pair, before any work
    chunks = _chunks(qlens, tlens)
    total = sum(cells for _, cells in chunks)
    argv = (obj or {}).get("argv", [])
    with _output(output) as out:
        resolved = note_device(device)
        if fmt == "sam":
            header = sam_header(list(zip(targets.ids, tlens.tolist(), strict=True)),
                                command_line=shlex.join(["wavedp", *argv]))
            out.write(header + "\n")
        first = True
        with _progress(total, len(qlens) * len(tlens), total >= CHUNK_CELLS) as advance:
            for pairs, cells in chunks:
                results = run_pairs(queries, targets, pairs, scoring, mode, not score_only,
                                    resolved)
                for aln in results:
                    if fmt == "pairwise" and not first:
                        out.write("\n")
                    out.write(format_alignment(aln, fmt) + "\n")
                    first = False
                out.flush()
                advance(cells)


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


def main() -> None:
    """Console-script entry point (``wavedp = "wavedp.cli:main"``)."""
    cli()

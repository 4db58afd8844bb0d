"""``wavedp search``: every query searched against a database (on this machine's CPU or
GPUs, a Dask cluster, or a running ``wavedp serve``), its hits written as they come or
journalled for ``--resume``."""

from __future__ import annotations

import os
import shlex
import time
import warnings
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

import click
import numpy as np

from .. import columns as fields
from ..alignment import Alignment
from ..api import check_table_range
from ..db.database import Database
from ..db.files import HEADER
from ..dbsearch import text
from ..dbsearch.api import (
    DEFAULT_EVALUE,
    Searcher,
    open_database,
    warn_empty,
)
from ..dbsearch.journal import Journal, file_identity
from ..dbsearch.options import Options
from ..dbsearch.strands import STRANDS
from ..dbsearch.tables import check_parquet, write_parquet
from ..dbsearch.text import BLASTN_GAPS, DNA_DEFAULTS, DNA_SCORES, PROTEIN_DEFAULTS
from ..dbsearch.waterman_eggert import check_fraction
from ..device import Device, choose, start_gpus
from ..errors import EmptyWarning, InputError
from ..formats import sam_header_lines
from ..profiles.iterate import INCLUSION
from ..scoring import Scoring
from ..seqio import STDIN
from ..stats.significance import DEFAULT_STATS, STATS
from ..trace import Trace, explain_lines, process_seconds
from ..version import __version__
from . import common, outputs, profiles, remote
from .cluster import Dask
from .profiles import ProfileFile
from .progress import Progress, counted
from .queries import Blocks, QueryFile, holds_dna

#: SAM @SQ lines are streamed from a database this many sequences at a time
SQ_BLOCK = 1 << 16

#: the scoring of a search of a DNA database given no scoring flag: blastn's reward and
#: penalty, and its gap costs (existence 5, extension 2: a first gap residue costs 7 here),
#: which BLAST has statistics for


SEARCH_HELP = f"""Search every record of QUERIES against every sequence of DB.

QUERIES is a FASTA or FASTQ file (plain or gzipped); DB a database folder made by
wavedp makedb, or a FASTA/FASTQ file. Every pair is scored exactly (no seeds, no
heuristic filter); per query the --top best hits are reported (ties by database order),
each aligned as wavedp align would align the pair.

\b
Scoring defaults (as wavedp align):
  protein: --matrix BLOSUM62 --gap-open {PROTEIN_DEFAULTS[0]} --gap-extend {PROTEIN_DEFAULTS[1]}
  DNA (given --match and --mismatch): --gap-open {DNA_DEFAULTS[0]} --gap-extend {DNA_DEFAULTS[1]}
  a DNA DB given no scoring option: --match {DNA_SCORES[0]} --mismatch {DNA_SCORES[1]} \
--gap-open {BLASTN_GAPS[0]} --gap-extend {BLASTN_GAPS[1]} (blastn's)

\b
E-values (--stats): fitted (default) fits each query's own score
distribution on a sample of DB (every scoring and mode), with
composition-based statistics for protein local searches; below 200
sequences BLAST's tables stand in (NA, said once, where none exist).
empirical: the fit alone; composition: BLAST's tables adjusted per
pair; blast: BLAST's tables (blastp -comp_based_stats 0); none: no
E-values. Hits rank by E-value (by score with none); hits with an
E-value above --evalue (default 10) are left out. --mask scores the
queries' low-complexity regions (tantan, pytantan) as X.

\b
DNA searches both strands unless --strand says otherwise; a minus-strand
hit aligns the query's reverse complement (blast6: sstart > send,
sam: FLAG 16).

\b
--columns "qseqid sseqid evalue ..." picks blast6's fields by BLAST's
names (std: BLAST's default twelve); --header first prints the fields
as blastn -outfmt 7 names them. --format parquet writes one table row
per hit (every field, query_index and target_index; needs pyarrow).

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


@click.command(name="search", help=SEARCH_HELP)
@click.argument("inputs", nargs=-1, required=True, metavar="QUERIES DB")
@profiles.profile_options
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
@click.option("--max-hsps", type=click.IntRange(min=1), default=None,
              help="Local mode: at most this many non-intersecting alignments a subject "
                   "(BLAST's -max_hsps), each passing the cutoffs; with --fraction, those "
                   "scoring at least that fraction of the best. [default: one]")
@common.scoring_options
@click.option("--strand", type=click.Choice(STRANDS), default="both", show_default=True,
              help="DNA: the query strands searched.")
@click.option("--stats", type=click.Choice(STATS), default=DEFAULT_STATS, show_default=True,
              help="Where E-values come from (see above).")
@click.option("--mask", is_flag=True,
              help="Score the queries' low-complexity regions as X (N for DNA): tantan, "
                   "from the optional package pytantan.")
@common.output_options("blast6", more=("parquet",))
@common.column_options("blast6 or parquet", header=(
    "blast6: comment lines as BLAST's -outfmt 7 writes them: before each query's hits the "
    "program, the query's title, DB, the fields and the number of hits; at the end the "
    "number of queries."))
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
@click.option("--energy", is_flag=True, help=common.ENERGY_HELP)
@click.option("--server", default=None, metavar="URL",
              help="Ask a running 'wavedp serve' at URL (DB: one of its databases by name) "
                   "and write its answer as this command writes its own (blast6 or sam).")
@click.option("--token", default=None, metavar="TOKEN",
              help="--server's bearer token. [default: $WAVEDP_TOKEN]")
@click.pass_obj
@common.threads_option
def search_command(obj, inputs: tuple[str, ...], in_pssm: str | None, iterations: int,
                   inclusion_evalue: float, out_pssm: str | None, msa: str | None,
                   msa_format: str, top: int,
                   evalue: float | None,
                   min_score: int | None, fraction: float | None, max_hsps: int | None,
                   mode: str,
                   matrix: str | None, match: int | None, mismatch: int | None,
                   gap_open: int | None, gap_extend: int | None,
                   score_only: bool, strand: str, stats: str, mask: bool, fmt: str,
                   device: str, devices: str | None,
                   output: str | None, column_text: str | None, header: bool, resume: bool,
                   scheduler: str | None, cluster: str | None,
                   workers: int | None, partition: str, explain: bool, energy: bool,
                   server: str | None, token: str | None) -> None:
    query, database = profiles.inputs(inputs, in_pssm, iterations, out_pssm, msa, server)
    if server is not None:  # an option the server does not take (else cli/remote.py's)
        remote.check([flag for flag, given in (
            ("--fraction", fraction is not None), ("--max-hsps", max_hsps is not None),
            ("--score-only", score_only),
            ("--mask", mask), ("--resume", resume), ("--scheduler", scheduler),
            ("--cluster", cluster), ("--explain", explain), ("--energy", energy)) if given],
            fmt)
        remote.run(server, token, query, database, options={
            "top": top, "evalue": evalue, "min_score": min_score, "stats": stats,
            "mode": mode, "strand": strand, "matrix": matrix, "match": match,
            "mismatch": mismatch, "gap_open": gap_open, "gap_extend": gap_extend},
            columns=common.columns(column_text, header, fmt), header=header, fmt=fmt,
            output=output, argv=(obj or {}).get("argv", []))
        return
    if matrix is None and match is None and mismatch is None and holds_dna(database):
        if in_pssm:
            raise InputError(f"file {database}: a DNA database; a profile searches proteins")
        if query != STDIN and not holds_dna(query):
            raise InputError(f"file {database}: a DNA database cannot be searched with the "
                             f"protein queries of {query}; give DNA queries, or search a "
                             "protein database")
        match, mismatch, gap_open, gap_extend = text.database_scoring(  # no flag needed
            matrix, match, mismatch, gap_open, gap_extend)
        click.echo(f"wavedp: a DNA database: --match {match} --mismatch {mismatch} "
                   f"--gap-open {gap_open} --gap-extend {gap_extend}", err=True)
    scoring = text.scoring(matrix, match, mismatch, gap_open, gap_extend)
    if fraction is not None:
        check_fraction(fraction)
    request = _Request(
        query=query, database=database, scoring=scoring, mode=mode,
        top=top, evalue=evalue, min_score=min_score, fraction=fraction, max_hsps=max_hsps,
        traceback=not score_only, strand=strand, stats=stats, mask=mask, fmt=fmt,
        columns=common.columns(column_text, header, fmt, ("blast6", "parquet")),
        header=header, destination=outputs.target(output, [query, database]), resume=resume,
        device=device, devices=devices, scheduler=scheduler, cluster=cluster, workers=workers,
        partition=partition, explain=explain, energy=energy,
        argv=(obj or {}).get("argv", []), profile=in_pssm is not None,
        iterations=iterations, inclusion=inclusion_evalue,
        out_pssm=None if out_pssm is None else outputs.target(
            out_pssm, [query, database, *([output] if output else [])]),
        msa=None if msa is None else (outputs.target(
            msa, [query, database, *([output] if output else []),
                  *([out_pssm] if out_pssm else [])]), msa_format))
    request.check()
    queries, db, journal, dask = _opened(request)
    try:
        _searched(request, queries, db, journal, dask)
    finally:
        if journal is not None:
            journal.close()
        if dask is not None:
            dask.close()


@dataclass(frozen=True, kw_only=True)
class _Request:
    """The search command's arguments: what is searched, how, and where the hits go."""

    query: str
    database: str
    scoring: Scoring
    mode: str
    top: int
    evalue: float | None
    min_score: int | None
    fraction: float | None
    max_hsps: int | None
    traceback: bool
    strand: str
    stats: str
    mask: bool
    fmt: str
    columns: tuple[str, ...] | None
    header: bool
    destination: outputs.Target
    resume: bool
    device: str
    devices: str | None
    scheduler: str | None
    cluster: str | None
    workers: int | None
    partition: str
    explain: bool
    energy: bool
    argv: list[str]
    profile: bool = False  # QUERIES is a profile (--in-pssm)
    iterations: int = 1
    inclusion: float = INCLUSION
    out_pssm: outputs.Target | None = None  # the last round's profile (--out-pssm)
    msa: tuple[outputs.Target, str] | None = None  # --msa FILE, --msa-format

    def check(self) -> None:
        """An InputError for arguments that do not go together, before any work."""
        if self.fmt == "parquet":
            check_parquet("--format parquet")
            if self.resume:
                raise InputError("--resume journals text output: not with --format parquet")
            real = self.destination.real
            if real is not None and real.endswith(".gz"):
                raise InputError("--format parquet compresses inside the file: -o NAME.gz "
                                 "does not apply (name it .parquet)")
        if self.query == STDIN and self.database == STDIN:
            raise InputError("QUERIES and DB cannot both be standard input ('-')")
        if self.resume and STDIN in (self.query, self.database):
            raise InputError("--resume needs files it can read again: not standard input "
                             "('-')")
        if self.resume and self.destination.kind != "file":
            raise InputError("--resume needs -o FILE, a regular file (the journal is kept "
                             "beside it)")
        if self.scheduler is not None and self.cluster is not None:
            raise InputError("--scheduler and --cluster exclude each other: give one of them")
        if self.workers is not None and self.cluster is None:
            raise InputError("--workers applies to --cluster local only")
        if self.energy and not self.local:
            raise InputError("--energy measures this process's GPUs: not with --scheduler "
                             "or --cluster")

    @property
    def local(self) -> bool:
        """Whether this machine scans (no Dask cluster)."""
        return self.scheduler is None and self.cluster is None

    @property
    def strands(self) -> int:
        """Strands searched a query."""
        return 2 if self.scoring.is_dna and self.strand == "both" else 1

    def signature(self) -> dict:
        """What the output depends on, for the journal of ``--resume`` (the cluster options
        do not change the output: not in it)."""
        options = {"mode": self.mode, "top": self.top, "evalue": self.evalue,
                   "min-score": self.min_score, "score-only": not self.traceback,
                   "strand": self.strand, "format": self.fmt, "fraction": self.fraction,
                   "columns": " ".join(self.columns or ()), "header": self.header,
                   "stats": self.stats, "mask": self.mask}
        if self.iterations > 1:  # journals from before the option stay valid
            options["iterations"] = self.iterations
            options["inclusion-evalue"] = self.inclusion
        if self.max_hsps is not None:  # journals from before the option stay valid
            options["max-hsps"] = self.max_hsps
        return _signature(self.query, self.database, self.scoring, options)


def _opened(request: _Request
            ) -> tuple[QueryFile | ProfileFile, Database, Journal | None, Dask | None]:
    """The inputs read and the search's helpers started: on this machine the GPUs start (and
    a child plans the scan) while the queries and the database are read; the journal of
    ``--resume``; a Dask cluster's client."""
    if request.local:
        start_gpus(request.device, request.devices)
    queries = (ProfileFile if request.profile else QueryFile)(request.query, request.scoring)
    db = open_database(request.database, request.scoring, verify="background")  # checked
    # before any output
    if request.fmt == "sam":
        name = "standard input" if request.database == "-" else request.database
        common.check_unique_names(
            (rid for start in range(0, len(db), SQ_BLOCK)
             for rid in db.ids[start:start + SQ_BLOCK]), f"database {db.path or name}",
            "sequences")
    journal = (Journal(request.destination.real, request.signature()) if request.resume
               else None)
    dask = None if request.local else Dask(request.scheduler, request.cluster,
                                            request.workers)
    return queries, db, journal, dask


def _searched(request: _Request, queries: QueryFile | ProfileFile, db: Database,
              journal: Journal | None,
              dask: Dask | None) -> None:
    """The search run and its hits written (``--explain`` and ``--energy`` said after)."""
    done = np.array(sorted(journal.done) if journal else [], np.int64)
    todo = np.ones(len(queries), bool)
    todo[done] = False
    if done.size:
        click.echo(f"wavedp: resuming: {counted(int(done.size), 'queries')} of "
                   f"{len(queries):,} done before, {counted(int(todo.sum()), 'queries')} "
                   "to search", err=True)
    strands = request.strands
    scans = int(todo.sum()) * strands * db.total_residues  # residues of every scan
    cells = int(queries.lengths[todo].sum()) * strands * db.total_residues
    meter = Progress("search", cells, queries=int(todo.sum()), scans=scans)
    started, trace = time.perf_counter(), Trace()
    # with a cluster the workers resolve the device of the scan: its name goes to them
    chosen = choose(request.device, request.devices) if dask is None else None
    evalue = DEFAULT_EVALUE if request.evalue is None else request.evalue
    options = {"top": request.top, "evalue": evalue, "min_score": request.min_score,
               "traceback": request.traceback, "strand": request.strand,
               "fraction": request.fraction, "stats": request.stats, "mask": request.mask,
               "max_hsps": request.max_hsps}
    Options.of(request.scoring, request.mode, **options,
               profile=request.profile or request.iterations > 1)  # checked before any
    # output, as the scores' range
    for flag, given in (("--out-pssm", request.out_pssm), ("--msa", request.msa)):
        if given is not None and len(queries) != 1:
            raise InputError(f"{flag} writes one query's: QUERIES holds {len(queries):,}")
    rounds = {} if request.iterations == 1 else {
        "iterations": request.iterations, "inclusion_evalue": request.inclusion,
        "on_profile": lambda k, profile: outputs.write_text(
            request.out_pssm, None if profile is None else profile.text())}
    kept: list[list[Alignment]] = []  # --msa: the one query's hits
    if isinstance(queries, ProfileFile):
        check_table_range(queries.profile.table(request.scoring), request.scoring,
                          int(queries.lengths.max()) + db.longest)
    else:
        request.scoring.check_range(int(queries.lengths.max()), db.longest)
    db.verified()  # the checksums, read while the device started: before any output

    empty = np.flatnonzero((queries.lengths == 0) & todo)  # said once, not once a batch
    warn_empty(int(empty.size), queries.id_of(int(empty[0])) if empty.size else None, db)

    def results(searcher: Searcher) -> Iterator[tuple[int, list[Alignment]]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyWarning)  # said above for the whole file
            for k, hits in batches(searcher):
                if request.msa is not None:
                    kept.append(hits)
                yield k, hits

    def batches(searcher: Searcher) -> Iterator[tuple[int, list[Alignment]]]:
        for start, batch in queries.batches():
            stop = start + len(batch)
            skip = done[np.searchsorted(done, start):np.searchsorted(done, stop)] - start
            if skip.size < len(batch):
                for k, hits in searcher.iter_search(batch, progress=meter.advance,
                                                    skip=skip.tolist(), **options, **rounds):
                    yield start + k, hits

    with common.energy_meter(request.energy, chosen) as power:
        searcher = Searcher(db, request.scoring, mode=request.mode,
                            device=chosen or request.device,
                            devices=request.devices if dask else None,
                            partition=request.partition, client=dask, trace=trace)
        _written(request, results(searcher), queries, db, journal, meter, chosen)
    if request.msa is not None:
        outputs.write_text(request.msa[0], profiles.msa_text(queries, kept[0] if kept else [],
                                             request.msa[1]))
    common.energy_line(power, cells)
    if request.explain:
        gpu = chosen is not None and chosen.gpu
        _explain(trace, started, gpu, np.repeat(queries.lengths[todo], strands).tolist(),
                 db.total_residues)


def _written(request: _Request, results: Iterator[tuple[int, list[Alignment]]],
             queries: QueryFile | ProfileFile, db: Database, journal: Journal | None,
             meter: Progress,
             chosen: Device | None) -> None:
    """Each query's hits written as they come: a Parquet table, text under the output
    contract, or (``--resume``) journalled and assembled once every query is done."""
    fmt, columns, scoring, count = request.fmt, request.columns, request.scoring, len(queries)
    head = _sam_header(db, request.argv) if fmt == "sam" else ()
    block = (Blocks(queries, request.database, request.columns or fields.DEFAULT)
             if request.header else None)
    if fmt == "parquet":
        with outputs.opened(request.destination, binary=True) as out, meter:
            if chosen is not None:
                common.note(chosen)
            write_parquet(_counted(results, meter), out, columns=columns, scoring=scoring,
                          database=db)
    elif journal is None:
        with outputs.opened(request.destination) as out, meter:
            if chosen is not None:
                common.note(chosen)

            def rendered() -> Iterator[tuple[int, str]]:
                for k, hits in results:
                    yield k, text.render(hits, fmt, columns, scoring)
                    out.flush()  # the query is written: _write_text asks for the next
                    meter.query_done()

            _write_text(out, fmt, head, block, count, rendered())
    else:
        journal.start()
        if chosen is not None:
            common.note(chosen)
        with meter:
            for k, hits in results:
                journal.commit(k, text.render(hits, fmt, columns, scoring))
                meter.query_done()
        with journal.assemble() as out:
            _write_text(out, fmt, head, block, count,
                        ((k, journal.text(k)) for k in range(count)))


def _write_text(out: TextIO, fmt: str, head: Iterable[str], block: Blocks | None,
                count: int, rows: Iterable[tuple[int, str]]) -> None:
    """The text output: the SAM header ``head``, each query's ``rows`` (``--header``: in
    its ``block``) as they come, and the ``--header`` closing count of ``count`` queries."""
    writer = _Writer(out, fmt)
    writer.header(head)
    for k, lines in rows:
        writer.query(lines if block is None else block(k, lines))
    if block is not None:
        out.write(fields.processed(count))


def _counted(results: Iterable[tuple[int, list[Alignment]]],
             meter: Progress) -> Iterator[tuple[int, list[Alignment]]]:
    """``results`` as they come, each query counted done on ``meter``."""
    for item in results:
        yield item
        meter.query_done()


def _explain(trace: Trace, started: float, gpu: bool, query_m: list[int],
             residues: int) -> None:
    """``search --explain``: the GPU scan's launches predicted beside measured, or the CPU
    engine's predicted scan beside the whole run."""
    if trace.launches:
        lines = explain_lines(trace.launches)
    elif gpu:  # a database its fit's sample holds whole: the sample's scores stood for it
        lines = ["GPU scan: no launch of the database's own (its fit's sample holds it whole; "
                 "the sample's scores stood for the scan)"]
    else:
        # lazy: the CPU's predictor loads Numba (0.3 s of a GPU command's wall clock)
        from ..dbsearch.predict import model_for
        from ..engines.cpu.scan import cpu_seconds

        guess = cpu_seconds(model_for("cpu"), np.array(query_m), residues)
        lines = [f"CPU scan predicted {guess:.3f} s; the whole search (scan, alignments, "
                 f"output) took {time.perf_counter() - started:.3f} s"]
    whole = time.perf_counter() - started
    phases = ", ".join(f"{name} {seconds:.3f} s" for name, seconds in trace.seconds.items())
    alive = process_seconds()
    start = "" if alive is None else f"; the process ran {alive:.2f} s, " \
        f"{alive - whole:.2f} s of it before the search (start-up, inputs)"
    counts = "".join(f"; {name} {number:,}" for name, number in trace.counts.items())
    lines.append(f"phases: {phases or 'none recorded'}{counts}; the search {whole:.3f} s{start}")
    click.echo("\n".join(["wavedp: explain:", *lines]), err=True)

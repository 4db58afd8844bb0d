"""``wavedp search QUERIES DB --server URL``: the search asked of a running ``wavedp serve``
(``serve/client.py``) and its answer written as the local command writes its own.

The command line takes :data:`search` (:func:`takes`) where every option given is one the
server takes: it imports neither NumPy nor the search's modules, so the client starts in a
fraction of the full command's time (its options, defaults and choices are the full
command's: a test holds them equal). Any other option goes to the full ``search`` command,
which says why ``--server`` cannot take it (:func:`check`) or asks the server through
:func:`run` as well.
"""

from __future__ import annotations

import shlex

import click

from ..errors import InputError
from . import outputs


def takes(args: list[str]) -> bool:
    """Whether the ``search`` command line ``args`` (its arguments after ``search``) asks a
    server with options :data:`search` takes only (:data:`TAKEN`; ``--help`` goes to the full
    command; a value that starts with ``-``, such as ``--min-score -5``, sends it there too)."""
    names = {arg.split("=", 1)[0] for arg in args if arg.startswith("-") and arg != "-"}
    return "--server" in names and names <= TAKEN


def check(unsupported: list[str], fmt: str) -> None:
    """``--server`` with an option it does not take (``unsupported``: their flags) or a
    format other than blast6 and sam: an InputError naming the first."""
    if unsupported or fmt not in ("blast6", "sam"):
        what = unsupported[0] if unsupported else f"--format {fmt}"
        raise InputError(f"--server searches with the blast6 or sam format and the scoring, "
                         f"cutoff and column options: not {what}")


def run(server: str, token: str | None, query: str, database: str, *, options: dict,
        columns: tuple[str, ...] | None, header: bool, fmt: str, output: str | None,
        argv: list[str]) -> None:
    """Ask ``server`` to search the query file ``query`` against its database ``database``
    with ``options`` (the request's names: top, evalue, ...; None: the server's default) and
    write its answer to ``output`` (None or ``-``: stdout) as the command writes its own."""
    import os

    from ..serve import client

    destination = outputs.target(output, [query])
    queries = client.queries_text(query)
    request = {**options, "queries": queries, "database": database,
               "columns": list(columns) if columns else None,
               "format": "sam" if fmt == "sam" else "json" if header else "tsv"}
    answer = client.search(server, {k: v for k, v in request.items() if v is not None},
                           token or os.environ.get("WAVEDP_TOKEN"))
    if header:  # each query's lines in its block, the titles read from its text
        from .. import columns as fields  # lazy: NumPy, for --header only
        from .queries import blocks_of

        answer = blocks_of(answer, queries, database, columns or fields.DEFAULT)
    if fmt == "sam":  # the @PG line names this command
        from ..formats import sam_header_lines  # lazy: NumPy, for SAM only

        pg = list(sam_header_lines([], command_line=shlex.join(["wavedp", *argv])))[-1]
        answer = "".join(pg + "\n" if line.startswith("@PG\t") else line
                         for line in answer.splitlines(keepends=True))
    with outputs.opened(destination) as out:
        out.write(answer)


@click.command(name="search", add_help_option=False)
@click.argument("inputs", nargs=-1, required=True, metavar="QUERIES DB")
@click.option("--top", type=click.IntRange(min=0), default=10)
@click.option("--evalue", type=float, default=None)
@click.option("--min-score", type=int, default=None)
@click.option("--mode", type=click.Choice(["local", "global", "semiglobal"]), default="local")
@click.option("--matrix", default=None)
@click.option("--match", type=int, default=None)
@click.option("--mismatch", type=int, default=None)
@click.option("--gap-open", type=int, default=None)
@click.option("--gap-extend", type=int, default=None)
@click.option("--strand", type=click.Choice(["both", "plus", "minus"]), default="both")
@click.option("--stats", type=click.Choice(["fitted", "empirical", "composition", "blast",
                                            "none"]), default="fitted")
@click.option("--format", "fmt", type=click.Choice(["pairwise", "blast6", "sam", "json",
                                                     "parquet"]), default="blast6")
@click.option("-o", "--output", default=None)
@click.option("--columns", "column_text", default=None)
@click.option("--header", is_flag=True)
@click.option("--server", default=None)
@click.option("--token", default=None)
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto")
@click.option("--devices", default=None)
@click.option("--threads", type=click.IntRange(min=1), default=None)
@click.option("--partition", default="auto")
@click.pass_obj
def search(obj, inputs: tuple[str, ...], top: int, evalue: float | None,
           min_score: int | None, mode: str, matrix: str | None, match: int | None,
           mismatch: int | None, gap_open: int | None, gap_extend: int | None, strand: str,
           stats: str, fmt: str, output: str | None, column_text: str | None, header: bool,
           server: str | None, token: str | None, device: str, devices: str | None,
           threads: int | None, partition: str) -> None:
    """The full ``search`` command's ``--server`` path, from its options that the server
    takes (the device and thread options are the server's business)."""
    if len(inputs) != 2 or server is None:  # as the full command says it
        raise InputError("search takes QUERIES DB")
    check([], fmt)
    columns = None
    if column_text is not None or header:  # checked as the full command checks them
        from .common import columns as checked  # lazy: NumPy, for --columns only

        columns = checked(column_text, header, fmt)
    options = {"top": top, "evalue": evalue, "min_score": min_score, "stats": stats,
               "mode": mode, "strand": strand, "matrix": matrix, "match": match,
               "mismatch": mismatch, "gap_open": gap_open, "gap_extend": gap_extend}
    run(server, token, inputs[0], inputs[1], options=options, columns=columns, header=header,
        fmt=fmt, output=output, argv=(obj or {}).get("argv", []))


#: the options :data:`search` takes: those the server takes, and the local command's device
#: and thread options, which mean nothing to it
TAKEN = {opt for param in search.params for opt in param.opts if opt.startswith("-")}

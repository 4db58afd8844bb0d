"""``wavedp serve``: the search service over HTTP (``wavedp.serve``), run by uvicorn."""

from __future__ import annotations

import ipaddress
import logging
import os

import click

from ..device import DEVICES
from ..errors import InputError

SERVE_HELP = """Serve searches of the databases DB.wdb ... over HTTP.

Each database is opened once (its checksums checked) and searched in this process, its
searchers kept (on the GPU the database stays in GPU memory), so a search costs its scan,
not a command's start. POST /search takes a JSON object: queries (FASTA text or a list of
sequences), database (a name from GET /databases: a folder's name without .wdb; optional
with one) and the search command's options with underscores (top, evalue, min_score, stats,
mode, strand, matrix, match, mismatch, gap_open, gap_extend, columns) and format: tsv (the
lines wavedp search prints), json or sam. GET /health, GET /databases, GET /openapi.json.
A bad request gets a 4xx and one message. The service listens on 127.0.0.1; any other
address needs --token (every request but /health then sends Authorization: Bearer TOKEN).
Needs the optional packages of pip install 'wavedp[serve]'.
"""


@click.command(help=SERVE_HELP)
@click.argument("databases", metavar="DB.wdb...", nargs=-1, required=True)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8040, show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
              help="Where the searches run.")
@click.option("--token", default=None, metavar="TOKEN",
              help="Ask every request but /health for this bearer token (needed to listen "
                   "on another address than the loopback). [default: $WAVEDP_TOKEN]")
@click.option("--max-queries", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Queries one request may hold.")
@click.option("--max-residues", type=click.IntRange(min=1), default=10_000_000,
              show_default=True, help="Query residues one request may hold.")
def serve(databases: tuple[str, ...], host: str, port: int, device: str, token: str | None,
          max_queries: int, max_residues: int) -> None:
    token = token or os.environ.get("WAVEDP_TOKEN") or None
    if not _loopback(host) and token is None:
        raise InputError(f"--host {host} serves other machines: give --token (or set "
                         "WAVEDP_TOKEN), or listen on 127.0.0.1")
    named = {}
    for path in databases:
        if not os.path.isdir(path):
            raise InputError(f"{path}: not a .wdb database (wavedp makedb builds one)")
        name = os.path.basename(os.path.normpath(path)).removesuffix(".wdb")
        if name in named:
            raise InputError(f"{path}: a second database named {name!r} ({named[name]})")
        named[name] = path
    try:
        import uvicorn
    except ImportError:
        raise InputError("serve needs uvicorn and starlette: pip install 'wavedp[serve]'"
                         ) from None
    from ..serve import Service, make_app
    from ..serve.service import Limits

    service = Service(named, device, Limits(queries=max_queries, residues=max_residues))
    log = logging.getLogger("wavedp.serve")
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("wavedp: %(asctime)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    click.echo(f"wavedp: serving {', '.join(named)} on http://{host}:{port}", err=True)
    # uvicorn's own signal handling: SIGTERM and Ctrl-C stop taking connections and finish
    # the requests in flight
    uvicorn.run(make_app(service, token), host=host, port=port, log_level="warning")


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

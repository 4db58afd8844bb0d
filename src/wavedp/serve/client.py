"""``wavedp search QUERIES DB --server URL``: the search asked of a running ``wavedp serve``,
its answer written as the local command writes its own. Imports neither CuPy nor Numba."""

from __future__ import annotations

import sys
from typing import Any

from ..errors import DeviceError, InputError
from ..seqio import open_bytes

#: seconds a search may take before the client gives up
TIMEOUT = 3600.0


def queries_text(path: str) -> str:
    """The query file's text (``-``: standard input; gzip decompressed)."""
    try:
        if path == "-":
            return sys.stdin.read()
        with open_bytes(path) as fh:
            return fh.read().decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def search(url: str, request: dict[str, Any], token: str | None = None) -> str:
    """The server's answer (text) to ``request``; a 4xx is an InputError with the server's
    message, an unreachable server or a 5xx a DeviceError (exit status 1).

    The standard library's ``http.client`` carries it: one request needs no connection
    pool, and httpx's import and its TLS context (certifi's bundle, made even for http://)
    took 0.2 s of a 0.35 s command on a 2-core machine."""
    import http.client
    import json
    from urllib.parse import urlsplit

    parts = urlsplit(url.rstrip("/"))
    try:
        port = parts.port  # a port that is not a number: ValueError
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError
    except ValueError:
        raise InputError(f"--server takes an http:// or https:// address, not {url!r}"
                         ) from None
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(parts.hostname, port, timeout=TIMEOUT)
        try:
            connection.request("POST", parts.path + "/search", json.dumps(request), headers)
            answer = connection.getresponse()
            status, reason, body = answer.status, answer.reason, answer.read()
        finally:
            connection.close()
    except (OSError, http.client.HTTPException) as exc:
        raise DeviceError(f"the server {url} cannot be reached: {exc or type(exc).__name__}"
                          ) from None
    text = body.decode("utf-8", "replace")
    if 400 <= status < 500:
        try:
            message = json.loads(text)["error"]
        except (ValueError, KeyError, TypeError):
            message = text.strip() or reason
        raise InputError(f"the server {url} refused the search: {message}")
    if status != 200:
        raise DeviceError(f"the server {url} failed: {status} {reason}")
    return text

"""``wavedp search QUERIES DB --server URL``: the search asked of a running ``wavedp serve``
(httpx), its answer written as the local command writes its own. Imports neither CuPy nor
Numba."""

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
    message, an unreachable server or a 5xx a DeviceError (exit status 1)."""
    # httpx imports its own command line (rich, pygments: 70 ms) where click is installed; an
    # import it guards, so a module set to None here reads as absent
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx  # the serve extra

    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        answer = httpx.post(url.rstrip("/") + "/search", json=request, headers=headers,
                            timeout=TIMEOUT)
    except httpx.HTTPError as exc:
        raise DeviceError(f"the server {url} cannot be reached: {exc}") from None
    if 400 <= answer.status_code < 500:
        try:
            message = answer.json()["error"]
        except (ValueError, KeyError, TypeError):
            message = answer.text.strip() or answer.reason_phrase
        raise InputError(f"the server {url} refused the search: {message}")
    if answer.status_code != 200:
        raise DeviceError(f"the server {url} failed: {answer.status_code} "
                          f"{answer.reason_phrase}")
    return answer.text

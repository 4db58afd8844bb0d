"""``wavedp search QUERIES DB --server URL``: the search asked of a running ``wavedp serve``
(httpx), its answer written as the local command writes its own. Imports neither CuPy nor
Numba."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
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
    headers = {"authorization": f"Bearer {token}"} if token else {}
    with _absent("httpx._main", "trio"):
        import httpx  # the serve extra

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


@contextlib.contextmanager
def _absent(*names: str) -> Iterator[None]:
    """Modules not yet imported read as absent meanwhile (set to None), then as they are.
    httpx imports its own command line (rich, pygments: 70 ms) where click is installed, and
    its transport imports httpcore, which imports trio where it is installed (110 ms) for
    async code under trio: imports both guard, and a request needs neither."""
    absent = [name for name in names if name not in sys.modules]
    sys.modules.update(dict.fromkeys(absent))  # type: ignore[arg-type]
    try:
        yield
    finally:
        for name in absent:
            if sys.modules.get(name, 0) is None:  # a later import finds the real one
                del sys.modules[name]

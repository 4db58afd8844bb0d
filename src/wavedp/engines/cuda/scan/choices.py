"""``auto``'s choice of partitioning, kept per database build, GPU model and query shape in
the user's cache (beside the calibration): ranking the candidates is most of a plan's cost
(about 10 ms for 20 queries against 3,000,000 subjects on a 2-core host), so a later search
of that database plans only the partitioning chosen before. The choice decides the speed,
never the results; a file that cannot be read or written is left alone."""

from __future__ import annotations

import contextlib
import json
import os

import platformdirs

#: the choices kept (the newest)
KEEP = 256


def path() -> str:
    """The choices' file in the user's cache directory."""
    return os.path.join(platformdirs.user_cache_dir("wavedp"), "partition-choices.json")


def _read() -> dict[str, str]:
    try:
        with open(path(), encoding="utf-8") as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}


def lookup(key: str) -> str | None:
    """The partitioning chosen for ``key`` before, if any."""
    return _read().get(key)


def remember(key: str, name: str) -> None:
    """Keep ``name`` as the choice for ``key`` (the file replaced in one rename)."""
    found = _read()
    found.pop(key, None)
    found[key] = name
    kept = dict(list(found.items())[-KEEP:])
    target = path()
    tmp = f"{target}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(kept, fh)
        os.replace(tmp, target)
    with contextlib.suppress(OSError):
        os.unlink(tmp)

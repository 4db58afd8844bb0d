"""A search request, read from its JSON body and checked: the command's options under their
names with underscores. Each fault is a :class:`RequestError` naming the field."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..dbsearch.options import DEFAULT_EVALUE
from ..dbsearch.strands import STRANDS
from ..engines.common import MODES as ENGINE_MODES
from ..stats.significance import DEFAULT_STATS, STATS

FORMATS = ("tsv", "json", "sam")
MODES = tuple(ENGINE_MODES)


class RequestError(ValueError):
    """A request the service refuses: ``status`` (4xx) and one message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class SearchRequest:
    """What one ``POST /search`` asks: the queries (FASTA text, or (id, sequence) records),
    the database's name and the search command's options."""

    queries: str | list[tuple[str, str]]
    database: str | None
    top: int = 10
    evalue: float | None = None
    min_score: int | None = None
    stats: str = DEFAULT_STATS
    mode: str = "local"
    strand: str = "both"
    matrix: str | None = None
    match: int | None = None
    mismatch: int | None = None
    gap_open: int | None = None
    gap_extend: int | None = None
    columns: tuple[str, ...] | None = None
    format: str = "tsv"

    @property
    def cutoff(self) -> float:
        """The E-value cutoff the search applies (the command's default where none)."""
        return DEFAULT_EVALUE if self.evalue is None else self.evalue

    def scoring_key(self) -> tuple:
        return (self.matrix, self.match, self.mismatch, self.gap_open, self.gap_extend)


_FIELDS = {"queries", "database", "top", "evalue", "min_score", "stats", "mode", "strand",
           "matrix", "match", "mismatch", "gap_open", "gap_extend", "columns", "format"}


def parse(body: Any) -> SearchRequest:
    """The request in ``body`` (the decoded JSON), checked field by field."""
    if not isinstance(body, dict):
        raise RequestError("the request must be a JSON object")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise RequestError(f"unknown field {unknown[0]!r}; the fields are "
                           f"{', '.join(sorted(_FIELDS))}")
    if "queries" not in body:
        raise RequestError("queries: missing (FASTA text, or a list of sequences)")
    return SearchRequest(
        queries=_queries(body["queries"]),
        database=_text(body, "database"),
        top=_integer(body, "top", 10, least=0),
        evalue=_number(body, "evalue"),
        min_score=_integer(body, "min_score", None),
        stats=_choice(body, "stats", STATS, DEFAULT_STATS),
        mode=_choice(body, "mode", MODES, "local"),
        strand=_choice(body, "strand", STRANDS, "both"),
        matrix=_text(body, "matrix"),
        match=_integer(body, "match", None),
        mismatch=_integer(body, "mismatch", None),
        gap_open=_integer(body, "gap_open", None),
        gap_extend=_integer(body, "gap_extend", None),
        columns=_columns(body.get("columns")),
        format=_choice(body, "format", FORMATS, "tsv"),
    )


def _queries(value: Any) -> str | list[tuple[str, str]]:
    """FASTA text, or a list of sequences (strings, named query1, query2, ...) or of
    {"id", "sequence"} objects."""
    if isinstance(value, str):
        if not value.strip():
            raise RequestError("queries: empty")
        return value
    if not isinstance(value, list) or not value:
        raise RequestError("queries: FASTA text, or a non-empty list of sequences")
    records = []
    for k, item in enumerate(value, 1):
        if isinstance(item, str):
            records.append((f"query{k}", item))
        elif isinstance(item, dict) and isinstance(item.get("sequence"), str) and \
                isinstance(item.get("id", ""), str) and set(item) <= {"id", "sequence"}:
            rid = item.get("id") or f"query{k}"
            if rid.split() != [rid]:
                raise RequestError(f"queries[{k - 1}].id: one word, got {rid!r}")
            records.append((rid, item["sequence"]))
        else:
            raise RequestError(f"queries[{k - 1}]: a sequence, or an object with 'sequence' "
                               "(and 'id')")
    return records


def _text(body: dict, name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise RequestError(f"{name}: text, got {type(value).__name__}")
    return value


def _integer(body: dict, name: str, default: int | None, least: int | None = None
             ) -> int | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{name}: an integer, got {value!r}")
    if least is not None and value < least:
        raise RequestError(f"{name}: at least {least}, got {value}")
    return value


def _number(body: dict, name: str) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value <= 0:
        raise RequestError(f"{name}: a number above 0, got {value!r}")
    return float(value)


def _choice(body: dict, name: str, choices: tuple[str, ...], default: str) -> str:
    value = body.get(name, default)
    if value not in choices:
        raise RequestError(f"{name}: one of {', '.join(choices)}, got {value!r}")
    return value


def _columns(value: Any) -> tuple[str, ...] | None:
    """BLAST's field names: a list, or text as ``--columns`` takes it."""
    from .. import columns as fields

    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = " ".join(value)
    if not isinstance(value, str):
        raise RequestError("columns: field names, as a list or as text")
    try:
        return fields.parse_columns(value)
    except ValueError as exc:
        raise RequestError(f"columns: {exc}") from None

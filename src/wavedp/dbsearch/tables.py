"""Search hits as tables: a pandas DataFrame, a pyarrow Table or a Parquet file, one row per hit.

The columns are ``query_index`` (the query's index in the search), ``target_index`` (the
hit's database index) and the fields of :mod:`wavedp.columns` with their BLAST meanings
(1-based coordinates, a minus-strand hit on the original query with ``sstart > send``), as
typed values: integers, floats (``pident`` and ``ppos`` unrounded) and text; a value that
does not exist (no traceback, an empty range, no statistics) is missing (null). ``cigar``,
``btop``, ``qseq`` and ``sseq`` of an alignment of no residues are empty texts.

An Alignment does not carry its database index: ``target_index`` is found from the
``database`` given (a :class:`Database` or its list of ids) by the hit's target id; where
the database holds that id more than once, the hit's target text picks the record, and it
stays missing if several records agree (or without ``database``).

pandas and pyarrow are optional (``pip install 'wavedp[tables]'``): each is imported when
first needed, and a missing one is an InputError.
"""

from __future__ import annotations

import importlib
import numbers
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO

from ..alignment import Alignment
from ..columns import FIELDS, FLOAT, INTEGER, NEEDS_SCORING, check, parse_columns, values
from ..db.database import Database
from ..errors import InputError
from ..scoring import Scoring

#: the table's own columns, before the fields
INDEX_COLUMNS = ("query_index", "target_index")
#: the fields a table holds by default: every field but BLAST's accession aliases of the
#: ids (``qaccver``, ``saccver``: the same values as ``qseqid``, ``sseqid``)
TABLE_FIELDS = tuple(name for name in FIELDS if name not in ("qaccver", "saccver"))
#: rows per Parquet row group (write_parquet streams its input in groups this large)
ROW_GROUP = 1 << 16

Results = Iterable[Any]  # list[list[Alignment]] or Iterable[tuple[int, list[Alignment]]]


def optional_module(module: str, what: str) -> Any:
    """Import an optional dependency, or say how to install it (an InputError)."""
    try:
        # imported here: pandas and pyarrow are optional (the tables extra) and slow to import
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"{what} needs {module.split('.')[0]}: "
                         "pip install 'wavedp[tables]'") from None


def check_parquet(what: str = "write_parquet") -> None:
    """An InputError (how to install it) unless pyarrow can write Parquet: checked before
    a search starts."""
    optional_module("pyarrow.parquet", what)


def table_columns(columns: str | Sequence[str] | None = None,
                  scoring: Scoring | None = None) -> tuple[str, ...]:
    """The columns of a table: the index columns, then ``columns`` (names, or text for
    ``parse_columns``; None: TABLE_FIELDS, less ``positive`` and ``ppos`` without
    ``scoring``)."""
    if columns is None:
        names = tuple(n for n in TABLE_FIELDS if scoring is not None or n not in NEEDS_SCORING)
    else:
        names = parse_columns(columns) if isinstance(columns, str) else tuple(columns)
        check(names, scoring, scored=True)
        names = tuple(n for n in dict.fromkeys(names) if n not in INDEX_COLUMNS)
    return INDEX_COLUMNS + names


def kind(column: str) -> str:
    """``int``, ``float`` or ``str``: the type of a table column's values."""
    if column in INDEX_COLUMNS or column in INTEGER:
        return "int"
    return "float" if column in FLOAT else "str"


def _hits(results: Results) -> Iterator[tuple[int | None, Alignment]]:
    """(query index, hit) of each hit: ``results`` is a list of hit lists (the query index
    is the position), or (query index, hits) pairs as ``iter_search`` yields them; a bare
    Alignment has no query index."""
    if results is None or isinstance(results, (str, bytes, Alignment)):
        raise InputError("results must be wavedp.search's list of hit lists or iter_search's "
                         f"(query index, hits) pairs, got {type(results).__name__}")
    for position, item in enumerate(results):
        if isinstance(item, Alignment):
            yield None, item
            continue
        k, hits = position, item
        if isinstance(item, tuple) and len(item) == 2 and \
                isinstance(item[0], numbers.Integral) and not isinstance(item[0], bool):
            k, hits = int(item[0]), item[1]
        if isinstance(hits, (str, bytes)) or not hasattr(hits, "__iter__"):
            raise InputError(f"results item {position} is not a list of hits "
                             f"({type(hits).__name__})")
        for hit in hits:
            if not isinstance(hit, Alignment):
                raise InputError(f"results item {position} holds a {type(hit).__name__}, "
                                 "not an Alignment")
            yield k, hit


class _TargetIndex:
    """A hit's database index from its target id (and text, for an id held twice)."""

    def __init__(self, database: Database | Sequence[str] | None) -> None:
        self.database = database if isinstance(database, Database) else None
        if database is None:
            self.where = None
            return
        if self.database is None and (isinstance(database, (str, bytes))
                                      or not hasattr(database, "__iter__")):
            raise InputError("database must be a wavedp.Database or its list of ids, got "
                             f"{type(database).__name__}")
        ids = database.ids if isinstance(database, Database) else database
        self.where: dict[str, list[int]] | None = {}
        for k, rid in enumerate(ids):
            self.where.setdefault(str(rid), []).append(k)

    def __call__(self, hit: Alignment) -> int | None:
        if self.where is None:
            return None
        found = self.where.get(hit.target_id)
        if not found:
            raise InputError(f"target {hit.target_id!r} is not in the database given")
        if len(found) > 1 and self.database is not None:
            found = [k for k in found if self.database.text(k) == hit.target]
        return found[0] if len(found) == 1 else None


def _rows(results: Results, names: tuple[str, ...], scoring: Scoring | None,
          database: Database | Sequence[str] | None) -> Iterator[list]:
    """Each hit's row of typed values (None where missing) for the columns ``names``."""
    index = _TargetIndex(database)
    fields = names[len(INDEX_COLUMNS):]
    for k, hit in _hits(results):
        yield [k, index(hit), *values(hit, fields, scoring)]


def to_frame(results: Results, columns: str | Sequence[str] | None = None,
             scoring: Scoring | None = None,
             database: Database | Sequence[str] | None = None) -> Any:
    """A pandas DataFrame of the hits, one row each: ``query_index``, ``target_index`` (from
    ``database``) and the fields ``columns`` (default: every field; ``positive`` and ``ppos``
    with ``scoring``). Integers are int64, or pandas' nullable Int64 where a value is
    missing; floats float64 (NaN where missing); texts objects (None where missing)."""
    pandas = optional_module("pandas", "to_frame")
    names = table_columns(columns, scoring)
    data = list(zip(*_rows(results, names, scoring, database), strict=True)) or \
        [()] * len(names)
    frame = {}
    for name, column in zip(names, data, strict=True):
        frame[name] = _series(pandas, name, list(column))
    return pandas.DataFrame(frame, columns=list(names))


def _series(pandas: Any, name: str, column: list) -> Any:
    what = kind(name)
    if what == "int":
        missing = any(v is None for v in column)
        return pandas.Series(column, dtype="Int64" if missing else "int64")
    if what == "float":
        return pandas.Series([float("nan") if v is None else v for v in column],
                             dtype="float64")
    return pandas.Series(column, dtype=object)


def _schema(pyarrow: Any, names: tuple[str, ...]) -> Any:
    types = {"int": pyarrow.int64(), "float": pyarrow.float64(), "str": pyarrow.string()}
    return pyarrow.schema([(name, types[kind(name)]) for name in names])


def _batches(pyarrow: Any, results: Results, names: tuple[str, ...], scoring: Scoring | None,
             database: Database | Sequence[str] | None, size: int) -> Iterator[Any]:
    """The hits as record batches of at most ``size`` rows (missing values null)."""
    schema = _schema(pyarrow, names)
    rows: list[list] = []
    for row in _rows(results, names, scoring, database):
        rows.append(row)
        if len(rows) >= size:
            yield _batch(pyarrow, schema, rows)
            rows = []
    if rows:
        yield _batch(pyarrow, schema, rows)


def _batch(pyarrow: Any, schema: Any, rows: list[list]) -> Any:
    columns = [pyarrow.array(list(column), type=field.type)
               for column, field in zip(zip(*rows, strict=True), schema, strict=True)]
    return pyarrow.RecordBatch.from_arrays(columns, schema=schema)


def to_arrow(results: Results, columns: str | Sequence[str] | None = None,
             scoring: Scoring | None = None,
             database: Database | Sequence[str] | None = None) -> Any:
    """A pyarrow Table of the hits with :func:`to_frame`'s columns: int64, float64 and
    string, null where a value is missing."""
    pyarrow = optional_module("pyarrow", "to_arrow")
    names = table_columns(columns, scoring)
    return pyarrow.Table.from_batches(
        list(_batches(pyarrow, results, names, scoring, database, ROW_GROUP)),
        schema=_schema(pyarrow, names))


def write_parquet(results: Results, path: str | os.PathLike | BinaryIO,
                  columns: str | Sequence[str] | None = None, scoring: Scoring | None = None,
                  database: Database | Sequence[str] | None = None) -> int:
    """Write :func:`to_arrow`'s table to the Parquet file ``path`` (or a binary file
    object), ROW_GROUP rows at a time as ``results`` come (``iter_search`` streams);
    returns the number of rows."""
    pyarrow = optional_module("pyarrow", "write_parquet")
    parquet = optional_module("pyarrow.parquet", "write_parquet")
    names = table_columns(columns, scoring)
    where = os.fspath(path) if isinstance(path, os.PathLike) else path
    count = 0
    with parquet.ParquetWriter(where, _schema(pyarrow, names)) as writer:
        for batch in _batches(pyarrow, results, names, scoring, database, ROW_GROUP):
            writer.write_batch(batch)
            count += batch.num_rows
    return count

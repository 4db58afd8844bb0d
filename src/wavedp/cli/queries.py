"""A search's query file (read once to check it and count, then in batches, then for its
titles) and the ``-outfmt 7`` blocks ``--header`` puts the hits of each query in."""

from __future__ import annotations

import array
import itertools
import json
import os
from collections.abc import Iterator

import numpy as np

from .. import columns as fields
from ..api import Prepared
from ..db.building import guess_alphabet
from ..db.reading import read_header
from ..dbsearch.api import QUERY_BATCH
from ..errors import InputError
from ..scoring import Scoring
from ..seqio import STDIN, iter_records, stdin_copy, text_file, whole_title


class QueryFile:
    """The query file, read whole once to check every record and keep their lengths (nothing
    else), then again QUERY_BATCH records at a time: memory does not grow with the number
    of queries."""

    def __init__(self, path: str, scoring: Scoring) -> None:
        self.path, self.scoring = path, scoring
        self.source = stdin_copy() if path == STDIN else path  # read twice
        lengths = array.array("q")  # 8 bytes a query
        for _, batch in self.batches():
            lengths.extend(c.size for c in batch.codes)
        self.lengths = np.frombuffer(lengths, np.int64)  # a file without records is an error

    def __len__(self) -> int:
        return int(self.lengths.size)

    def id_of(self, k: int) -> str:
        """The id of record ``k`` (the file read again up to its batch)."""
        for start, batch in self.batches():
            if k < start + len(batch.ids):
                return batch.ids[k - start]
        raise IndexError(k)

    def titles(self) -> Iterator[str]:
        """Each record's whole header line (its id and title), in file order."""
        shown = "standard input" if self.path == STDIN else None
        return (whole_title(rid, title)
                for rid, _, title in iter_records(self.source, shown, titles=True))

    def batches(self) -> Iterator[tuple[int, Prepared]]:
        """(the index of its first record, the batch checked and encoded), in file order."""
        records = iter_records(self.source, "standard input" if self.path == STDIN else None)
        start = 0
        while chunk := list(itertools.islice(records, QUERY_BATCH)):
            yield start, Prepared.from_records(chunk, self.scoring, "query", self.path)
            start += len(chunk)



class Blocks:
    """``--header``: query k's lines in their ``-outfmt 7`` block (the query titles read in
    file order as the queries come, so memory does not grow with their number)."""

    def __init__(self, queries: QueryFile, database: str, columns: tuple[str, ...]) -> None:
        self.database, self.columns = database, columns
        self.titles, self.next = queries.titles(), 0

    def __call__(self, k: int, rows: str) -> str:
        while self.next < k:  # queries a resumed run had done
            next(self.titles)
            self.next += 1
        self.next += 1
        return fields.commented(next(self.titles), self.database, self.columns, rows)



def blocks_of(answer: str, queries: str, database: str, columns: tuple[str, ...]) -> str:
    """``--header`` of ``--server``: the server's JSON answer (each query's hits, each with
    its blast6 line) as the command's ``-outfmt 7`` blocks, the titles from ``queries``."""
    with text_file(queries) as path:
        titles = [whole_title(rid, title)
                  for rid, _, title in iter_records(path, "the queries", titles=True)]
    found = json.loads(answer)["queries"]
    return "".join(fields.commented(title, database, columns,
                                    "".join(hit["blast6"] + "\n" for hit in query["hits"]))
                   for title, query in zip(titles, found, strict=True)) + \
        fields.processed(len(titles))


def holds_dna(path: str) -> bool:
    """Whether ``path`` holds DNA: a ``.wdb`` folder's header says so, or a FASTA/FASTQ
    file's first records are DNA (standard input, or anything unreadable here: no; reading
    it later names the fault)."""
    if path == STDIN:
        return False
    try:
        if os.path.isdir(path):
            return read_header(path)["alphabet"] == "dna"
        texts = [text for _, text in itertools.islice(iter_records(path), 64)]
    except (InputError, OSError):
        return False
    return bool(texts) and guess_alphabet(texts) == "dna"

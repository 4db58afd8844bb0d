"""``wavedp.cli.progress.Progress``: plain lines and a summary off a terminal, rich's bar on one
(driven by a fake clock: nothing sleeps)."""

from __future__ import annotations

import io

import pytest
from helpers import fresh

from wavedp.cli.progress import Progress, clock_time, duration, rate, si


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def search_progress(clock: FakeClock, out: io.StringIO, **options) -> Progress:
    # 20 queries of 100 residues against 1,000 residues: 2M cells, 20k residues scanned
    return Progress("search", 2_000_000, queries=20, scans=20_000, stream=out, clock=clock,
                    **options)


def test_lines_at_most_every_interval_then_a_summary():
    clock, out = FakeClock(), io.StringIO()
    with search_progress(clock, out, interval=30.0) as progress:
        for second in range(1, 101):  # a query every 5 s
            clock.now += 1
            progress.advance(20_000)
            if second % 5 == 0:
                progress.query_done()
    lines = out.getvalue().splitlines()
    assert len(lines) == 4  # at 30, 60 and 90 s, then the summary
    assert lines[0] == ("wavedp: search: 5/20 queries, 6.0k residues scanned, 0.0 GCUPS, "
                        "00:00:30 elapsed, about 00:01:10 left")  # 30% done in 30 s
    assert lines[2].endswith("00:01:30 elapsed, about 00:00:10 left")
    assert lines[3] == "wavedp: search: 20 queries, 20.0k residues, 0.0 GCUPS, 00:01:40"


@pytest.mark.parametrize("pairs", [40, 0])
def test_cells_not_known(pairs):
    """Pairs streamed to a file are not counted first: the share done is that of the pairs
    where their number is known (SAM's header counts them), else only what is done."""
    clock, out = FakeClock(), io.StringIO()
    with Progress("align", None, queries=pairs, unit="pairs", stream=out, clock=clock,
                  interval=30.0) as progress:
        for _ in range(40):
            clock.now += 1
            progress.advance(1_000, done=1)
    lines = out.getvalue().splitlines()
    if pairs:
        assert lines[0] == ("wavedp: align: 30/40 pairs, 30.0k cells, 0.0 GCUPS, 00:00:30 "
                            "elapsed, about 00:00:10 left")
    else:
        assert lines[0] == "wavedp: align: 30 pairs, 30.0k cells, 0.0 GCUPS, 00:00:30 elapsed"
    assert lines[-1] == "wavedp: align: 40 pairs, 40.0k cells, 0.0 GCUPS, 40.0 s"


def test_a_line_needs_a_report_and_the_interval():
    clock, out = FakeClock(), io.StringIO()
    with search_progress(clock, out, interval=10.0) as progress:
        clock.now += 9.9
        progress.advance(1)
        assert out.getvalue() == ""
        clock.now += 25  # no report comes for 25 s: one line at the next report
        progress.query_done()
        progress.query_done()
        assert len(out.getvalue().splitlines()) == 1


def test_summary_only_for_runs_over_quiet_seconds():
    clock, out = FakeClock(), io.StringIO()
    with search_progress(clock, out) as progress:
        clock.now += 0.5
        progress.advance(2_000_000)
    assert out.getvalue() == ""
    with search_progress(clock, out) as progress:
        clock.now += 2.5
        progress.advance(2_000_000)
        for _ in range(20):
            progress.query_done()
    assert out.getvalue() == "wavedp: search: 20 queries, 20.0k residues, 0.0 GCUPS, 2.5 s\n"


def test_no_summary_after_an_exception():
    clock, out = FakeClock(), io.StringIO()
    with pytest.raises(KeyboardInterrupt), search_progress(clock, out) as progress:
        clock.now += 5
        progress.advance(10)
        raise KeyboardInterrupt
    assert out.getvalue() == ""


def test_cells_when_no_residues_are_scanned():
    clock, out = FakeClock(), io.StringIO()
    with Progress("align", 4_000_000_000, 12, stream=out, clock=clock, unit="pairs",
                  interval=1.0) as progress:
        clock.now += 2
        progress.advance(1_000_000_000, done=3)
        clock.now += 2
        progress.advance(3_000_000_000, done=9)
    assert out.getvalue().splitlines() == [
        "wavedp: align: 3/12 pairs, 25% of 4.0G cells, 0.5 GCUPS, 00:00:02 elapsed, about "
        "00:00:06 left",
        "wavedp: align: 12/12 pairs, 100% of 4.0G cells, 1.0 GCUPS, 00:00:04 elapsed",
        "wavedp: align: 12 pairs, 4.0G cells, 1.0 GCUPS, 4.0 s",
    ]


def test_terminal_shows_rich_bar_and_no_plain_lines():
    pytest.importorskip("rich")
    clock, out = FakeClock(), io.StringIO()
    with search_progress(clock, out, terminal=True, interval=0.0) as progress:
        for _ in range(20):
            clock.now += 10
            progress.advance(100_000)
            progress.query_done()
    text = out.getvalue()
    assert "search" in text  # rich drew the bar (and erased it: transient)
    assert "wavedp: search:" not in text


def test_terminal_without_bar_is_silent():
    clock, out = FakeClock(), io.StringIO()
    with search_progress(clock, out, terminal=True, bar=False) as progress:
        clock.now += 100
        progress.advance(2_000_000)
    assert out.getvalue() == ""


def test_a_closed_or_plain_stream_is_no_terminal():
    assert Progress("x", 1, stream=io.StringIO()).terminal is False
    closed = io.StringIO()
    closed.close()
    assert Progress("x", 1, stream=closed).terminal is False


def test_formats():
    assert si(17_845_600) == "17.8M" and si(512) == "512"
    assert clock_time(3725.9) == "01:02:05"
    assert duration(2.34) == "2.3 s" and duration(70) == "00:01:10"
    assert rate(9.412e12, 1.0) == "9,412" and rate(4.2e10, 1.0) == "42.0"


def test_rich_is_not_imported_by_the_module():
    code = "import sys, wavedp.cli.progress; print('rich' in sys.modules)"
    done = fresh(["-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_counts_are_singular_for_one():
    """"1 query", "1 sequence", never "1 queries" (makedb's line and the progress lines)."""
    from wavedp.cli.progress import counted

    assert [counted(n, "queries") for n in (0, 1, 2, 1500)] == [
        "0 queries", "1 query", "2 queries", "1,500 queries"]
    assert (counted(1, "sequences"), counted(1, "residues"), counted(1, "pairs")) == (
        "1 sequence", "1 residue", "1 pair")


def test_a_line_after_the_scan_tells_the_time_left_from_the_queries():
    """Once every cell is scanned, queries still aligning: the time left comes from the
    queries done (the scan's share is whole)."""
    clock, out = FakeClock(), io.StringIO()
    with search_progress(clock, out, interval=30.0) as progress:
        clock.now += 20
        progress.advance(2_000_000)  # the whole scan in 20 s
        for _ in range(10):
            clock.now += 1
            progress.query_done()  # 10 of 20 at 30 s
    assert out.getvalue().splitlines()[0] == (
        "wavedp: search: 10/20 queries, 20.0k residues scanned, 0.0 GCUPS, 00:00:30 elapsed, "
        "about 00:00:30 left")

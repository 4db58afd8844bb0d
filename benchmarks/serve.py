"""The search service against the command: one query over HTTP on a warm server (p50 and p99
of --requests: the first query again and again, then the queries in turn), the thin client
``wavedp search --server`` and the local command from fresh processes, and --clients
concurrent clients sending single queries for --seconds against a ``Searcher`` given the
same queries in batches of --clients (the queries in turn, as the clients send them),
every answer checked against the local command's lines.

    python3 benchmarks/serve.py QUERIES.fa DB.wdb [--device gpu] [--clients 64] [--seconds 60]
    python3 benchmarks/serve.py QUERIES.fa DB.wdb --cudasw4 DIR --cudasw4-db PREFIX

The server is ``wavedp serve`` in a process of its own (uvicorn, a free port of the loopback);
the clients are httpx on threads of this process.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx
import numpy as np

WAVEDP = [shutil.which("wavedp")] if shutil.which("wavedp") else [sys.executable, "-m",
                                                                   "wavedp.cli"]


def records(path: str) -> list[str]:
    """The FASTA file's records as texts, one each."""
    text = open(path).read()
    return [">" + part for part in text.split(">")[1:]]


def walled(argv: list[str], out: str | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE if out is None else open(out, "w"),
                          stderr=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}")
    return time.perf_counter() - start


def serve(database: str, device: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([*WAVEDP, "serve", database, "--port", str(port), "--device",
                               device, "--max-queries", "100000"],
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return server, url
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def percentiles(seconds: list[float]) -> str:
    a = np.array(seconds) * 1e3
    return f"p50 {np.percentile(a, 50):.1f} ms, p99 {np.percentile(a, 99):.1f} ms"


def clients(url: str, queries: list[str], want: dict, args) -> float:
    """--clients threads sending single queries for --seconds (each answer checked): the
    queries a second, printed with the latencies and the queries a search took together."""
    def batches() -> tuple[float, float, float]:
        text = httpx.get(url + "/metrics", timeout=60).text
        sums = {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
                if line.startswith(("wavedp_batch_queries_", "wavedp_search_seconds_sum"))}
        return tuple(sums.get(name, 0.0) for name in (
            "wavedp_batch_queries_sum", "wavedp_batch_queries_count",
            "wavedp_search_seconds_sum"))

    latencies: list[float] = []
    answered, wrong = [0], [0]
    stop = time.perf_counter() + args.seconds
    lock = threading.Lock()

    def hammer(k: int) -> None:
        local = httpx.Client(timeout=600)
        j = k
        while time.perf_counter() < stop:
            text = queries[j % len(queries)]
            start = time.perf_counter()
            answer = local.post(url + "/search", json={"queries": text})
            with lock:
                latencies.append(time.perf_counter() - start)
                answered[0] += 1
                wrong[0] += answer.status_code != 200 or answer.text != want[text]
            j += args.clients

    before = batches()
    started = time.perf_counter()
    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    after = batches()
    rate = answered[0] / wall
    together = (after[0] - before[0]) / max(after[1] - before[1], 1)
    busy = (after[2] - before[2]) / wall
    print(f"{args.clients} clients for {wall:.1f} s: {answered[0]} queries, {rate:.1f} "
          f"queries/s, {percentiles(latencies)}, {wrong[0]} answers differing; queries a "
          f"search took together: {together:.1f} on average; searching {busy:.0%} of the "
          "time", flush=True)
    return rate


def commands(queries: list[str], name: str, url: str, want: dict, work: str, args) -> None:
    """Three turns of the thin client, the local command and CUDASW++4.0's where given,
    each a fresh process with the first query."""
    one = os.path.join(work, "one.fa")
    for turn in range(3):
        remote = walled([*WAVEDP, "search", one, name, "--server", url],
                        os.path.join(work, "remote.tsv"))
        local = walled([*WAVEDP, "search", one, args.database, "--device", args.device],
                       os.path.join(work, "local.tsv"))
        same = open(os.path.join(work, "remote.tsv")).read() == want[queries[0]]
        line = (f"turn {turn + 1}: search --server {remote:.3f} s (same lines: {same}), "
                f"local command {local:.3f} s")
        if args.cudasw4:
            anchor = walled([os.path.join(args.cudasw4, "align"), "--query", one, "--db",
                             args.cudasw4_db, "--top", "10", "--mat", "blosum62",
                             "--of", os.devnull])
            line += f", CUDASW++4.0 align {anchor:.3f} s (--server {anchor / remote:.2f}x)"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("queries")
    parser.add_argument("database")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cudasw4", default=None, metavar="DIR",
                        help="CUDASW++4.0's built programs: its one-query command too")
    parser.add_argument("--cudasw4-db", default=None, metavar="PREFIX",
                        help="the database as CUDASW++4.0's makedb wrote it")
    args = parser.parse_args()
    queries = records(args.queries)
    name = os.path.basename(os.path.normpath(args.database)).removesuffix(".wdb")
    work = tempfile.mkdtemp(prefix="wavedp-serve-")
    one = os.path.join(work, "one.fa")
    open(one, "w").write(queries[0])
    # the local command's lines of each query, the reference of every answer
    want = {}
    for k, text in enumerate(queries):
        path = os.path.join(work, f"q{k}.fa")
        open(path, "w").write(text)
        walled([*WAVEDP, "search", path, args.database, "--device", args.device],
               os.path.join(work, f"q{k}.tsv"))
        want[text] = open(os.path.join(work, f"q{k}.tsv")).read()
    server, url = serve(args.database, args.device)
    try:
        client = httpx.Client(timeout=600)
        client.post(url + "/search", json={"queries": queries[0]})  # warm: kernels, plans
        for label, texts in (("the first query", queries[:1]), ("the queries in turn",
                                                                queries)):
            times = []
            for j in range(args.requests):
                text = texts[j % len(texts)]
                start = time.perf_counter()
                answer = client.post(url + "/search", json={"queries": text})
                times.append(time.perf_counter() - start)
                assert answer.status_code == 200 and answer.text == want[text], \
                    answer.text[:200]
            print(f"one query over HTTP, warm server, {label} ({args.requests} requests): "
                  f"{percentiles(times)}", flush=True)
        commands(queries, name, url, want, work, args)
        rate = clients(url, queries, want, args)
    finally:
        server.terminate()
        server.wait(60)
    import wavedp
    from wavedp.dbsearch.api import Searcher

    searcher = Searcher(args.database, wavedp.Scoring(), device=args.device)
    # batches of --clients queries taken in turn, as the clients send them (the queries
    # differ 38-fold in length: each batch starting where the last one stopped)
    distinct = len(queries) // math.gcd(args.clients, len(queries))  # batches till they repeat
    rounds = distinct if distinct <= 10 else 1  # whole rounds where they are few

    def batch(b: int) -> str:
        path = os.path.join(work, f"batch{b % distinct}.fa")
        if not os.path.exists(path):
            open(path, "w").write("".join(queries[(b * args.clients + k) % len(queries)]
                                          for k in range(args.clients)))
        return path

    searcher.search(batch(0))  # warm
    start, done = time.perf_counter(), 0
    while time.perf_counter() - start < min(args.seconds, 20) or done % rounds:
        searcher.search(batch(done))
        done += 1
    count = done * args.clients
    direct = count / (time.perf_counter() - start)
    print(f"Searcher, batches of {args.clients}: {direct:.1f} queries/s; the service "
          f"{rate / direct:.2f}x of it", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""``wavedp serve``: the search service answers as the search command prints (tsv, SAM),
its JSON carries the same hits, a bad request gets a 4xx and one message, and a token
guards it (Starlette's test client, no socket)."""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from helpers import fresh_env

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from wavedp.cli import cli  # noqa: E402
from wavedp.db.database import Database  # noqa: E402
from wavedp.serve import Service, make_app  # noqa: E402
from wavedp.serve.service import Limits  # noqa: E402

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _protein(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(AMINO) for _ in range(n))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A protein and a DNA database, queries planted in them, and a client of the service."""
    rng = random.Random(4)
    folder = tmp_path_factory.mktemp("serve")
    queries = [(f"q{k}", _protein(rng, 60 + 7 * k)) for k in range(4)]
    subjects = [(f"s{k}", _protein(rng, 30) + (queries[k % 4][1][5:50] if k < 8 else "")
                 + _protein(rng, 40)) for k in range(30)]
    (folder / "q.fa").write_text("".join(f">{i} some words\n{s}\n" for i, s in queries))
    (folder / "db.fa").write_text("".join(f">{i}\n{s}\n" for i, s in subjects))
    Database.build(folder / "db.fa", folder / "prot.wdb", progress=False)
    dna = "".join(rng.choice("ACGT") for _ in range(400))
    (folder / "dq.fa").write_text(f">d1\n{dna[100:180]}\n")
    (folder / "dna.fa").write_text(f">chr\n{dna}\n>other\n{dna[::-1]}\n")
    Database.build(folder / "dna.fa", folder / "dna.wdb", alphabet="dna", progress=False)
    service = Service({"prot": str(folder / "prot.wdb"), "dna": str(folder / "dna.wdb")},
                      device="cpu", limits=Limits(queries=50, residues=5_000, body=1 << 16))
    return folder, TestClient(make_app(service))


def _command(*args) -> str:
    got = CliRunner().invoke(cli, [str(a) for a in args])
    assert got.exit_code == 0, got.output
    return got.stdout


@pytest.mark.parametrize("options, flags", [
    ({}, []),
    ({"top": 3, "evalue": 1.0, "stats": "blast"}, ["--top", "3", "--evalue", "1.0",
                                                   "--stats", "blast"]),
    ({"gap_open": 10, "gap_extend": 2, "columns": ["qseqid", "sseqid", "score", "qcovhsp"]},
     ["--gap-open", "10", "--gap-extend", "2", "--columns", "qseqid sseqid score qcovhsp"]),
])
def test_tsv_is_what_the_command_prints(served, options, flags):
    folder, client = served
    text = (folder / "q.fa").read_text()
    answer = client.post("/search", json={"queries": text, "database": "prot", **options})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/tab-separated-values")
    want = _command("search", folder / "q.fa", folder / "prot.wdb", "--device", "cpu", *flags)
    assert answer.text == want and want.count("\n") >= 4


def test_a_dna_database_and_sam(served):
    folder, client = served
    answer = client.post("/search", json={"queries": (folder / "dq.fa").read_text(),
                                          "database": "dna", "format": "sam"})
    assert answer.status_code == 200, answer.text
    want = _command("search", folder / "dq.fa", folder / "dna.wdb", "--device", "cpu",
                    "--format", "sam")
    strip = [line for line in want.splitlines() if not line.startswith("@PG")]
    assert [line for line in answer.text.splitlines() if not line.startswith("@PG")] == strip


def test_json_carries_the_same_hits(served):
    folder, client = served
    answer = client.post("/search", json={
        "queries": [{"id": "a", "sequence": (folder / "q.fa").read_text().split("\n")[1]},
                    (folder / "q.fa").read_text().split("\n")[3]],
        "database": "prot", "format": "json", "top": 2})
    assert answer.status_code == 200, answer.text
    got = answer.json()
    assert [q["id"] for q in got["queries"]] == ["a", "query2"]
    assert got["queries"][0]["hits"][0]["target_id"] == "s0"
    assert all({"score", "evalue", "cigar"} <= set(h) for q in got["queries"]
               for h in q["hits"])


def test_health_databases_openapi(served):
    _, client = served
    assert client.get("/health").json()["status"] == "ok"
    assert {d["name"]: d["alphabet"] for d in client.get("/databases").json()["databases"]} \
        == {"prot": "protein", "dna": "dna"}
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.") and "/search" in spec["paths"]


@pytest.mark.parametrize("body, status, message", [
    ("not json", 400, "not JSON"),
    ([1, 2], 400, "a JSON object"),
    ({"database": "prot"}, 400, "queries: missing"),
    ({"queries": ">a\nMKV\n", "database": "nope"}, 404, "no database named 'nope'"),
    ({"queries": ">a\nMKV\n"}, 400, "name one of prot, dna"),
    ({"queries": ">a\nMKV\n", "database": "prot", "top": -1}, 400, "top: at least 0"),
    ({"queries": ">a\nMKV\n", "database": "prot", "top": "5"}, 400, "top: an integer"),
    ({"queries": ">a\nMKV\n", "database": "prot", "evalue": 0}, 400, "evalue: a number above 0"),
    ({"queries": ">a\nMKV\n", "database": "prot", "format": "xml"}, 400, "format: one of"),
    ({"queries": ">a\nMKV\n", "database": "prot", "colour": 1}, 400, "unknown field"),
    ({"queries": ">a\nMK1V\n", "database": "prot"}, 400, "invalid character"),
    ({"queries": "MKV no header", "database": "prot"}, 400, "queries:"),
    ({"queries": ">a\nMKV\n", "database": "prot", "matrix": "NOPE62"}, 400, "NOPE62"),
    ({"queries": ">a\nMKV\n", "database": "prot", "columns": "qseqid nope"}, 400, "nope"),
    ({"queries": ["M" * 10] * 51, "database": "prot"}, 413, "at most 50"),
    ({"queries": ["M" * 3000] * 2, "database": "prot"}, 413, "residues"),
    ({"queries": "x" * 70_000, "database": "prot"}, 413, "request body is over"),
])
def test_a_bad_request_is_a_4xx_with_one_message(served, body, status, message):
    _, client = served
    payload = body if isinstance(body, str) else json.dumps(body)
    answer = client.post("/search", content=payload,
                         headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert message in error and "\n" not in error and "Traceback" not in error


def test_a_token_guards_every_route_but_health(served, tmp_path):
    folder, _ = served
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    client = TestClient(make_app(service, token="s3cret"))
    assert client.get("/health").status_code == 200
    assert client.get("/databases").status_code == 401
    assert client.post("/search", json={"queries": ">a\nMKV\n"}).status_code == 401
    good = {"authorization": "Bearer s3cret"}
    assert client.get("/databases", headers=good).status_code == 200
    assert client.post("/search", json={"queries": ">a\nMKVLA\n"}, headers=good
                       ).status_code == 200


def test_the_command_listens_on_loopback_unless_given_a_token(served):
    folder, _ = served
    got = subprocess.run([sys.executable, "-m", "wavedp.cli", "serve",
                          str(folder / "prot.wdb"), "--host", "0.0.0.0"],
                         capture_output=True, text=True, env=fresh_env(), timeout=60)
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr.strip().splitlines() == [
        "wavedp: error: --host 0.0.0.0 serves other machines: give --token (or set "
        "WAVEDP_TOKEN), or listen on 127.0.0.1"]


@contextlib.contextmanager
def _listening(service: Service, token: str | None = None) -> Iterator[str]:
    """``service`` on a real socket (uvicorn on a thread, a free port of the loopback): its
    URL."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(service, token), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def listening(served):
    """The service with the token ``tk``, listening."""
    folder, _ = served
    service = Service({"prot": str(folder / "prot.wdb"), "dna": str(folder / "dna.wdb")},
                      device="cpu")
    with _listening(service, token="tk") as url:
        yield folder, url


@pytest.mark.parametrize("flags", [
    [], ["--top", "2", "--header"], ["--format", "sam"],
    ["--columns", "qseqid sseqid evalue bitscore", "--stats", "blast"]])
def test_search_server_prints_what_the_command_prints(listening, flags, tmp_path):
    folder, url = listening
    local = _command("search", folder / "q.fa", folder / "prot.wdb", "--device", "cpu",
                     *flags)  # --header's '# Database:' names DB as given: here, the name
    local = local.replace(f"# Database: {folder / 'prot.wdb'}\n", "# Database: prot\n")
    remote = CliRunner().invoke(cli, ["search", str(folder / "q.fa"), "prot", "--server",
                                      url, "--token", "tk", *flags])
    assert remote.exit_code == 0, remote.output

    def body(text: str) -> list[str]:  # SAM's @PG names each command line itself
        return [line for line in text.splitlines() if not line.startswith("@PG")]

    assert body(remote.stdout) == body(local) and len(body(local)) >= 4
    if "sam" in flags:
        pg = [line for line in remote.stdout.splitlines() if line.startswith("@PG")]
        assert len(pg) == 1 and "CL:wavedp search" in pg[0] and "--server" in pg[0]
    else:
        assert remote.stdout == local
    out = tmp_path / "hits.txt"
    again = CliRunner().invoke(cli, ["search", str(folder / "q.fa"), "prot", "--server", url,
                                     "-o", str(out), *flags], env={"WAVEDP_TOKEN": "tk"})
    assert again.exit_code == 0 and body(out.read_text()) == body(local)


@pytest.mark.parametrize("args, status, message", [
    (["nope", "--token", "tk"], 2, "refused the search: database: no database named 'nope'"),
    (["prot"], 2, "refused the search: a bearer token is needed"),
    (["prot", "--token", "tk", "--mask"], 2, "--server searches with the blast6 or sam"),
    (["prot", "--token", "tk", "--format", "json"], 2, "not --format json"),
])
def test_search_server_faults_are_one_line(listening, args, status, message):
    folder, url = listening
    got = CliRunner().invoke(cli, ["search", str(folder / "q.fa"), *args, "--server", url],
                             env={"WAVEDP_TOKEN": ""})
    assert got.exit_code == status and got.stdout == ""
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], got.stderr


def _described(param) -> tuple:
    """What a command's parameter takes: its flags, default, type and bounds or choices."""
    kind = param.type
    return (tuple(param.opts), param.default, type(kind).__name__,
            tuple(getattr(kind, "choices", ()) or ()), getattr(kind, "min", None),
            getattr(kind, "max", None), getattr(param, "is_flag", False), param.nargs)


def test_thin_client_takes_the_full_commands_options():
    """Every option of the thin client is the full search command's: same flags, default,
    type and choices (a --server command line reads the same either way)."""
    from wavedp.cli import remote
    from wavedp.cli.search import search_command

    full = {p.name: p for p in search_command.params}
    for param in remote.search.params:
        assert param.name in full, param.name
        assert _described(param) == _described(full[param.name]), param.name
    taken = {opt for p in remote.search.params for opt in p.opts if opt.startswith("-")}
    assert taken == remote.TAKEN


def test_thin_client_starts_without_numpy(tmp_path):
    """``search --server`` with options the server takes imports neither NumPy nor the
    search's modules, nor the ASGI stack or httpx; another option goes to the full command."""
    (tmp_path / "q.fa").write_text(">q\nMKV\n")
    code = ("import sys; from wavedp.cli import cli\n"
            "try:\n    cli.main(sys.argv[1:], standalone_mode=False)\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n"
            "print(sorted(m for m in ('numpy', 'numba', 'cupy', 'starlette', 'rich', 'trio', "
            "'httpx', 'wavedp.dbsearch.api') if m in sys.modules))\n")
    base = [sys.executable, "-c", code, "search", str(tmp_path / "q.fa"), "db", "--server",
            "http://127.0.0.1:9"]
    thin = subprocess.run(base + ["--top", "3"], env=fresh_env(), capture_output=True,
                          text=True, timeout=120)
    assert thin.stdout.split("\n")[:2] == ["DeviceError", "[]"], thin.stdout + thin.stderr
    full = subprocess.run(base + ["--mask"], env=fresh_env(), capture_output=True, text=True,
                          timeout=120)
    assert full.stdout.startswith("InputError") and "numpy" in full.stdout


def test_search_server_unreachable_is_status_1(served):
    folder, _ = served
    got = CliRunner().invoke(cli, ["search", str(folder / "q.fa"), "prot", "--server",
                                   "http://127.0.0.1:9"])
    assert got.exit_code == 1 and got.stdout == ""
    assert "cannot be reached" in got.stderr and len(got.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:9", "http://127.0.0.1:port", "127.0.0.1"])
def test_search_server_address_that_is_not_http_is_status_2(served, url):
    folder, _ = served
    got = CliRunner().invoke(cli, ["search", str(folder / "q.fa"), "prot", "--server", url])
    assert got.exit_code == 2 and got.stdout == ""
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "--server takes an http:// or https:// address" in lines[0]


@pytest.mark.parametrize("status, body, kind, message", [
    (500, b"boom", "DeviceError", "failed: 500 Internal Server Error"),
    (413, b'{"error": "too many queries"}', "InputError", "refused the search: too many queries"),
    (400, b"not json", "InputError", "refused the search: not json"),
    (200, b"q\ts\n", None, "q\ts\n"),
])
def test_the_clients_answer_for_each_status(status, body, kind, message):
    """The thin client's request, and what it makes of each status: the path and JSON body
    it sends, a 4xx's message (JSON or text), a 5xx."""
    import http.server
    import threading

    from wavedp.errors import DeviceError, InputError
    from wavedp.serve import client

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            length = int(self.headers["content-length"])
            seen.append((self.path, json.loads(self.rfile.read(length)),
                         self.headers.get("authorization")))
            self.send_response(status)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        try:
            if kind is None:
                assert client.search(url, {"queries": ">q\nMK\n"}, "tk") == message
            else:
                with pytest.raises({"DeviceError": DeviceError, "InputError": InputError}[kind],
                                   match=message):
                    client.search(url, {"queries": ">q\nMK\n"}, "tk")
        finally:
            httpd.shutdown()
    assert seen == [("/search", {"queries": ">q\nMK\n"}, "Bearer tk")]


def _lone(folder, text: str, **options) -> str:
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    return TestClient(make_app(service)).post("/search", json={"queries": text, **options}).text


def test_a_full_queue_is_429_with_retry_after(served, monkeypatch):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    folder, _ = served
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    release, began = threading.Event(), threading.Event()
    run = service.run

    def slow(jobs):
        began.set()
        release.wait(30)
        run(jobs)

    monkeypatch.setattr(service, "run", slow)
    client = TestClient(make_app(service, queue=1))
    body = {"queries": ">a\nMKVLAAGIVALLLAAG\n"}
    with ThreadPoolExecutor(2) as pool:
        try:
            first = pool.submit(client.post, "/search", json=body)  # being searched
            assert began.wait(30)
            second = pool.submit(client.post, "/search", json=body)  # queued
            _metric(client, "wavedp_queue_length 1.0")
            third = client.post("/search", json=body)
            assert third.status_code == 429 and third.headers["retry-after"] == "1"
            assert "searches are waiting" in third.json()["error"]
        finally:
            release.set()
        assert first.result().status_code == 200 and second.result().status_code == 200
    metrics = _metric(client, "wavedp_search_seconds_count 2.0")  # after the answers
    assert 'wavedp_requests_total{status="200"} 2.0' in metrics
    assert 'wavedp_requests_total{status="429"} 1.0' in metrics
    assert "wavedp_request_seconds_bucket" in metrics
    scanned = [line.split()[1] for line in metrics.splitlines()
               if line.startswith("wavedp_residues_scanned_total ")]
    assert scanned and float(scanned[0]) == 2 * len(service.databases["prot"].residues)


def test_requests_queued_behind_a_search_are_the_next_search_each_as_alone(served,
                                                                            monkeypatch):
    """The requests queued while a search runs are the next search, all of them of its key
    (each answer the one its request gets alone); a request of another key waits its turn."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    folder, _ = served
    records = (folder / "q.fa").read_text().split(">")[1:]
    texts = [">" + records[k % len(records)] for k in range(8)]
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    release, began, sizes = threading.Event(), threading.Event(), []
    run = service.run

    def slow(jobs):
        sizes.append(len(jobs))
        began.set()
        release.wait(30)
        run(jobs)

    monkeypatch.setattr(service, "run", slow)
    client = TestClient(make_app(service))
    with ThreadPoolExecutor(9) as pool:
        try:
            first = pool.submit(client.post, "/search", json={"queries": texts[0]})
            assert began.wait(30)
            rest = [pool.submit(client.post, "/search", json={"queries": t})
                    for t in texts[1:4]]
            other = pool.submit(client.post, "/search", json={"queries": texts[0], "top": 1})
            rest += [pool.submit(client.post, "/search", json={"queries": t})
                     for t in texts[4:]]
            _metric(client, "wavedp_queue_length 8.0")
        finally:
            release.set()
        answers = [first.result(), *(r.result() for r in rest)]
        assert other.result().text == _lone(folder, texts[0], top=1)
    assert sizes[0] == 1 and sorted(sizes[1:]) == [1, 7]  # the other key first or last
    assert [a.text for a in answers] == [_lone(folder, t) for t in texts]


def _metric(client, line: str, seconds: float = 30.0) -> str:
    """The /metrics text once it holds ``line`` (an AssertionError after ``seconds``)."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        text = client.get("/metrics").text
        if line in text:
            return text
        assert time.monotonic() < deadline, f"/metrics never showed {line!r}"
        time.sleep(0.01)


def test_requests_held_for_a_later_search_count_toward_the_bound(served, monkeypatch):
    """Requests of other keys, taken from the queue and held for later searches, still wait:
    beyond ``queue`` of them a request is refused with 429, however the keys mix."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    folder, _ = served
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    permits, started = threading.Semaphore(0), []
    run = service.run

    def slow(jobs):
        started.append(len(jobs))
        permits.acquire(timeout=30)
        run(jobs)

    monkeypatch.setattr(service, "run", slow)
    client = TestClient(make_app(service, queue=2))

    def ask(top: int):
        return client.post("/search", json={"queries": ">a\nMKVLAAGIVALLLAAG\n", "top": top})

    with ThreadPoolExecutor(4) as pool:
        try:
            a = pool.submit(ask, 1)  # searched
            _until(lambda: len(started) == 1)
            b, c = pool.submit(ask, 2), pool.submit(ask, 3)  # two keys waiting
            _metric(client, "wavedp_queue_length 2.0")
            assert ask(4).status_code == 429
            permits.release()  # a answered; b searched, c held for later
            _until(lambda: len(started) == 2)
            e = pool.submit(ask, 5)
            _metric(client, "wavedp_queue_length 2.0")
            assert ask(6).status_code == 429
        finally:
            for _ in range(4):
                permits.release()
        assert [f.result().status_code for f in (a, b, c, e)] == [200] * 4


def _until(done, seconds: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_search_that_fails_answers_every_request_of_its_batch(served, monkeypatch):
    """A failure outside the search proper (here: before any answer is set) still answers
    each waiting request, a 500 without a traceback, and the service goes on."""
    folder, _ = served
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    run, calls = service.run, []

    def failing(jobs):
        calls.append(len(jobs))
        if len(calls) == 1:
            raise RuntimeError("the device fell over")
        run(jobs)

    monkeypatch.setattr(service, "run", failing)
    from concurrent.futures import ThreadPoolExecutor

    client = TestClient(make_app(service), raise_server_exceptions=False)
    body = {"queries": ">a\nMKVLAAGIVALLLAAG\n"}
    pool = ThreadPoolExecutor(1)  # not waited for: a request left hanging fails the test
    broken = pool.submit(client.post, "/search", json=body).result(timeout=30)
    pool.shutdown(wait=False)
    assert broken.status_code == 500 and "Traceback" not in broken.text
    assert client.post("/search", json=body).text == _lone(folder, body["queries"])


def test_a_request_whose_client_left_is_not_searched(served, monkeypatch):
    folder, _ = served
    service = Service({"prot": str(folder / "prot.wdb")}, device="cpu")
    from wavedp.serve.requests import parse

    kept, left = (service.prepare(parse({"queries": f">{n}\nMKVLAAGIVALLLAAG\n"}))
                  for n in ("kept", "left"))
    left.future.cancel()
    searched: list[int] = []
    monkeypatch.setattr(service, "_searcher", lambda *a: type("S", (), {
        "search": lambda self, q, **k: (searched.append(len(q.codes)), [[]] * len(q.codes))[1]
    })())
    service.run([kept, left])
    assert searched == [1] and kept.future.result()[0] == "" and left.future.cancelled()


@pytest.fixture(scope="module")
def page_server(tmp_path_factory):
    """The examples' database served on a real socket without a token."""
    from pathlib import Path

    folder = tmp_path_factory.mktemp("page")
    examples = Path(__file__).resolve().parent.parent / "examples"
    Database.build(examples / "target.fa", folder / "examples.wdb", progress=False)
    service = Service({"examples": str(folder / "examples.wdb")}, device="cpu")
    with _listening(service) as url:
        yield examples, folder, url


def test_the_page_is_served(page_server):
    _, _, url = page_server
    import httpx

    page = httpx.get(url + "/")
    assert page.status_code == 200 and "<form id=\"search\">" in page.text
    for name in ("search.js", "style.css"):
        assert httpx.get(f"{url}/page/{name}").status_code == 200


@pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("chromedriver")),
                    reason="needs Debian's chromium and chromium-driver")
def test_a_browser_searches_the_example_and_sees_the_commands_hits(page_server):
    """A real browser (headless Chromium through selenium) pastes the example queries,
    submits the form and finds the command's hits in the page's table."""
    selenium = pytest.importorskip("selenium")
    from selenium.webdriver import Chrome, ChromeOptions
    from selenium.webdriver.chrome.service import Service as Driver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as until
    from selenium.webdriver.support.ui import WebDriverWait

    del selenium
    examples, folder, url = page_server
    options = ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    browser = Chrome(options=options, service=Driver(shutil.which("chromedriver")))
    try:
        browser.get(url + "/")
        wait = WebDriverWait(browser, 60)
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#database option"))
        box = browser.find_element(By.ID, "queries")
        browser.execute_script("arguments[0].value = arguments[1];", box,
                               (examples / "query.fa").read_text())
        browser.find_element(By.ID, "go").click()
        wait.until(until.text_to_be_present_in_element((By.ID, "status"), "hits for"))
        rows = [[td.text for td in row.find_elements(By.TAG_NAME, "td")]
                for row in browser.find_elements(By.CSS_SELECTOR, "#hits tbody tr")
                if "alignment" not in (row.get_attribute("class") or "")]
    finally:
        browser.quit()
    want = [line.split("\t") for line in _command(
        "search", examples / "query.fa", folder / "examples.wdb", "--device", "cpu"
    ).splitlines()]
    assert [r[:12] for r in rows] == want and len(want) >= 3  # the command's own lines

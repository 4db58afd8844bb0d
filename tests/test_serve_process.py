"""``wavedp serve`` as a process: 2,000 requests mixing valid, malformed, oversized, slow and
abandoned ones get no 5xx and no traceback, every valid answer is the command's, the server's
memory stays flat; SIGTERM answers what is in flight; a killed server is one line and exit
status 1 for the client."""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner
from helpers import fresh_env

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from wavedp.cli import cli  # noqa: E402
from wavedp.db.database import Database  # noqa: E402

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _rss(pid: int) -> int:
    """The process's resident set (bytes)."""
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS"))


@pytest.fixture()
def server(tmp_path):
    """``wavedp serve`` of a small protein database, in a process of its own."""
    rng = random.Random(12)
    queries = ["".join(rng.choice(AMINO) for _ in range(50 + 5 * k)) for k in range(6)]
    subjects = [queries[k % 6][3:45] + "".join(rng.choice(AMINO) for _ in range(60))
                for k in range(40)]
    (tmp_path / "db.fa").write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(subjects)))
    Database.build(tmp_path / "db.fa", tmp_path / "db.wdb", progress=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - read by the tests
    process = subprocess.Popen(
        [sys.executable, "-m", "wavedp.cli", "serve", str(tmp_path / "db.wdb"), "--port",
         str(port), "--device", "cpu", "--max-queries", "40", "--max-residues", "20000"],
        stderr=log, env=fresh_env())
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("the server did not start: " + (tmp_path / "server.log").read_text())
    yield tmp_path, queries, url, process
    if process.poll() is None:
        process.kill()
    process.wait(30)
    log.close()


def _local(tmp_path, text: str, k: int) -> str:
    path = tmp_path / f"q{k}.fa"
    path.write_text(text)
    got = CliRunner().invoke(cli, ["search", str(path), str(tmp_path / "db.wdb"), "--device",
                                   "cpu"])
    assert got.exit_code == 0, got.output
    return got.stdout


def test_two_thousand_mixed_requests(server):
    tmp_path, queries, url, process = server
    texts = [f">q{k}\n{q}\n" for k, q in enumerate(queries)]
    want = {t: _local(tmp_path, t, k) for k, t in enumerate(texts)}
    client = httpx.Client(timeout=60)
    client.post(url + "/search", json={"queries": texts[0]})
    before = _rss(process.pid)

    def one(k: int) -> tuple[str, int, str]:
        kind = ("valid", "valid", "malformed", "bad field", "oversized", "slow", "abandoned",
                "not json")[k % 8]
        text = texts[k % len(texts)]
        body: object = {"queries": text}
        if kind == "malformed":
            body = {"queries": ">x\nMK1V\n"}
        elif kind == "bad field":
            body = {"queries": text, "top": "many"}
        elif kind == "oversized":
            body = {"queries": [text.split()[1]] * 41}
        elif kind == "slow":
            body = {"queries": "".join(texts) * 6}
        if kind == "not json":
            answer = client.post(url + "/search", content=b"{no", timeout=60)
        elif kind == "abandoned":
            try:
                client.post(url + "/search", json=body, timeout=0.001)
            except httpx.TimeoutException:
                return kind, 0, ""
            return kind, 0, ""
        else:
            answer = client.post(url + "/search", json=body)
        return kind, answer.status_code, answer.text

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(one, range(2000)))
    statuses = {kind: set() for kind, _, _ in answers}
    for k, (kind, status, text) in enumerate(answers):
        statuses[kind].add(status)
        assert status < 500 and "Traceback" not in text, (kind, status, text[:300])
        if kind == "valid" and status == 200:
            assert text == want[texts[k % len(texts)]]
        if status >= 400:
            assert list(json.loads(text)) == ["error"]
    assert statuses["valid"] <= {200, 429} and 200 in statuses["valid"]
    assert statuses["malformed"] <= {400, 429} and statuses["bad field"] <= {400, 429}
    assert statuses["oversized"] <= {413, 429} and statuses["not json"] <= {400, 429}
    assert statuses["slow"] <= {200, 429}
    assert _rss(process.pid) - before < 64 << 20  # flat: no growth with the requests
    assert httpx.get(url + "/health").status_code == 200
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and log.count("POST /search") >= 1500


def test_sigterm_answers_what_is_in_flight(server):
    tmp_path, queries, url, process = server
    body = {"queries": "".join(f">q{k}\n{q}\n" for k, q in enumerate(queries)) * 6}
    with ThreadPoolExecutor(1) as pool:
        flight = pool.submit(httpx.post, url + "/search", json=body, timeout=120)
        time.sleep(0.3)  # the request is read: the search runs, or has run
        process.send_signal(signal.SIGTERM)
        answer = flight.result()
    assert answer.status_code == 200 and answer.text.count("\n") > 6
    process.wait(60)  # it stops


def test_a_killed_server_is_one_line_and_status_1(server):
    tmp_path, queries, url, process = server
    (tmp_path / "one.fa").write_text(f">q\n{queries[0]}\n")
    process.kill()
    process.wait(30)
    got = subprocess.run([sys.executable, "-m", "wavedp.cli", "search",
                          str(tmp_path / "one.fa"), "db", "--server", url],
                         capture_output=True, text=True, env=fresh_env(), timeout=60)
    assert got.returncode == 1 and got.stdout == ""
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be reached" in lines[0], got.stderr

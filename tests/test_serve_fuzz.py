"""The search service under an OpenAPI-driven fuzz (schemathesis, from the service's own
description): whatever the generated request, no 5xx."""

from __future__ import annotations

import random

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("starlette")

from hypothesis import HealthCheck, settings  # noqa: E402

from wavedp.db.database import Database  # noqa: E402
from wavedp.serve import Service, make_app  # noqa: E402

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _app(folder):
    rng = random.Random(3)
    (folder / "db.fa").write_text("".join(
        f">s{k}\n{''.join(rng.choice(AMINO) for _ in range(60))}\n" for k in range(12)))
    Database.build(folder / "db.fa", folder / "db.wdb", progress=False)
    return make_app(Service({"db": str(folder / "db.wdb")}, device="cpu"))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return _app(tmp_path_factory.mktemp("fuzz"))


def test_no_request_gets_a_5xx(app):
    """Every operation the description lists, 60 generated requests each (bodies of any
    shape the schema allows, and past it)."""
    from hypothesis import given

    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {"/search", "/databases", "/health"}
    seen: dict[str, set[int]] = {}
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=60, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def fuzz(case) -> None:
            answer = case.call()
            assert answer.status_code < 500, (case.path, case.body, answer.text[:300])
            assert "Traceback" not in answer.text
            seen.setdefault(case.path, set()).add(answer.status_code)

        fuzz()
    assert {400, 413} & seen["/search"] and seen["/health"] == {200}, seen

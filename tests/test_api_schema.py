"""The public API (/api/v1) is typed: /openapi.json gives every route's answer a schema with its
fields, and every route's errors the one error shape, so a script's author reads what comes back
in /api/docs rather than from a test run. And the live answers have the declared fields."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.security.test_web_guards import make_app

ERROR_CODES = ("400", "401", "403", "404", "422", "429")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Any:
    app = make_app(tmp_path_factory.mktemp("schema"), password=False)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        doc = c.get("/openapi.json").json()  # open while no one has an account
        app.state.site.users.add("alice", "admin", "alice-password")
        c.headers["Authorization"] = f"Bearer {app.state.site.tokens.create('schema', 'admin')}"
        yield c, doc


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def documented(doc: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A schema that names its fields: an object with properties, or a list of such objects.
    A bare object, `{}` or a dict of anything says nothing of what comes back."""
    schema = resolve(doc, schema)
    if schema.get("type") == "array":
        return documented(doc, schema.get("items", {}))
    return bool(schema.get("properties"))


def v1_operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, ops in doc["paths"].items() if path.startswith("/api/v1/")
            for method, op in ops.items()]


def test_every_api_v1_route_documents_the_fields_of_its_answer(api: Any) -> None:
    _, doc = api
    ops = v1_operations(doc)
    assert len(ops) >= 24  # every route of the API, reads and changes
    undocumented = []
    for method, path, op in ops:
        ok = [code for code in op["responses"] if code.startswith("2")]
        schemas = [op["responses"][code].get("content", {}).get("application/json", {}).get("schema", {})
                   for code in ok]
        if not schemas or not all(documented(doc, s) for s in schemas):
            undocumented.append(f"{method.upper()} {path}")
    assert undocumented == []


def test_every_api_v1_route_documents_the_one_error_shape(api: Any) -> None:
    _, doc = api
    for method, path, op in v1_operations(doc):
        if path == "/api/v1/ingest":
            continue  # the agents' protocol: its own shape, below
        for code in ERROR_CODES:
            schema = op["responses"].get(code, {}).get("content", {}).get("application/json", {}).get("schema", {})
            body = resolve(doc, schema)
            assert set(body.get("properties", {})) == {"error"}, (method, path, code)
            assert set(resolve(doc, body["properties"]["error"])["properties"]) == {"status", "message"}


def test_the_agents_ingest_documents_what_it_takes_and_each_refusal(api: Any) -> None:
    _, doc = api
    op = doc["paths"]["/api/v1/ingest"]["post"]
    ok = resolve(doc, op["responses"]["200"]["content"]["application/json"]["schema"])
    assert {"records", "duplicates", "samples", "last_seq"} <= set(ok["properties"])
    for code in ("400", "401", "403", "413", "415", "422", "503"):
        refused = resolve(doc, op["responses"][code]["content"]["application/json"]["schema"])
        assert refused["properties"]["error"]["type"] == "string", code


def test_an_error_answered_has_the_documented_shape(api: Any) -> None:
    c, _ = api
    r = c.post("/api/v1/alerts/ack", json={"rule": "md_degraded", "subject": "md0"})
    assert r.status_code == 404
    assert r.json() == {"error": {"status": 404, "message": "no firing alert md_degraded on 'md0'"}}


def test_the_answers_have_the_fields_the_schema_declares(api: Any) -> None:
    c, doc = api
    made = c.post("/api/v1/silences", json={"rule": "md_degraded", "hours": 1, "reason": "test"}).json()
    assert set(made) == {"id", "until"}
    (silence,) = c.get("/api/v1/silences").json()
    assert silence["rule"] == "md_degraded" and silence["reason"] == "test" and silence["subject"] is None
    assert c.delete(f"/api/v1/silences/{made['id']}").json() == {"expired": made["id"]}
    paths = doc["paths"]
    for path in ("/api/v1/whoami", "/api/v1/hosts", "/api/v1/users", "/api/v1/tokens", "/api/v1/audit"):
        schema = resolve(doc, paths[path]["get"]["responses"]["200"]["content"]["application/json"]["schema"])
        fields = set(resolve(doc, schema.get("items", schema))["properties"])
        got = c.get(path).json()
        rows = got if isinstance(got, list) else [got]
        assert rows, path
        assert all(set(row) == fields for row in rows), (path, rows[0], fields)


def test_the_tokens_answer_never_carries_a_token_or_its_hash(api: Any) -> None:
    c, doc = api
    fields = set(resolve(doc, {"$ref": "#/components/schemas/TokenOut"})["properties"])
    assert not {"token", "token_hash", "hash"} & fields
    assert all("hash" not in key for row in c.get("/api/v1/tokens").json() for key in row)

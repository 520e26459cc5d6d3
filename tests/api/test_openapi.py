"""The OpenAPI document tells the truth: required fields, error statuses, the error body."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.api.app import create_app
from companion_memory.api.openapi import OUTCOMES
from tests.conftest import auth

ERROR_REF = "#/components/schemas/Error"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return create_app(None).openapi()  # type: ignore[arg-type]


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, item in document["paths"].items() for method, op in item.items()]


def body_schema(document: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return document["components"]["schemas"][ref.rsplit("/", 1)[1]]


def test_upsert_requires_fact_key_and_supersede_does_not(document: dict[str, Any]) -> None:
    upsert = body_schema(document, document["paths"]["/v1/memories"]["post"])
    assert {"fact_key", "content"} <= set(upsert["required"])
    assert upsert["properties"]["fact_key"]["type"] == "string"  # not nullable either
    supersede = body_schema(document, document["paths"]["/v1/memories/{memory_id}/supersede"]["post"])
    assert "fact_key" not in supersede["required"]


async def test_a_missing_fact_key_still_says_why(client: httpx.AsyncClient) -> None:
    for body in ({"content": "no key"}, {"content": "null key", "fact_key": None}):
        response = await client.post("/v1/memories", json=body, headers=auth())
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "missing_fact_key"
        assert response.json()["error"]["message"].startswith("fact_key is required: ")


def test_every_protected_operation_documents_401_and_403(document: dict[str, Any]) -> None:
    protected = [(m, p, op) for m, p, op in operations(document) if op.get("security")]
    assert len(protected) > 40
    for method, path, op in protected:
        for status in ("401", "403"):
            response = op["responses"].get(status)
            assert response, f"{method} {path} does not document {status}"
            assert response["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearer"]["scheme"] == "bearer" and schemes["apiKey"]["name"] == "x-api-key"
    assert "security" not in document["paths"]["/health"]["get"]


def test_errors_are_documented_with_our_body_never_fastapis(document: dict[str, Any]) -> None:
    assert "HTTPValidationError" not in document["components"]["schemas"]
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    detail = document["components"]["schemas"]["ErrorDetail"]
    assert set(detail["required"]) == {"message", "type", "code"}
    for method, path, op in operations(document):
        # The OAuth protocol endpoints answer as RFC 6749 §5.2 says.
        ref = "#/components/schemas/OAuthError" if path.startswith("/oauth/") else ERROR_REF
        for status, response in op["responses"].items():
            if int(status) >= 400:
                assert response["content"]["application/json"]["schema"] == {"$ref": ref}, (method, path, status)
        # Bad input is a 400 (api/errors.py), so every operation that takes input documents it.
        if (op.get("parameters") and any(p["in"] == "query" for p in op["parameters"])) or "requestBody" in op:
            assert "400" in op["responses"], (method, path)
        if "requestBody" in op:
            assert "413" in op["responses"], (method, path)


def test_domain_outcomes_name_real_operations(document: dict[str, Any]) -> None:
    for method, path in OUTCOMES:
        assert method.lower() in document["paths"].get(path, {}), (
            f"OUTCOMES names {method} {path}, which does not exist"
        )
    responses = document["paths"]["/v1/memories"]["post"]["responses"]
    assert {"200", "201", "409", "422"} <= set(responses)
    assert "422" not in document["paths"]["/v1/memory/recall"]["post"]["responses"]


async def test_an_operation_is_documented_as_protected_exactly_when_it_needs_a_key(
    client: httpx.AsyncClient, document: dict[str, Any]
) -> None:
    for method, path, op in operations(document):
        response = await client.request(
            method, path.replace("{", "").replace("}", ""), json={} if "requestBody" in op else None
        )
        if op.get("security"):
            assert response.status_code == 401, (method, path, response.text)
            assert response.json()["error"]["type"] == "authentication_error"
        else:
            assert response.status_code != 401, (method, path, "needs a key the document does not mention")


async def test_the_oauth_endpoints_answer_errors_as_oauth_says(client: httpx.AsyncClient) -> None:
    for response in (
        await client.post("/oauth/token", data={"grant_type": "password"}),
        await client.put("/oauth/token"),
        await client.get("/oauth/authorize", params={"client_id": "x" * 3000}),
        await client.post("/oauth/register", content=b"{", headers={"Content-Type": "application/json"}),
    ):
        body = response.json()
        assert response.status_code in (400, 405) and set(body) == {"error", "error_description"}, body
        assert isinstance(body["error"], str) and response.headers["cache-control"] == "no-store"


async def test_405_says_what_is_allowed(client: httpx.AsyncClient) -> None:
    # GET and POST /v1/memories are two routes: Allow names both, not the first one found.
    response = await client.delete("/v1/memories", headers=auth())
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
    assert response.json()["error"]["code"] == "method_not_allowed"
    response = await client.put("/v1/memories/some-id", headers=auth())
    assert response.status_code == 405 and response.headers["allow"] == "DELETE, GET, PATCH"
    response = await client.post("/health")
    assert response.status_code == 405 and response.headers["allow"] == "GET"


async def test_served_document_is_the_amended_one(client: httpx.AsyncClient, document: dict[str, Any]) -> None:
    served = (await client.get("/openapi.json")).json()
    assert served == document

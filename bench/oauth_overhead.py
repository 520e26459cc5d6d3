"""What an OAuth access token costs on /mcp next to a static key: the local server on a
real port, ``tools/list`` over one keep-alive connection, once with the MCP key and once
with an access token (looked up by its hash, last use written at most once a minute).
Printed: p50/p95 per call, and the time of a whole token refresh.

    .venv/bin/python bench/oauth_overhead.py [--calls 300]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import secrets
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from companion_memory.settings import Settings  # noqa: E402
from tests.fakes.embedder import HashEmbedder  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402

OWNER, MCP = "bench-owner", "bench-mcp"
REDIRECT = "http://localhost:3030/callback"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def tokens(http: httpx.Client) -> tuple[str, dict[str, str]]:
    """A registration, an approval and a code exchange, as a client and the owner make them."""
    client_id = http.post("/oauth/register", json={"client_name": "bench", "redirect_uris": [REDIRECT]}).json()[
        "client_id"
    ]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s"}
    started = http.get(
        "/oauth/authorize", params={**params, "code_challenge": challenge, "code_challenge_method": "S256"}
    )
    request_id = parse_qs(urlsplit(started.headers["location"]).query)["request"][0]
    answer = http.post(
        f"/v1/oauth/requests/{request_id}/decision",
        json={"approve": True},
        headers={"Authorization": f"Bearer {OWNER}", "Cookie": started.headers["set-cookie"].split(";")[0]},
    ).json()["redirect_to"]
    code = parse_qs(urlsplit(answer).query)["code"][0]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT}
    return client_id, http.post("/oauth/token", data={**form, "client_id": client_id, "code_verifier": verifier}).json()


def timed(http: httpx.Client, bearer: str, calls: int) -> list[float]:
    headers = {"Authorization": f"Bearer {bearer}", "MCP-Protocol-Version": "2025-11-25"}
    spent = []
    for _ in range(calls):
        started = time.perf_counter()
        assert http.post("/mcp", json=LIST, headers=headers).status_code == 200
        spent.append(1000 * (time.perf_counter() - started))
    return spent


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {ordered[len(ordered) // 2]:6.2f} ms   p95 {ordered[int(len(ordered) * 0.95)]:6.2f} ms"


def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as data:
        server = LiveServer(Settings(CHATBOX_API_KEY=OWNER, MEMORY_MCP_API_KEY=MCP), Path(data), HashEmbedder())
        try:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                client_id, issued = tokens(http)
                timed(http, MCP, 20)  # warm both paths up
                timed(http, issued["access_token"], 20)
                print(f"tools/list, {calls} calls each")
                print(f"  MCP key       {percentiles(timed(http, MCP, calls))}")
                print(f"  OAuth token   {percentiles(timed(http, issued['access_token'], calls))}")
                refresh = issued["refresh_token"]
                spent = []
                for _ in range(50):
                    started = time.perf_counter()
                    answer = http.post(
                        "/oauth/token",
                        data={"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id},
                    ).json()
                    spent.append(1000 * (time.perf_counter() - started))
                    refresh = answer["refresh_token"]
                print(f"  refresh       {percentiles(spent)}  (50 rotations)")
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    main(parser.parse_args().calls)

"""``companion-memory import-history FILE --url URL``: the export uploaded in parts to a
running server (here the local one, as a user starts it; a Worker answers the same
routes), the import run by the server's queue, the progress waited for, the summary printed."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.hosts.test_local_server import Server, run_cli

CLAUDE = Path(__file__).resolve().parents[1] / "data" / "imports" / "claude" / "conversations.json"
KEY = "import-key"


def test_import_history_uploads_to_a_server_waits_and_prints_the_summary(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", cwd=tmp_path, CHATBOX_API_KEY=KEY)
    try:
        done = run_cli(tmp_path, "import-history", str(CLAUDE), "--url", server.url, COMPANION_MEMORY_KEY=KEY)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[:2] == [
            "conversations.json: claude (a JSON array whose first element has chat_messages (Claude)) into default",
            "2 conversations, 8 messages, from 2024-09-18 to 2025-04-02",
        ]
        assert "stored 8, 0 duplicates (stored before)" in lines
        assert "uploading" in done.stderr  # the progress line

        headers = {"Authorization": f"Bearer {KEY}"}
        [job] = httpx.get(server.url + "/v1/imports", headers=headers).json()["imports"]
        assert (job["status"], job["stored"], job["received"]) == ("done", 8, CLAUDE.stat().st_size)
        recalled = httpx.post(server.url + "/v1/memory/recall", json={"query": "sourdough starter"}, headers=headers)
        assert any(hit["type"] == "episode" for hit in recalled.json()["hits"])

        again = run_cli(tmp_path, "import-history", str(CLAUDE), "--url", server.url, COMPANION_MEMORY_KEY=KEY)
        assert again.returncode == 0, again.stderr
        assert "stored 0, 8 duplicates (stored before)" in again.stdout.splitlines()

        refused = run_cli(tmp_path, "import-history", str(CLAUDE), "--url", server.url, COMPANION_MEMORY_KEY="wrong")
        assert refused.returncode != 0 and refused.stdout == ""
        assert f"{server.url}/v1/imports" in refused.stderr
    finally:
        server.stop()

"""The Worker's Python in the real Pyodide (0.28, the version Python Workers bundle, from npm
under the pinned Node) against Miniflare's real D1 and Queue bindings, with no bridge:
``tests/tiers/pyodide/pyodide_program.py`` runs the Cloudflare adapters, the migrator, the write and recall
paths and the task queue's consumer there, and prints one ``ok`` line per check."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import tomllib
from pathlib import Path

from tests.cloudflare_tools import ROOT, TOOLS, require_toolchain, tool_env
from tests.conftest import all_keys_settings

# The pure-Python packages the core imports, mounted from the local install (pywrangler
# vendors the same ones into the Worker): nothing is fetched from Pyodide's CDN.
VENDORED = ("snowballstemmer", "tzdata")
CHECKS = (
    "ok pyodide 0.28.",
    "ok jsnull binds as SQL NULL",
    "ok BLOBs round-trip as bytes",
    "ok integers: 2^53-2 exact",
    "ok errors: ConstraintError and DatabaseError",
    "ok concurrent queries on the event loop",
    "ok migrator applied",
    "ok queue: send and send_batch reach our consumer",
    "ok queue (Miniflare only): a message acked before the handler threw",
    "ok queue: a failing task is retried with its delay",
    "ok write path",
    "ok recall path",
    "ok episode recall",
    "ok episode path",
    "ok history import: a ChatGPT export zip",
    "ok history import: a part of 1048576 bytes round-trips",
    "ok history import: uploaded in parts to D1",
)


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not installed"
    return str(Path(spec.origin).parent)


def queue_consumer() -> dict[str, object]:
    """Miniflare's consumer of the task queue, as wrangler.toml configures Cloudflare's, plus
    a dead-letter queue to see what reaches it (without one, Queues deletes those messages)
    and no batch timeout (the tier waits for no batch to fill)."""
    with (ROOT / "wrangler.toml").open("rb") as file:
        (consumer,) = tomllib.load(file)["queues"]["consumers"]
    return {
        "maxBatchSize": consumer["max_batch_size"],
        "maxRetries": consumer["max_retries"],
        "maxBatchTimeout": 0,
        "deadLetterQueue": f"{consumer['queue']}-dead-letters",
    }


def test_the_worker_code_runs_in_pyodide_on_real_bindings() -> None:
    node = require_toolchain()
    config = dataclasses.asdict(all_keys_settings().memory_config())
    config["memory_sensitive_allow"] = sorted(config["memory_sensitive_allow"])
    program = Path(__file__).with_name("pyodide_program.py").relative_to(ROOT)
    done = subprocess.run(
        [str(node), str(TOOLS / "pyodide-run.mjs"), str(ROOT), str(program), *map(_package_dir, VENDORED)],
        cwd=TOOLS,
        env={**tool_env(), "PROGRAM_CONFIG": json.dumps(config), "QUEUE_CONSUMER": json.dumps(queue_consumer())},
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-5000:]}"
    assert done.returncode == 0, report
    lines = done.stdout.splitlines()
    for check in CHECKS:
        assert any(line.startswith(check) for line in lines), f"missing {check!r}\n{report}"

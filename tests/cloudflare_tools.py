"""The pinned Cloudflare toolchain of the real-D1 and Pyodide tiers (``tools/cloudflare``):
Node 22, Miniflare/workerd, wrangler and Pyodide, installed by ``scripts/test`` with
``npm ci --prefix tools/cloudflare``. Without it those tiers fail, loudly: they never skip."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools" / "cloudflare"
BIN = TOOLS / "node_modules" / ".bin"
NODE = BIN / "node"
WRANGLER = BIN / "wrangler"
INSTALL = "npm ci --prefix tools/cloudflare (./scripts/test does it)"


def require_toolchain() -> Path:
    """The pinned ``node``; fails the test when the toolchain is not installed."""
    for tool in (NODE, WRANGLER, TOOLS / "node_modules" / "miniflare", TOOLS / "node_modules" / "pyodide"):
        if not tool.exists():
            pytest.fail(f"the pinned Cloudflare toolchain is missing ({tool.relative_to(ROOT)}): run {INSTALL}")
    return NODE


def tool_env() -> dict[str, str]:
    """The environment for wrangler and Miniflare: the pinned node first on PATH (wrangler's
    shebang asks for ``node``), their config, logs and metrics consent in the work tree, no
    telemetry."""
    config = TOOLS / ".config"
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_CONFIG_HOME": str(config),
        "WRANGLER_SEND_METRICS": "false",
        "WRANGLER_LOG_PATH": str(config / "wrangler-logs"),
        "CI": os.environ.get("CI", "true"),  # wrangler asks nothing interactively
        "COMPATIBILITY_DATE": compatibility_date(),
    }


def compatibility_date() -> str:
    """The Worker's ``compatibility_date`` (``wrangler.toml``): the tiers run on the runtime
    behaviour the deployed Worker gets."""
    with (ROOT / "wrangler.toml").open("rb") as file:
        return str(tomllib.load(file)["compatibility_date"])

"""The real Claude Code and Codex CLIs (pinned in ``tests/agent-clis``) with the hook installed."""

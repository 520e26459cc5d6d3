"""Repositories: all SQL lives here and runs unchanged on D1 and sqlite3."""

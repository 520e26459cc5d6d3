"""Recall: the few memories that matter for a query (see pipeline)."""

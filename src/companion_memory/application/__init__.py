"""The application layer: one use case per action the product offers.

Every surface (REST routes, MCP tools, the CLI, the panel's views, the Worker's cron
and queue handlers) only translates its own input into a use case's input model, calls
the use case with the caller's :class:`~.principal.Principal`, and renders the output
model in its own convention. The use case checks the caller's scope, drives the
services and stores, and turns their records into typed answers, so two surfaces asked
the same thing answer the same thing.
"""

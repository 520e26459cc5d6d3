"""MCP over Streamable HTTP at ``/mcp`` and ``/memory-mcp``: both protocol eras, stateless.

Every POST is answered on its own, from what it carries, so any instance (a local
process or any Worker isolate) can answer any request.

- **2026-07-28** (modern): no handshake and no session. A request carries its protocol
  version and client capabilities in ``params._meta`` (``io.modelcontextprotocol/…``
  keys) and mirrors them in the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``
  headers; the server answers ``server/discover``, puts ``resultType`` on every result
  and gives each error the HTTP status that revision assigns (400, or 404 for an unknown
  method).
- **2024-11-05 … 2025-11-25** (handshake era): ``initialize`` is answered without minting
  an ``Mcp-Session-Id``, ``notifications/initialized`` gets a 202, and every other request
  is served without one. Batches are accepted only at 2025-03-26, the one revision that
  had them (and the version a request without ``MCP-Protocol-Version`` is taken to be).

Which era a POST belongs to is read from the request itself: a modern envelope in
``_meta``, a modern-only method, or a ``MCP-Protocol-Version`` that is not a handshake
version selects 2026-07-28; anything else is served as the handshake era.

Each tool needs the scope its REST twin needs; ``tools/list`` shows a key only the tools
it may call, and a key that may call none is refused (403). Tool failures (bad
arguments, a missing memory, refused content, a key without the scope) come back as
results with ``isError: true`` so the model can read them and correct itself; malformed
messages, unknown methods and unknown tools are JSON-RPC errors. Whatever goes wrong is
answered in JSON-RPC: an unexpected failure inside a tool (its result included) is an
``internal_error`` result, one outside a tool a -32603 error, never a bare HTTP 500. The
API key (``Authorization: Bearer`` or ``?token=``) is never logged: the query token is
cut out of the request before the access log sees it.

The modules:

- ``rpc``: ``answer(body, headers, principal, runtime) -> Reply``, everything about
  JSON-RPC in both eras, with no web framework in it;
- ``eras``: the version ladders and the 2026-07-28 checks of ``_meta`` and the headers;
- ``jsonrpc``: the error codes, the error answer, reading a request;
- ``arguments``: a tool's arguments, derived from its use case's input (strict);
- ``tools``: the memory tools;
- ``routes``: the FastAPI routes, the key, the body limit, and the response.
"""

"""Claude through the Anthropic Messages API: ``model`` (the ChatModel), ``request``
(OpenAI body → Messages body), ``cache`` (prompt-cache breakpoints), ``response`` (a
message → an OpenAI completion) and ``stream`` (stream events → OpenAI chunks)."""

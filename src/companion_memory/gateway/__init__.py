"""A chat turn through the gateway (``turn``: route, recall, call, keep) and the context
it assembles: the boot package, the impression ladder, the memories block and folding.
Model labels are read by ``adapters/chat/routing``, which the gateway is given."""

"""The chat gateway: a turn (``gateway``: route, recall, call, keep) and the one parser of
model labels (``routing``). The chat models it calls are in ``adapters/chat``."""

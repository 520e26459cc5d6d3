"""The adapters (``adapters/``), each against what its port promises."""

"""Context assembly (``gateway/``): the boot package, the ``<memories>`` block, folding, the day."""

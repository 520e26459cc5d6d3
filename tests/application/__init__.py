"""The use cases (``application/``): who may do what, and where."""

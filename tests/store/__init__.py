"""The stores and the schema: the migrator, and what may be stored and read back."""

"""Domain services for memories, messages and the tables around them. Runtime-free."""

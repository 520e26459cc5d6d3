"""The chat model adapters, and the fake providers they are tested against."""

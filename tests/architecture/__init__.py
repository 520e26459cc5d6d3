"""Rules over the whole package: what each layer may import, what the Worker imports, one error
family, every setting documented and read."""

"""The remote model clients against the providers' wire formats."""

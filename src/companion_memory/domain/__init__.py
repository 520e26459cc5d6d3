"""Rules about the data itself, with no runtime, store or framework behind them."""

"""Chat-history exports (ChatGPT, Claude, Chatbox, Cherry Studio, JSONL, Markdown day files)
read as a stream of ``ImportedMessage``: no storage, no HTTP, pure Python that runs in the
Worker too. ``reading.read_history`` is the entry: it opens the file (or zip), detects or takes
the format, and yields the messages while a ``Tally`` counts what was left out and why.
"""

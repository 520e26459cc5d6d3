-- Long-chat folding (memory/folding.py): the oldest turns of a long conversation replaced
-- by a summary. A fold is found again by the hash of the messages it covers, so the next
-- turn gets the same summary (and the provider's cached prefix stays the same); it keeps
-- the folded messages word for word (context_expand) and the ids the gateway stored them
-- under (anchors). A later fold of the same conversation covers more and names the fold
-- before it.
CREATE TABLE context_folds (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  prefix_hash TEXT NOT NULL UNIQUE,
  -- the conversation's messages before this index are folded (its head included)
  upto INTEGER NOT NULL,
  summary TEXT NOT NULL,
  summarizer TEXT NOT NULL,
  -- the messages this fold folded that the one before it had not: JSON, as sent
  messages TEXT NOT NULL DEFAULT '[]',
  anchors TEXT NOT NULL DEFAULT '[]',
  previous_id TEXT,
  created_at TEXT NOT NULL,
  used_at TEXT NOT NULL
);
CREATE INDEX context_folds_used ON context_folds (used_at);

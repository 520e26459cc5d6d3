-- Review candidates of kind 'contradiction': a new memory contradicts a live one, and the
-- owner says which one stands (target_memory_id is the older memory, result_memory_id the
-- newer). SQLite cannot change a CHECK constraint in place, so the table is rebuilt with
-- its rows and its index; this runs the same on D1.
CREATE TABLE memory_candidates_new (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  kind TEXT NOT NULL DEFAULT 'add' CHECK (kind IN ('add', 'update', 'delete', 'quote', 'contradiction')),
  type TEXT NOT NULL DEFAULT 'note',
  content TEXT NOT NULL DEFAULT '',
  fact_key TEXT,
  importance REAL NOT NULL DEFAULT 0.5,
  confidence REAL NOT NULL DEFAULT 0.8,
  evidence TEXT NOT NULL DEFAULT '[]',
  source_message_ids TEXT NOT NULL DEFAULT '[]',
  target_memory_id TEXT,
  result_memory_id TEXT,
  status TEXT NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'approved', 'discarded', 'merged', 'superseded')),
  reason TEXT,
  dream_run_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  reviewed_at TEXT,
  valid_to TEXT
);
INSERT INTO memory_candidates_new (
  id, namespace, kind, type, content, fact_key, importance, confidence, evidence, source_message_ids,
  target_memory_id, result_memory_id, status, reason, dream_run_id, created_at, updated_at, reviewed_at, valid_to
)
SELECT
  id, namespace, kind, type, content, fact_key, importance, confidence, evidence, source_message_ids,
  target_memory_id, result_memory_id, status, reason, dream_run_id, created_at, updated_at, reviewed_at, valid_to
FROM memory_candidates;
DROP TABLE memory_candidates;
ALTER TABLE memory_candidates_new RENAME TO memory_candidates;
CREATE INDEX memory_candidates_status ON memory_candidates (namespace, status, created_at);
-- Finding the open question about a pair of memories.
CREATE INDEX memory_candidates_target ON memory_candidates (target_memory_id, kind, status);

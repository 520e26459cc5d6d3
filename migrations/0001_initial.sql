-- companion-memory schema. Applied by `wrangler d1 migrations apply` on D1 and by
-- `companion-memory migrate` locally; both record it in d1_migrations.
-- Timestamps are ISO-8601 UTC strings ("2026-11-30T12:00:00.000Z"), which sort as text.

CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  conversation_id TEXT,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content TEXT NOT NULL,
  client_hash TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'ingest',
  model TEXT,
  metadata TEXT,
  created_at TEXT NOT NULL,
  stored_at TEXT NOT NULL
);
CREATE UNIQUE INDEX messages_client_hash ON messages (namespace, client_hash);
CREATE INDEX messages_namespace_created ON messages (namespace, created_at);

CREATE TABLE memories (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  type TEXT NOT NULL,
  content TEXT NOT NULL,
  -- content as the full-text index sees it (CJK runs spelled out as bigrams)
  search_text TEXT NOT NULL DEFAULT '',
  fact_key TEXT,
  importance REAL NOT NULL DEFAULT 0.5,
  confidence REAL NOT NULL DEFAULT 0.8,
  status TEXT NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'superseded', 'archived', 'expired', 'deleted')),
  version_status TEXT NOT NULL DEFAULT 'current' CHECK (version_status IN ('current', 'historical')),
  superseded_by TEXT,
  pinned INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '[]',
  source TEXT NOT NULL DEFAULT 'api',
  source_message_ids TEXT NOT NULL DEFAULT '[]',
  evidence TEXT NOT NULL DEFAULT '[]',
  authored_by TEXT,
  seen_count INTEGER NOT NULL DEFAULT 1,
  recall_count INTEGER NOT NULL DEFAULT 0,
  last_injected_at TEXT,
  last_seen_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX memories_namespace_status ON memories (namespace, status, type, updated_at);
-- One live row per fact: concurrent upserts of a new key cannot both create.
CREATE UNIQUE INDEX memories_current_fact_key ON memories (namespace, fact_key)
  WHERE fact_key IS NOT NULL AND status = 'active';
CREATE INDEX memories_updated ON memories (namespace, updated_at, id);

-- Full-text index over memories.search_text, kept in step by triggers.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
  search_text,
  content = 'memories',
  content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2'
);
-- Document frequency of every indexed term: recall leaves out terms that match most
-- memories (they rank nothing and cost the most).
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row');
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF search_text ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
  INSERT INTO memories_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE TABLE memory_relations (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  source_id TEXT NOT NULL,
  target_id TEXT NOT NULL,
  relation TEXT NOT NULL
    CHECK (relation IN ('supports', 'contradicts', 'cause_effect', 'derived_from', 'same_thread', 'supersedes')),
  weight REAL NOT NULL DEFAULT 1.0,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX memory_relations_edge ON memory_relations (source_id, target_id, relation);
CREATE INDEX memory_relations_target ON memory_relations (target_id);

CREATE TABLE memory_candidates (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  kind TEXT NOT NULL DEFAULT 'add' CHECK (kind IN ('add', 'update', 'delete', 'quote')),
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
  reviewed_at TEXT
);
CREATE INDEX memory_candidates_status ON memory_candidates (namespace, status, created_at);

CREATE TABLE precious (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  content TEXT NOT NULL,
  note TEXT,
  source TEXT NOT NULL DEFAULT 'api',
  created_at TEXT NOT NULL
);
CREATE INDEX precious_namespace_created ON precious (namespace, created_at);

CREATE TABLE glossary (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  term TEXT NOT NULL,
  aliases TEXT NOT NULL DEFAULT '[]',
  definition TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX glossary_term ON glossary (namespace, term COLLATE NOCASE);

CREATE TABLE daily_log (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  date TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL DEFAULT '',
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX daily_log_date ON daily_log (namespace, date);

CREATE TABLE weekly_log (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  week TEXT NOT NULL,
  start_date TEXT NOT NULL,
  end_date TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL DEFAULT '',
  -- set when the week went into its month's monthly_log (the week itself is kept)
  rolled_up_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX weekly_log_week ON weekly_log (namespace, week);

CREATE TABLE monthly_log (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  month TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX monthly_log_month ON monthly_log (namespace, month);

CREATE TABLE dream_runs (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  date TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
  dry_run INTEGER NOT NULL DEFAULT 0,
  messages_read INTEGER NOT NULL DEFAULT 0,
  candidates_created INTEGER NOT NULL DEFAULT 0,
  counts TEXT NOT NULL DEFAULT '{}',
  error TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX dream_runs_started ON dream_runs (namespace, started_at);

CREATE TABLE memory_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace TEXT NOT NULL DEFAULT 'default',
  memory_id TEXT NOT NULL,
  event TEXT NOT NULL,
  actor TEXT NOT NULL DEFAULT 'system',
  detail TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE INDEX memory_events_memory ON memory_events (memory_id, id);
CREATE INDEX memory_events_created ON memory_events (created_at);

CREATE TABLE usage_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace TEXT NOT NULL DEFAULT 'default',
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  latency_ms INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX usage_logs_created ON usage_logs (created_at);

CREATE TABLE cache_entries (
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (namespace, key)
);

CREATE TABLE idempotency_keys (
  key TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  response TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE processing_cursors (
  name TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  cursor TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Vector mirror writes that have not reached the index yet. One row per memory: the
-- latest wanted state wins ('upsert', 'delete', or 'purge' = delete the vector, then the row).
CREATE TABLE vector_outbox (
  memory_id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  op TEXT NOT NULL CHECK (op IN ('upsert', 'delete', 'purge')),
  -- bumped on every enqueue, so a worker only clears the entry it processed
  seq INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  next_attempt_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX vector_outbox_due ON vector_outbox (next_attempt_at);

-- Which embedder filled the vector index: changing EMBEDDING_MODEL is detected against
-- this row and refused until the index is rebuilt (reindex).
CREATE TABLE vector_index_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  model TEXT NOT NULL,
  dimensions INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);

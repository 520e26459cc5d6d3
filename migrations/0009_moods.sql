-- The mood timeline: how the companion feels, and how she perceives the owner feels. Not
-- memories: entries fade (retention prunes them), never enter recall or the vector index.
-- label is one of memory/moods.py's MOOD_LABELS (checked there, so the vocabulary can grow
-- without rebuilding the table). source_message_id: the message a dream entry was read from;
-- the unique index keeps a dream that reads a message again from doubling its mood.
CREATE TABLE moods (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  whose TEXT NOT NULL CHECK (whose IN ('owner', 'companion')),
  label TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  intensity REAL NOT NULL DEFAULT 0.5 CHECK (intensity >= 0 AND intensity <= 1),
  felt_at TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'api',
  source_message_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX moods_by_time ON moods (namespace, felt_at);
CREATE UNIQUE INDEX moods_from_messages ON moods (namespace, whose, label, source_message_id)
  WHERE source_message_id IS NOT NULL;

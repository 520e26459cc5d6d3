-- Episodes: what was said, kept as recallable episodic memory (domain/episode.py).
-- Every stored message becomes one episode with the message's id. The message row is
-- what the dream may still read (MESSAGES_RETENTION_DAYS); the episode is what recall
-- and search find (EPISODE_RETENTION_DAYS). content is the message as stored for
-- recall: <private>…</private> spans never reach either table, and each secret of a
-- sensitive-data class is replaced by a mark naming its class (sensitive lists them).
CREATE TABLE episodes (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  conversation_id TEXT,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  -- who said it, when the client named the speaker (a chat message's name): what is
  -- embedded names them (domain/episode.py, Episode.said)
  speaker TEXT,
  source TEXT NOT NULL DEFAULT 'ingest',
  content TEXT NOT NULL,
  -- content as the full-text index sees it (CJK runs spelled out as bigrams)
  search_text TEXT NOT NULL DEFAULT '',
  sensitive TEXT NOT NULL DEFAULT '[]',
  -- The memory-graph lifecycle (domain/layers.py): 'instant' is awake, then asleep, then
  -- archived (found by search and by recall's word channels only); revived by recall,
  -- and after MEMORY_INSTANT_REVIVALS revivals kept as 'long'.
  layer TEXT NOT NULL DEFAULT 'instant' CHECK (layer IN ('instant', 'long')),
  layer_at TEXT,
  revivals INTEGER NOT NULL DEFAULT 0,
  recall_count INTEGER NOT NULL DEFAULT 0,
  last_injected_at TEXT,
  -- when it was said (the message's created_at), and when it was stored
  created_at TEXT NOT NULL,
  stored_at TEXT NOT NULL
);
CREATE INDEX episodes_namespace_created ON episodes (namespace, created_at, id);
CREATE INDEX episodes_conversation ON episodes (namespace, conversation_id, created_at, id);

-- Full-text and substring indexes over episodes, kept in step by triggers as the
-- memories' are (0001, 0002): derived data, never exported.
CREATE VIRTUAL TABLE episodes_fts USING fts5 (
  search_text,
  content = 'episodes',
  content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE episodes_fts_vocab USING fts5vocab (episodes_fts, 'row');
CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
  INSERT INTO episodes_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
  INSERT INTO episodes_fts (episodes_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF search_text ON episodes BEGIN
  INSERT INTO episodes_fts (episodes_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
  INSERT INTO episodes_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE VIRTUAL TABLE episodes_substring USING fts5 (
  content,
  content = 'episodes',
  content_rowid = 'rowid',
  tokenize = 'trigram'
);
CREATE VIRTUAL TABLE episodes_substring_vocab USING fts5vocab (episodes_substring, 'row');
CREATE TRIGGER episodes_substring_insert AFTER INSERT ON episodes BEGIN
  INSERT INTO episodes_substring (rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER episodes_substring_delete AFTER DELETE ON episodes BEGIN
  INSERT INTO episodes_substring (episodes_substring, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER episodes_substring_update AFTER UPDATE OF content ON episodes BEGIN
  INSERT INTO episodes_substring (episodes_substring, rowid, content) VALUES ('delete', old.rowid, old.content);
  INSERT INTO episodes_substring (rowid, content) VALUES (new.rowid, new.content);
END;

-- The vector outbox carries episodes beside memories: the same ids space (uuids), told
-- apart so the mirror reads the right table.
ALTER TABLE vector_outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'memory' CHECK (kind IN ('memory', 'episode'));

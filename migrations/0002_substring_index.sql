-- Substring index over memories.content: every three-character sequence, case-folded
-- (FTS5's trigram tokenizer), so that a fragment of a code, an id or a word ("QW447")
-- finds the memory that holds it ("ZQW4471K"), which the word index (whole terms only)
-- cannot. Derived data like memories_fts: kept in step by triggers, never exported.
CREATE VIRTUAL TABLE memories_substring USING fts5 (
  content,
  content = 'memories',
  content_rowid = 'rowid',
  tokenize = 'trigram'
);
-- Document frequency of every trigram: recall skips fragments too common to pick out
-- anything, and forms with a trigram no memory has.
CREATE VIRTUAL TABLE memories_substring_vocab USING fts5vocab (memories_substring, 'row');
CREATE TRIGGER memories_substring_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_substring (rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER memories_substring_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_substring (memories_substring, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER memories_substring_update AFTER UPDATE OF content ON memories BEGIN
  INSERT INTO memories_substring (memories_substring, rowid, content) VALUES ('delete', old.rowid, old.content);
  INSERT INTO memories_substring (rowid, content) VALUES (new.rowid, new.content);
END;
-- The memories written before this migration.
INSERT INTO memories_substring (memories_substring) VALUES ('rebuild');

-- The form of text the index's vectors were made from (see EMBEDDED_TEXT_FORM in
-- memory/vector_mirror.py); '' is the raw content embedded before this migration. When
-- the form changes, every live memory is embedded again in the background.
ALTER TABLE vector_index_state ADD COLUMN text_form TEXT NOT NULL DEFAULT '';

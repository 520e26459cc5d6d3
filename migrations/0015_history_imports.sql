-- History imports (memory/imports.py): a chat export from another app, read by
-- history/ and stored through ingest as messages and episodes with their own times.
-- A job is uploaded (or, from the CLI, names a local file), checked whole, then stored
-- batch by batch; position and the counts move in the batch that stores the messages,
-- so a job cut short resumes where it stopped and counts nothing twice.
CREATE TABLE history_imports (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  -- the file's name as given (what errors and the panel show)
  name TEXT NOT NULL,
  -- a file on the machine that runs the job (the CLI's); NULL: the uploaded parts
  path TEXT,
  size INTEGER NOT NULL,
  received INTEGER NOT NULL DEFAULT 0,
  -- what was asked ('auto' or a reader's name), and what was found and why
  format TEXT NOT NULL DEFAULT 'auto',
  detected TEXT,
  reason TEXT,
  -- only messages said from since_at and before until_at are stored
  since_at TEXT,
  until_at TEXT,
  time_zone TEXT NOT NULL DEFAULT 'UTC',
  dry_run INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('uploading', 'queued', 'checking', 'storing', 'done', 'failed')),
  -- messages of the file (after the check), how many were handled, and what became of them
  total INTEGER,
  position INTEGER NOT NULL DEFAULT 0,
  stored INTEGER NOT NULL DEFAULT 0,
  duplicates INTEGER NOT NULL DEFAULT 0,
  outside INTEGER NOT NULL DEFAULT 0,
  -- the readers' tally as JSON (history/tally.py Summary), once the check is done
  summary TEXT,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX history_imports_created ON history_imports (created_at);

-- An upload's bytes where no file system holds them (the Worker's): parts in order of where
-- they start, each under D1's 2 MB value limit. Gone once the job has ended.
CREATE TABLE history_import_parts (
  import_id TEXT NOT NULL,
  start INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (import_id, start)
);

-- Retention counts from when a row was stored as much as from when it was said (an
-- import stores years-old messages): memory/retention.py.
CREATE INDEX messages_stored ON messages (stored_at);
CREATE INDEX episodes_stored ON episodes (stored_at);

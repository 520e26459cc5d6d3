-- Shared memories: a memory of one namespace proposed into another (a bot's into
-- 'default'), recalled there only once the owner approves, until revoked.
-- No foreign key to memories: retention hard-deletes rows, and a share must outlive its
-- memory as a record (it is marked revoked; see memory/sharing.py).
CREATE TABLE memory_shares (
  id TEXT PRIMARY KEY,
  memory_id TEXT NOT NULL,
  source_namespace TEXT NOT NULL,
  target_namespace TEXT NOT NULL CHECK (target_namespace <> source_namespace),
  status TEXT NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'approved', 'rejected', 'revoked')),
  proposed_by TEXT NOT NULL,
  decided_by TEXT,
  note TEXT,
  reason TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  decided_at TEXT
);
-- At most one open share (proposed or approved) per memory and target: a second proposal
-- is refused with a conflict, and two racing ones cannot both land.
CREATE UNIQUE INDEX memory_shares_open ON memory_shares (memory_id, target_namespace)
  WHERE status IN ('proposed', 'approved');
-- Recall in a namespace reads the approved shares into it.
CREATE INDEX memory_shares_target ON memory_shares (target_namespace, status);
-- The daily nomination cap counts a source namespace's proposals of the day.
CREATE INDEX memory_shares_source ON memory_shares (source_namespace, created_at);

-- The shares' own audit log, apart from memory_events: retention prunes those after 30
-- days and drops them with a purged memory, while who shared what where, and who allowed
-- it, is kept as long as the share is.
CREATE TABLE memory_share_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  share_id TEXT NOT NULL,
  event TEXT NOT NULL,
  actor TEXT NOT NULL,
  reason TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX memory_share_events_share ON memory_share_events (share_id, id);

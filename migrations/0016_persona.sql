-- Her persona knobs (the memory-graph reference's 人格旋钮): a role-play layer, not memory.
-- Only the changes are stored: a knob's value is its latest change's value_after, or its
-- baseline (domain/persona.py) when it was never changed, so nothing is stored for anyone
-- who never tunes one. Every tune and revert is a row, kept for good (the knob's history).
-- id orders the changes: two within the same millisecond still have an order.
CREATE TABLE persona_changes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace TEXT NOT NULL DEFAULT 'default',
  knob TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('tune', 'revert')),
  value_before REAL NOT NULL,
  value_after REAL NOT NULL CHECK (value_after >= 0 AND value_after <= 1),
  reason TEXT NOT NULL DEFAULT '',
  changed_by TEXT NOT NULL,
  changed_at TEXT NOT NULL
);
CREATE INDEX persona_changes_by_knob ON persona_changes (namespace, knob, id);

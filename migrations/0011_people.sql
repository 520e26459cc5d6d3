-- People in the owner's life: a name, aliases ("my sister", "安娜"), the relation to the
-- owner, notes, and a familiarity in 0..1 that grows with each mention and halves every
-- PEOPLE_FAMILIARITY_HALF_LIFE_DAYS (memory/people.py reads it decayed from familiarity_at).
-- A person merged into another stays as a row pointing at the survivor (merged_into), so
-- an old id still answers.
CREATE TABLE people (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  name TEXT NOT NULL,
  aliases TEXT NOT NULL DEFAULT '[]',
  relation TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  familiarity REAL NOT NULL DEFAULT 0 CHECK (familiarity >= 0 AND familiarity <= 1),
  familiarity_at TEXT NOT NULL,
  mentions INTEGER NOT NULL DEFAULT 0,
  last_mentioned_at TEXT,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'merged')),
  merged_into TEXT,
  source TEXT NOT NULL DEFAULT 'api',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX people_by_namespace ON people (namespace, status, name);

-- Which memories are about whom: linked when a memory's text names one of the person's
-- names; a merge re-points the links to the survivor.
CREATE TABLE person_memories (
  person_id TEXT NOT NULL,
  memory_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (person_id, memory_id)
);
CREATE INDEX person_memories_by_memory ON person_memories (memory_id);

-- What the dream (or an agent) proposes for the owner's review: a new person (or more
-- names for a known one: person_id set), or that two people are one (person_id survives,
-- other_id is merged into it). key makes a second identical proposal a no-op while the
-- first waits.
CREATE TABLE person_proposals (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  kind TEXT NOT NULL CHECK (kind IN ('person', 'merge')),
  key TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  aliases TEXT NOT NULL DEFAULT '[]',
  relation TEXT NOT NULL DEFAULT '',
  person_id TEXT,
  other_id TEXT,
  evidence TEXT NOT NULL DEFAULT '[]',
  reason TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  source TEXT NOT NULL DEFAULT 'dream',
  created_at TEXT NOT NULL,
  reviewed_at TEXT
);
CREATE INDEX person_proposals_by_status ON person_proposals (namespace, status, created_at);
CREATE UNIQUE INDEX person_proposals_pending ON person_proposals (namespace, key) WHERE status = 'pending';

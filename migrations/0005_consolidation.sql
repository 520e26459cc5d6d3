-- Nightly consolidation: a relation edge's weight decays with a half-life from the last
-- time it was set, decayed or re-asserted. NULL means its created_at.
ALTER TABLE memory_relations ADD COLUMN weighed_at TEXT;

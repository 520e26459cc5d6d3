-- Layers: where a memory stands in its lifecycle (domain/layers.py). 'instant' is what was
-- just said (awake, then asleep, then a tombstone unless recalled), 'short' a new memory,
-- 'long' one that kept coming up, 'cold' one unused for long (out of recall, still
-- searchable and restorable), 'permanent' identity, persona, boundary and pinned ones.
-- layer_reason says why it is where it is, layer_at since when; for an instant memory
-- layer_at is when it last woke (written, said again or recalled) and revivals how often.
ALTER TABLE memories ADD COLUMN layer TEXT NOT NULL DEFAULT 'short'
  CHECK (layer IN ('instant', 'short', 'long', 'cold', 'permanent'));
ALTER TABLE memories ADD COLUMN layer_reason TEXT;
ALTER TABLE memories ADD COLUMN layer_at TEXT;
ALTER TABLE memories ADD COLUMN revivals INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET layer = 'permanent', layer_reason = 'identity, persona, boundary or pinned: kept for good'
  WHERE type IN ('identity', 'persona', 'boundary') OR pinned = 1;
UPDATE memories SET layer_reason = 'in memory before layers existed' WHERE layer = 'short';
UPDATE memories SET layer_at = created_at;
-- The nightly pass reads each layer's memories that may move.
CREATE INDEX memories_layers ON memories (layer, status, namespace);

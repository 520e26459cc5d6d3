-- Plans: a memory of type 'plan' has a date or moment it is good until, and its own
-- progress. plan_status is a column of its own rather than new values of status: status
-- is the row's lifecycle (retention expires and then purges, superseding keeps history),
-- and SQLite can only widen its CHECK by rebuilding the table with its full-text triggers.
-- Both are NULL for every other type.

-- "YYYY-MM-DD" (to the end of that day in DREAM_TIME_ZONE) or a UTC moment ("…Z").
ALTER TABLE memories ADD COLUMN valid_to TEXT;
ALTER TABLE memories ADD COLUMN plan_status TEXT
  CHECK (plan_status IN ('active', 'done', 'abandoned', 'expired'));
CREATE INDEX memories_plans ON memories (namespace, plan_status, valid_to) WHERE plan_status IS NOT NULL;
-- A plan the dream found carries its end into the review queue.
ALTER TABLE memory_candidates ADD COLUMN valid_to TEXT;

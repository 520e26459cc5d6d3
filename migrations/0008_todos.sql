-- Her own todos: the companion's list (not the user's plans, which are memories of type
-- 'plan'). priority 1 (whenever) to 5 (urgent); due an optional day (YYYY-MM-DD, in
-- DREAM_TIME_ZONE); closed_at is when it was done or abandoned. memory/todos.py says which
-- one comes next.
CREATE TABLE todos (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  text TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 3 CHECK (priority BETWEEN 1 AND 5),
  due TEXT,
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'abandoned')),
  note TEXT,
  source TEXT NOT NULL DEFAULT 'api',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  closed_at TEXT
);
CREATE INDEX todos_by_status ON todos (namespace, status, created_at);

-- Her night dreams (梦境), not the nightly "dream" that reads the day's messages: after
-- the nightly job she dreams from a few real memories (recent, emotional, about people)
-- and the dream is kept with its mood and the ids of the memories it came from
-- (nightly/night_dreams.py). Not memories: never embedded, never in the full-text or
-- substring indexes, never recalled or searched as a fact about the owner.
-- date: the local day (DREAM_TIME_ZONE) the night follows; seq numbers the night's
-- dreams, so a night run twice dreams no more than NIGHT_DREAMS_PER_NIGHT.
-- mood: one of memory/moods.py's MOOD_LABELS (checked there, as for the moods table).
-- material_ids: a JSON list of memory ids. writer: 'template', or 'model:<DREAM_MODEL>'.
CREATE TABLE night_dreams (
  id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL DEFAULT 'default',
  date TEXT NOT NULL,
  seq INTEGER NOT NULL DEFAULT 1,
  text TEXT NOT NULL,
  mood TEXT NOT NULL,
  language TEXT NOT NULL CHECK (language IN ('zh', 'en')),
  material_ids TEXT NOT NULL DEFAULT '[]',
  writer TEXT NOT NULL DEFAULT 'template',
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX night_dreams_by_night ON night_dreams (namespace, date, seq);

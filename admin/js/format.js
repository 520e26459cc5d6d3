// How values look: type colours and names, dates, numbers.
export const TYPES = ["fact", "event", "preference", "relationship", "boundary", "habit", "decision", "note", "identity", "persona", "plan"];

const TYPE_COLOURS = {
  fact: "#3b82f6", event: "#f59e0b", preference: "#ec4899", relationship: "#10b981", boundary: "#ef4444",
  habit: "#8b5cf6", decision: "#06b6d4", note: "#64748b", identity: "#eab308", persona: "#f97316", plan: "#14b8a6",
  person: "#f0abfc",
};

export const RELATION_COLOURS = {
  supports: "#10b981", contradicts: "#ef4444", cause_effect: "#f59e0b", derived_from: "#8b5cf6",
  same_thread: "#64748b", supersedes: "#94a3b8", about: "#f0abfc",
};

export function typeColour(type) {
  return TYPE_COLOURS[type] || "#64748b";
}

const KIND_LABELS = { add: "New memory", update: "Update", delete: "Forget", quote: "Quote", contradiction: "Contradiction" };
export const kindLabel = (kind) => KIND_LABELS[kind] || kind;

export function when(value) {
  if (!value) return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const now = new Date();
  const sameDay = date.toDateString() === now.toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleString([], { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function longDate(isoDay) {
  const date = new Date(`${isoDay}T12:00:00`);
  if (Number.isNaN(date.getTime())) return isoDay;
  return date.toLocaleDateString([], { weekday: "long", year: "numeric", month: "long", day: "numeric" });
}

export const percent = (value) => `${Math.round((Number(value) || 0) * 100)}%`;

export function plural(count, one, many = `${one}s`) {
  return `${count} ${count === 1 ? one : many}`;
}

/** A fact key made from the content: type + its first words (or a time stamp for other scripts). */
export function suggestFactKey(type, content) {
  const words = (content || "").toLowerCase().match(/[a-z0-9]+/g) || [];
  const slug = words.filter((w) => w.length > 2).slice(0, 4).join("-");
  return `${type || "note"}.${slug || Date.now().toString(36)}`;
}

// How values look: type colours and names (in the panel's language), dates, numbers.
import { tOr } from "./i18n.js";
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

/** A memory type, candidate kind, status, layer...: its name in the panel's language. */
export const label = (group, value) => tOr(`values.${group}.${value}`, value);

export function typeColour(type) {
  return TYPE_COLOURS[type] || "#64748b";
}

// Dates, times and numbers are written by i18n.js, in the panel's language and the server's time zone.
export { longDate, percent, when } from "./i18n.js";

/** A fact key made from the content: type + its first words (or a time stamp for other scripts). */
export function suggestFactKey(type, content) {
  const words = (content || "").toLowerCase().match(/[a-z0-9]+/g) || [];
  const slug = words.filter((w) => w.length > 2).slice(0, 4).join("-");
  return `${type || "note"}.${slug || Date.now().toString(36)}`;
}

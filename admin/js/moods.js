// Moods: today's (hers, and the owner's as she perceives it), the last seven days' spread
// and the newest entries of the timeline.
import { h } from "./dom.js";
import { percent, when } from "./format.js";
import { emptyState } from "./ui.js";

const FACES = { happy: "😊", excited: "🤩", warm: "🥰", calm: "😌", tired: "😪", sad: "😢", lonely: "🥺", anxious: "😟", angry: "😠" };
const COLOURS = {
  happy: "#f59e0b", excited: "#ec4899", warm: "#f97316", calm: "#10b981", tired: "#64748b",
  sad: "#3b82f6", lonely: "#8b5cf6", anxious: "#eab308", angry: "#ef4444",
};
const WHOSE = [["companion", "Hers"], ["owner", "Yours, as she sees it"]];
const SHOWN_ENTRIES = 8;

const moodName = (label) => `${FACES[label] || ""} ${label}`.trim();

function todaysMood(whose, title, mood) {
  return h("div", { class: "mood-today", dataset: { whose } },
    h("p", { class: "small muted" }, title),
    mood
      ? [h("p", { class: "mood-name" }, moodName(mood.label), h("span", { class: "small muted" }, ` · ${percent(mood.intensity)}`)),
         mood.reason ? h("p", { class: "small content" }, mood.reason) : null]
      : h("p", { class: "small muted" }, "Nothing logged today"));
}

function spread(whose, counts) {
  if (!counts.length) return null;
  const most = Math.max(...counts.map((c) => c.count));
  return h("div", { class: "bars mood-week", dataset: { whose } }, counts.map((c) => {
    const fill = h("div", { class: "bar-fill" });
    fill.style.width = `${(c.count / most) * 100}%`;
    fill.style.background = COLOURS[c.label] || "#64748b";
    return h("div", { class: "bar-row", title: `average intensity ${percent(c.average_intensity)}` },
      h("span", {}, moodName(c.label)), h("div", { class: "bar-track" }, fill), h("span", { class: "bar-count" }, String(c.count)));
  }));
}

function entry(mood) {
  return h("div", { class: "mood-entry" },
    h("span", { class: "chip", dataset: { whose: mood.whose } }, mood.whose === "owner" ? "you" : "her"),
    h("span", {}, moodName(mood.label)),
    h("span", { class: "small content" }, mood.reason),
    h("span", { class: "small muted" }, when(mood.felt_at)));
}

/** ``overview``: the boot package's moods; ``timeline``: GET /v1/moods (the last seven days). */
export function moodsCard(overview, timeline) {
  const weeks = WHOSE.map(([whose, title]) => {
    const bars = spread(whose, overview.week[whose]);
    return bars ? [h("p", { class: "small muted" }, title), bars] : null;
  }).filter(Boolean);
  return h("section", { class: "card", id: "moods" },
    h("div", { class: "card-head" }, h("h2", {}, "Moods"), h("span", { class: "chip" }, String(timeline.count))),
    h("div", { class: "stack" },
      h("div", { class: "grid grid-2" }, WHOSE.map(([whose, title]) => todaysMood(whose, title, overview.today[whose]))),
      h("h3", {}, "The last seven days"),
      weeks.length ? weeks : emptyState("No moods this week", "The dream logs the moods said in chat (\u201c我今天好累\u201d, \u201cI'm so happy\u201d); agents log them with mood_log."),
      timeline.moods.length ? h("div", { id: "mood-timeline" }, timeline.moods.slice(0, SHOWN_ENTRIES).map(entry)) : null));
}

// Moods: today's (hers, and the owner's as she perceives it), the last seven days' spread
// and the newest entries of the timeline.
import { h } from "./dom.js";
import { label, percent, when } from "./format.js";
import { aboutHer, num, t } from "./i18n.js";
import { emptyState } from "./ui.js";

const FACES = { happy: "😊", excited: "🤩", warm: "🥰", calm: "😌", tired: "😪", sad: "😢", lonely: "🥺", anxious: "😟", angry: "😠" };
const COLOURS = {
  happy: "#f59e0b", excited: "#ec4899", warm: "#f97316", calm: "#10b981", tired: "#64748b",
  sad: "#3b82f6", lonely: "#8b5cf6", anxious: "#eab308", angry: "#ef4444",
};
const WHOSE = ["companion", "owner"];
const SHOWN_ENTRIES = 8;

const moodName = (mood) => [FACES[mood] ? `${FACES[mood]} ` : "", label("moods", mood)];

function todaysMood(name, whose, mood) {
  return h("div", { class: "mood-today", dataset: { whose } },
    h("p", { class: "small muted" }, aboutHer(name, `moods.whose.${whose}`)),
    mood
      ? [h("p", { class: "mood-name" }, moodName(mood.label), h("span", { class: "small muted" }, " · ", percent(mood.intensity))),
         mood.reason ? h("p", { class: "small content", translate: "no" }, mood.reason) : null]
      : h("p", { class: "small muted" }, t("moods.nothingToday")));
}

function spread(whose, counts) {
  if (!counts.length) return null;
  const most = Math.max(...counts.map((c) => c.count));
  return h("div", { class: "bars mood-week", dataset: { whose } }, counts.map((c) => {
    const fill = h("div", { class: "bar-fill" });
    fill.style.width = `${(c.count / most) * 100}%`;
    fill.style.background = COLOURS[c.label] || "#64748b";
    return h("div", { class: "bar-row", title: t("moods.averageIntensity", { value: percent(c.average_intensity) }) },
      h("span", {}, moodName(c.label)), h("div", { class: "bar-track" }, fill), h("span", { class: "bar-count" }, num(c.count)));
  }));
}

function entry(name, mood) {
  return h("div", { class: "mood-entry" },
    h("span", { class: "chip", dataset: { whose: mood.whose } }, mood.whose === "owner" ? t("moods.you") : aboutHer(name, "moods.her")),
    h("span", {}, moodName(mood.label)),
    h("span", { class: "small content", translate: "no" }, mood.reason),
    h("span", { class: "small muted" }, when(mood.felt_at)));
}

/** ``overview``: the boot package's moods; ``timeline``: GET /v1/moods (the last seven days);
 * ``name``: the companion's (the boot package's companion_name). */
export function moodsCard(overview, timeline, name) {
  const weeks = WHOSE.map((whose) => {
    const bars = spread(whose, overview.week[whose]);
    return bars ? [h("p", { class: "small muted" }, aboutHer(name, `moods.whose.${whose}`)), bars] : null;
  }).filter(Boolean);
  return h("section", { class: "card", id: "moods" },
    h("div", { class: "card-head" }, h("h2", {}, t("moods.title")), h("span", { class: "chip" }, num(timeline.count))),
    h("div", { class: "stack" },
      h("div", { class: "grid grid-2" }, WHOSE.map((whose) => todaysMood(name, whose, overview.today[whose]))),
      h("h3", {}, t("moods.lastSevenDays")),
      weeks.length ? weeks : emptyState(t("moods.noMoods"), t("moods.noMoodsHint")),
      timeline.moods.length ? h("div", { id: "mood-timeline" }, timeline.moods.slice(0, SHOWN_ENTRIES).map((mood) => entry(name, mood))) : null));
}

// The diary: one entry a day from the dream, rolled into weeks and months, each day with
// her night dreams of the night after it; and her night dreams on their own.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { longDate } from "../format.js";
import { t } from "../i18n.js";
import { nightDream } from "../night-dreams.js";
import { button, emptyState, errorBox, segmented, spinner } from "../ui.js";

const DAY_MS = 86_400_000;
const PERIODS = ["day", "week", "month", "dreams"];
// GET /v1/night_dreams's bounds: nights back from today, dreams an answer.
const MAX_NIGHTS = 3660;
const MAX_DREAMS = 500;

/** The nights back to ``date`` (a local day) from today, with a day to spare for the time zone. */
function nightsSince(date) {
  return Math.min(MAX_NIGHTS, Math.max(1, Math.ceil((Date.now() - Date.parse(date)) / DAY_MS) + 1));
}

const HEADINGS = {
  day: (e) => longDate(e.date),
  week: (e) => t("diary.weekHeading", { week: e.week, start: longDate(e.start_date), end: longDate(e.end_date) }),
  month: (e) => t("diary.monthHeading", { month: e.month }),
};

export function render(container, route) {
  const asked = route && route.params.get("period");
  let period = PERIODS.includes(asked) ? asked : "day";
  const list = h("div", { class: "list", id: "diary-list" });
  const more = h("div", { class: "pager" });
  const day = h("input", { type: "date", name: "date", "aria-label": t("diary.goToDay") });

  function entryCard(entry, shown = "day", dreams = []) {
    return h("article", { class: "item diary-entry", dataset: { date: entry.date } },
      h("span", { class: "section-label" }, HEADINGS[shown](entry)),
      entry.title ? h("h3", { translate: "no" }, entry.title) : h("h3", {}, t("common.untitled")),
      entry.summary ? h("p", { class: "content", translate: "no" }, entry.summary) : null,
      entry.message_count !== undefined ? h("p", { class: "small muted" }, t("diary.messages", { count: entry.message_count })) : null,
      dreams.length ? h("div", { class: "diary-dreams" }, h("h4", {}, t("nightDreams.thatNight")), dreams.map((d) => nightDream(d, { night: false }))) : null);
  }

  // The night dreams of the days on a page, by day.
  async function dreamsOf(entries) {
    if (!entries.length) return {};
    const oldest = entries[entries.length - 1].date;
    const { night_dreams } = await api.get("/v1/night_dreams", { namespace: ns(), nights: nightsSince(oldest), limit: MAX_DREAMS });
    const byDay = {};
    for (const dream of night_dreams) (byDay[dream.date] ||= []).push(dream);
    return byDay;
  }

  async function loadDreams(mine) {
    const { night_dreams } = await api.get("/v1/night_dreams", { namespace: ns(), nights: MAX_NIGHTS, limit: MAX_DREAMS });
    if (mine !== loads) return;
    append(clear(list), night_dreams.length
      ? h("div", { class: "stack", id: "night-dream-list" }, night_dreams.map((dream) => h("div", { class: "item" }, nightDream(dream))))
      : emptyState(t("nightDreams.empty"), t("nightDreams.noneHint")));
  }

  // Switching period while a page loads must not show the old period's answer under the new headings.
  let loads = 0;
  async function load(before = null) {
    const mine = ++loads;
    const asked = period;
    if (!before) append(clear(list), spinner());
    clear(more);
    try {
      if (asked === "dreams") return await loadDreams(mine);
      const page = await api.get("/v1/admin/diary", { namespace: ns(), period: asked, limit: 20, before });
      const dreams = asked === "day" ? await dreamsOf(page.entries) : {};
      if (mine !== loads) return;
      if (!before) clear(list);
      append(list, ...page.entries.map((entry) => entryCard(entry, asked, dreams[entry.date] || [])));
      if (!page.entries.length && !before) append(list, emptyState(t(`diary.empty.${asked}`), t("diary.emptyHint")));
      if (page.next_before) append(more, button(t("common.older"), { onclick: () => load(page.next_before) }));
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, () => load()));
    }
  }

  async function goToDay(event) {
    event.preventDefault();
    if (!day.value) return;
    clear(more);
    append(clear(list), spinner());
    try {
      const { diary, night_dreams } = await api.get("/v1/diary", { namespace: ns(), date: day.value });
      append(clear(list), entryCard(diary, "day", night_dreams), button(t("diary.backToAll"), { kind: "ghost", onclick: () => load() }));
    } catch (error) {
      if (error.status === 404) append(clear(list), emptyState(t("diary.noDay", { date: longDate(day.value) })), button(t("diary.backToAll"), { kind: "ghost", onclick: () => load() }));
      else if (error.status !== 401) append(clear(list), errorBox(error, () => load()));
    }
  }

  const dayForm = h("form", { class: "search-bar", onsubmit: goToDay, hidden: period !== "day" }, day, button(t("diary.openDay"), { type: "submit" }));
  append(container, 
    h("div", { class: "row" },
      segmented(PERIODS.map((value) => [value, t(`diary.periods.${value}`)]), period, (value) => {
        period = value;
        dayForm.hidden = value !== "day";
        load();
      }, t("diary.period")),
      h("span", { class: "spacer" }), dayForm),
    list, more,
  );
  load();
}

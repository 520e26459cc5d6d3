// The diary: one entry a day from the dream, rolled into weeks and months.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { longDate } from "../format.js";
import { t } from "../i18n.js";
import { button, emptyState, errorBox, segmented, spinner } from "../ui.js";

const HEADINGS = {
  day: (e) => longDate(e.date),
  week: (e) => t("diary.weekHeading", { week: e.week, start: longDate(e.start_date), end: longDate(e.end_date) }),
  month: (e) => t("diary.monthHeading", { month: e.month }),
};

export function render(container) {
  let period = "day";
  const list = h("div", { class: "list", id: "diary-list" });
  const more = h("div", { class: "pager" });
  const day = h("input", { type: "date", name: "date", "aria-label": t("diary.goToDay") });

  function entryCard(entry, shown = "day") {
    return h("article", { class: "item diary-entry" },
      h("span", { class: "section-label" }, HEADINGS[shown](entry)),
      entry.title ? h("h3", { translate: "no" }, entry.title) : h("h3", {}, t("common.untitled")),
      entry.summary ? h("p", { class: "content", translate: "no" }, entry.summary) : null,
      entry.message_count !== undefined ? h("p", { class: "small muted" }, t("diary.messages", { count: entry.message_count })) : null);
  }

  // Switching period while a page loads must not show the old period's answer under the new headings.
  let loads = 0;
  async function load(before = null) {
    const mine = ++loads;
    const asked = period;
    if (!before) append(clear(list), spinner());
    clear(more);
    try {
      const page = await api.get("/v1/admin/diary", { namespace: ns(), period: asked, limit: 20, before });
      if (mine !== loads) return;
      if (!before) clear(list);
      append(list, ...page.entries.map((entry) => entryCard(entry, asked)));
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
      const { diary } = await api.get("/v1/diary", { namespace: ns(), date: day.value });
      append(clear(list), entryCard(diary), button(t("diary.backToAll"), { kind: "ghost", onclick: () => load() }));
    } catch (error) {
      if (error.status === 404) append(clear(list), emptyState(t("diary.noDay", { date: longDate(day.value) })), button(t("diary.backToAll"), { kind: "ghost", onclick: () => load() }));
      else if (error.status !== 401) append(clear(list), errorBox(error, () => load()));
    }
  }

  const dayForm = h("form", { class: "search-bar", onsubmit: goToDay }, day, button(t("diary.openDay"), { type: "submit" }));
  append(container, 
    h("div", { class: "row" },
      segmented(["day", "week", "month"].map((value) => [value, t(`diary.periods.${value}`)]), period, (value) => {
        period = value;
        dayForm.hidden = value !== "day";
        load();
      }, t("diary.period")),
      h("span", { class: "spacer" }), dayForm),
    list, more,
  );
  load();
}

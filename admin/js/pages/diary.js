// The diary: one entry a day from the dream, rolled into weeks and months.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { longDate } from "../format.js";
import { button, emptyState, errorBox, segmented, spinner } from "../ui.js";

const HEADINGS = {
  day: (e) => longDate(e.date),
  week: (e) => `Week ${e.week} · ${e.start_date} – ${e.end_date}`,
  month: (e) => `Month ${e.month}`,
};

export function render(container) {
  let period = "day";
  const list = h("div", { class: "list", id: "diary-list" });
  const more = h("div", { class: "pager" });
  const day = h("input", { type: "date", name: "date", "aria-label": "Go to a day" });

  function entryCard(entry) {
    return h("article", { class: "item diary-entry" },
      h("span", { class: "section-label" }, HEADINGS[period](entry)),
      h("h3", {}, entry.title || "Untitled"),
      entry.summary ? h("p", { class: "content" }, entry.summary) : null,
      entry.message_count !== undefined ? h("p", { class: "small muted" }, `${entry.message_count} messages`) : null);
  }

  async function load(before = null) {
    if (!before) append(clear(list), spinner());
    clear(more);
    try {
      const page = await api.get("/v1/admin/diary", { namespace: ns(), period, limit: 20, before });
      if (!before) clear(list);
      append(list, ...page.entries.map(entryCard));
      if (!page.entries.length && !before) append(list, emptyState(`No ${period === "day" ? "daily" : `${period}ly`} entries yet`, "The dream writes a diary entry for each day with messages; weeks and months are rolled up from days."));
      if (page.next_before) append(more, button("Older", { onclick: () => load(page.next_before) }));
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
      append(clear(list), entryCard(diary), button("Back to all days", { kind: "ghost", onclick: () => load() }));
    } catch (error) {
      if (error.status === 404) append(clear(list), emptyState(`No diary for ${day.value}`), button("Back to all days", { kind: "ghost", onclick: () => load() }));
      else if (error.status !== 401) append(clear(list), errorBox(error, () => load()));
    }
  }

  const dayForm = h("form", { class: "search-bar", onsubmit: goToDay }, day, button("Open day", { type: "submit" }));
  append(container, 
    h("div", { class: "row" },
      segmented([["day", "Days"], ["week", "Weeks"], ["month", "Months"]], period, (value) => {
        period = value;
        dayForm.hidden = value !== "day";
        load();
      }, "Diary period"),
      h("span", { class: "spacer" }), dayForm),
    list, more,
  );
  load();
}

// Today: today's messages, yesterday's diary, her dreams of last night, counts by type, open
// plans, the people she knows best, moods, her todos, what waits for review.
import { api, ns } from "../api.js";
import { append, h } from "../dom.js";
import { label, longDate, typeColour, when } from "../format.js";
import { num, percent, t } from "../i18n.js";
import { moodsCard } from "../moods.js";
import { nightDreamsCard } from "../night-dreams.js";
import { planBadge, planButtons } from "../plans.js";
import { todosCard } from "../todos.js";
import { emptyState, loadInto, pageHeader } from "../ui.js";

function stat(value, label, href) {
  return h(href ? "a" : "div", { class: "card stat", href }, h("div", { class: "stat-value" }, value), h("div", { class: "stat-label" }, label));
}

function countsByType(counts) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  if (!entries.length) return emptyState(t("today.noMemories"), t("today.noMemoriesHint"));
  const most = Math.max(...entries.map(([, n]) => n));
  return h("div", { class: "bars" }, entries.map(([type, n]) => {
    const fill = h("div", { class: "bar-fill" });
    fill.style.width = `${(n / most) * 100}%`;
    fill.style.background = typeColour(type);
    return h("a", { class: "bar-row", href: `#/memories?type=${encodeURIComponent(type)}`, style: { color: "inherit", textDecoration: "none" } },
      h("span", {}, label("types", type)), h("div", { class: "bar-track" }, fill), h("span", { class: "bar-count" }, num(n)));
  }));
}

function diaryCard(impressions) {
  const daily = impressions.daily;
  const body = daily
    ? [daily.title ? h("h3", { translate: "no" }, daily.title) : h("h3", {}, t("today.untitledDay")),
       h("p", { class: "content", translate: "no" }, daily.summary || ""),
       h("p", { class: "small muted" }, t("today.diaryMeta", { date: longDate(daily.date), count: daily.message_count ?? 0 }))]
    : [emptyState(t("today.noDiary"), t("today.noDiaryHint"))];
  const wider = [
    impressions.weekly && [t("today.week", { week: impressions.weekly.week }), impressions.weekly.title, impressions.weekly.summary],
    impressions.monthly && [t("today.month", { month: impressions.monthly.month }), impressions.monthly.title, impressions.monthly.summary],
  ].filter(Boolean);
  return h("section", { class: "card", id: "yesterday-diary" },
    h("div", { class: "card-head" }, h("h2", {}, t("today.yesterdaysDiary")), h("a", { class: "small", href: "#/more/diary" }, t("today.allDays"))),
    h("div", { class: "stack" }, body, wider.map(([heading, title, summary]) =>
      h("p", { class: "small muted content" }, h("strong", {}, heading), " ", h("span", { translate: "no" }, [title, summary].filter(Boolean).join(" "))))));
}

function plansCard(plans) {
  const count = h("span", { class: "chip" }, num(plans.length));
  const rows = h("div", { id: "plan-rows" });
  const none = () => emptyState(t("today.noPlans"), t("today.noPlansHint"));
  append(rows, plans.length ? plans.map((plan) => {
    const row = h("div", { class: "plan-row", dataset: { id: plan.id } },
      h("p", { class: "content", translate: "no" }, plan.content), planBadge(plan),
      planButtons(plan, () => {
        row.remove();
        count.textContent = num(rows.children.length);
        if (!rows.children.length) append(rows, none());
      }));
    return row;
  }) : none());
  return h("section", { class: "card", id: "upcoming-plans" },
    h("div", { class: "card-head" }, h("h2", {}, t("today.plans")), count), rows);
}

/** The boot package's people, with the familiarity word it gives each (as the model reads it). */
function peopleCard(people) {
  const rows = people.map((person) => h("div", { class: "row person-row", dataset: { id: person.id } },
    h("strong", { translate: "no" }, person.name),
    person.relation ? h("span", { class: "chip chip-relation", translate: "no" }, person.relation) : null,
    h("span", { class: "spacer" }),
    h("span", { class: "chip chip-familiarity", dataset: { familiarity: person.familiarity_word }, title: t("today.familiarityOf", { value: percent(person.familiarity) }) },
      label("familiarity", person.familiarity_word))));
  return h("section", { class: "card", id: "familiar-people" },
    h("div", { class: "card-head" }, h("h2", {}, t("today.people")), h("a", { class: "small", href: "#/more/people" }, t("today.allPeople"))),
    rows.length ? h("div", { class: "stack" }, rows) : emptyState(t("today.noPeople"), t("today.noPeopleHint")));
}

const SHOWN_MESSAGES = 30;

function messageRow(m) {
  return h("div", { class: "message" },
    h("span", { class: "role", dataset: { role: m.role } }, label("roles", m.role)),
    h("div", { class: "content", translate: "no" }, m.content),
    h("span", { class: "message-time" }, h("time", { datetime: m.created_at }, when(m.created_at)),
      m.conversation_id ? [" · ", h("span", { translate: "no" }, m.conversation_id)] : null));
}

function messagesCard(messages) {
  // Newest last, as in a chat; older ones behind a button.
  const hiddenCount = Math.max(0, messages.length - SHOWN_MESSAGES);
  const rows = h("div", { id: "message-rows" }, messages.slice(hiddenCount).map(messageRow));
  const earlier = hiddenCount
    ? h("button", { class: "button button-ghost button-small", type: "button", onclick: (event) => { rows.prepend(...messages.slice(0, hiddenCount).map(messageRow)); event.currentTarget.remove(); } },
        t("today.showEarlier", { count: hiddenCount }))
    : null;
  const list = messages.length
    ? h("div", {}, earlier, rows)
    : emptyState(t("today.noMessages"), t("today.noMessagesHint"));
  return h("section", { class: "card", id: "today-messages" },
    h("div", { class: "card-head" }, h("h2", {}, t("today.messages")),
      h("span", { class: "row" }, h("span", { class: "chip" }, num(messages.length)), h("a", { class: "small", href: "#/conversations" }, t("today.allConversations")))),
    list);
}

export function render(container) {
  const body = h("div", { class: "stack" });
  append(container, body);
  loadInto(body, async () => {
    const [boot, pending, moods, todos, dreams] = await Promise.all([
      api.get("/v1/memory_boot", { namespace: ns() }),
      api.get("/v1/candidates", { namespace: ns(), limit: 200 }),
      api.get("/v1/moods", { namespace: ns(), days: 7 }),
      api.get("/v1/todos", { namespace: ns() }),
      api.get("/v1/night_dreams", { namespace: ns(), nights: 1 }),
    ]);
    const total = Object.values(boot.counts).reduce((a, b) => a + b, 0);
    const waiting = pending.next_cursor ? t("today.atLeast", { count: pending.count }) : num(pending.count);
    return [
      pageHeader(t("today.title"), [longDate(boot.date), " · ", h("span", { translate: "no" }, boot.time_zone),
        ns() === "default" ? null : [" · ", h("span", { translate: "no" }, ns())]]),
      h("div", { class: "stats" },
        stat(num(total), t("today.statMemories", { count: total }), "#/memories"),
        stat(waiting, t("today.statReview", { count: pending.count }), "#/review"),
        stat(num(boot.today_messages.length), t("today.statMessages", { count: boot.today_messages.length }))),
      h("div", { class: "grid grid-2" },
        diaryCard(boot.impressions),
        h("section", { class: "card", id: "counts-by-type" }, h("h2", {}, t("today.byType")), countsByType(boot.counts))),
      nightDreamsCard(dreams, boot.companion_name),
      plansCard(boot.plans),
      peopleCard(boot.people),
      h("div", { class: "grid grid-2" },
        moodsCard(boot.moods, moods, boot.companion_name), todosCard(todos, boot.todos, boot.companion_name)),
      messagesCard(boot.today_messages),
    ];
  });
}

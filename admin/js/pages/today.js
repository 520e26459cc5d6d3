// Today: today's messages, yesterday's diary, counts by type, open plans, moods, her todos,
// what waits for review.
import { api, ns } from "../api.js";
import { append, h } from "../dom.js";
import { longDate, typeColour, when } from "../format.js";
import { moodsCard } from "../moods.js";
import { planBadge, planButtons } from "../plans.js";
import { todosCard } from "../todos.js";
import { emptyState, loadInto, pageHeader } from "../ui.js";

function stat(value, label, href) {
  return h(href ? "a" : "div", { class: "card stat", href }, h("div", { class: "stat-value" }, String(value)), h("div", { class: "stat-label" }, label));
}

function countsByType(counts) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  if (!entries.length) return emptyState("No memories yet", "Approve candidates in Review, or add one under Memories.");
  const most = Math.max(...entries.map(([, n]) => n));
  return h("div", { class: "bars" }, entries.map(([type, n]) => {
    const fill = h("div", { class: "bar-fill" });
    fill.style.width = `${(n / most) * 100}%`;
    fill.style.background = typeColour(type);
    return h("a", { class: "bar-row", href: `#/memories?type=${encodeURIComponent(type)}`, style: { color: "inherit", textDecoration: "none" } },
      h("span", {}, type), h("div", { class: "bar-track" }, fill), h("span", { class: "bar-count" }, String(n)));
  }));
}

function diaryCard(impressions) {
  const daily = impressions.daily;
  const body = daily
    ? [h("h3", {}, daily.title || "Untitled day"), h("p", { class: "content" }, daily.summary || ""),
       h("p", { class: "small muted" }, `${daily.date} · ${daily.message_count ?? 0} messages`)]
    : [emptyState("No diary for yesterday yet", "The nightly dream writes it; you can also run the dream under More → Maintenance.")];
  const wider = [impressions.weekly && `Week ${impressions.weekly.week}: ${impressions.weekly.title || ""} ${impressions.weekly.summary || ""}`,
    impressions.monthly && `Month ${impressions.monthly.month}: ${impressions.monthly.title || ""} ${impressions.monthly.summary || ""}`].filter(Boolean);
  return h("section", { class: "card", id: "yesterday-diary" },
    h("div", { class: "card-head" }, h("h2", {}, "Yesterday's diary"), h("a", { class: "small", href: "#/more/diary" }, "All days")),
    h("div", { class: "stack" }, body, wider.map((line) => h("p", { class: "small muted content" }, line))));
}

function plansCard(plans) {
  const count = h("span", { class: "chip" }, String(plans.length));
  const rows = h("div", { id: "plan-rows" });
  const none = () => emptyState("No open plans", "Give a memory the type plan and a last day, or let the dream find them: \u201c周末去看海\u201d, \u201cnext week\u201d.");
  append(rows, plans.length ? plans.map((plan) => {
    const row = h("div", { class: "plan-row", dataset: { id: plan.id } },
      h("p", { class: "content" }, plan.content), planBadge(plan),
      planButtons(plan, () => {
        row.remove();
        count.textContent = String(rows.children.length);
        if (!rows.children.length) append(rows, none());
      }));
    return row;
  }) : none());
  return h("section", { class: "card", id: "upcoming-plans" },
    h("div", { class: "card-head" }, h("h2", {}, "Plans"), count), rows);
}

const SHOWN_MESSAGES = 30;

function messageRow(m) {
  return h("div", { class: "message" },
    h("span", { class: "role", dataset: { role: m.role } }, m.role),
    h("div", { class: "content" }, m.content),
    h("span", { class: "message-time" }, [when(m.created_at), m.conversation_id ? ` · ${m.conversation_id}` : ""].join("")));
}

function messagesCard(messages) {
  // Newest last, as in a chat; older ones behind a button.
  const hiddenCount = Math.max(0, messages.length - SHOWN_MESSAGES);
  const rows = h("div", { id: "message-rows" }, messages.slice(hiddenCount).map(messageRow));
  const earlier = hiddenCount
    ? h("button", { class: "button button-ghost button-small", type: "button", onclick: (event) => { rows.prepend(...messages.slice(0, hiddenCount).map(messageRow)); event.currentTarget.remove(); } },
        `Show ${hiddenCount} earlier`)
    : null;
  const list = messages.length
    ? h("div", {}, earlier, rows)
    : emptyState("No messages today", "Messages arrive through the chat gateway, MCP or POST /v1/ingest/messages.");
  return h("section", { class: "card", id: "today-messages" },
    h("div", { class: "card-head" }, h("h2", {}, "Today's messages"), h("span", { class: "chip" }, String(messages.length))), list);
}

export function render(container) {
  const body = h("div", { class: "stack" });
  append(container, body);
  loadInto(body, async () => {
    const [boot, pending, moods, todos] = await Promise.all([
      api.get("/v1/memory_boot", { namespace: ns() }),
      api.get("/v1/candidates", { namespace: ns(), limit: 200 }),
      api.get("/v1/moods", { namespace: ns(), days: 7 }),
      api.get("/v1/todos", { namespace: ns() }),
    ]);
    const total = Object.values(boot.counts).reduce((a, b) => a + b, 0);
    const waiting = pending.next_cursor ? `${pending.count}+` : pending.count;
    return [
      pageHeader("Today", `${longDate(boot.date)} · ${boot.time_zone}${ns() === "default" ? "" : ` · ${ns()}`}`),
      h("div", { class: "stats" },
        stat(total, "memories", "#/memories"),
        stat(waiting, "to review", "#/review"),
        stat(boot.today_messages.length, "messages today")),
      h("div", { class: "grid grid-2" },
        diaryCard(boot.impressions),
        h("section", { class: "card", id: "counts-by-type" }, h("h2", {}, "Memories by type"), countsByType(boot.counts))),
      plansCard(boot.plans),
      h("div", { class: "grid grid-2" }, moodsCard(boot.moods, moods), todosCard(todos, boot.todos)),
      messagesCard(boot.today_messages),
    ];
  });
}

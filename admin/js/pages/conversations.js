// Conversations: what was said, a day at a time (the dream's days); open one to read its
// turns, and forget a turn, a conversation or a whole day (vectors first, then the words).
import { api, ns } from "../api.js";
import { append, clear, h, icon } from "../dom.js";
import { label, longDate } from "../format.js";
import { dateTime, dayOf, section, shortDate, timeOfDay } from "../i18n.js";
import { button, emptyState, errorBox, modal, pageHeader, safely, spinner, toast, undoable } from "../ui.js";

const s = section("conversations");
// Turns read at a time in an open conversation (the server's most on each side).
const REACH = 50;
// Turns shown before one a search found.
const CONTEXT = 3;
const SEARCH_LIMIT = 30;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const encoded = encodeURIComponent;

function span(first, last) {
  const [start, end] = [timeOfDay(first), timeOfDay(last)];
  return start === end ? start : s("span", { start, end });
}

function sourceChip(source) {
  return h("span", { class: "chip chip-source", translate: "no" }, source);
}

function conversationName(conversation) {
  return conversation.conversation_id
    ? h("span", { class: "mono conversation-id", translate: "no" }, conversation.conversation_id)
    : h("span", { class: "conversation-id" }, s("loose"));
}

/** One turn in an open conversation, with its Forget (after a few seconds, unless undone). */
function turnRow(turn, highlighted, onForgotten) {
  const row = h("div", { class: ["message", "turn", turn.id === highlighted && "turn-anchor"], dataset: { id: turn.id } },
    h("span", { class: "role", dataset: { role: turn.role } }, label("roles", turn.role)),
    h("div", { class: "content", translate: "no" }, turn.content),
    h("span", { class: "message-time" }, h("time", { datetime: turn.created_at, title: dateTime(turn.created_at) }, timeOfDay(turn.created_at)),
      h("button", {
        class: "button button-small turn-forget", type: "button",
        onclick: () => {
          row.hidden = true;
          undoable(s("forgotTurn"), {
            commit: async () => {
              await api.delete(`/v1/conversations/messages/${encoded(turn.id)}`);
              onForgotten(turn);
            },
            restore: () => (row.hidden = false),
          });
        },
      }, s("forgetTurn"))));
  return row;
}

/** The conversation around ``messageId`` in a sheet: its turns in order, earlier and later ones on
 * demand; ``highlight``: the turn a search found, marked. */
export function openConversation(messageId, { conversationId, onChange, highlight = null } = {}) {
  const sheet = modal(conversationId === null ? s("looseTitle") : s("sheetTitle"), { wide: true });
  const turns = h("div", { class: "turns", id: "conversation-turns" });
  const earlier = h("div", { class: "pager" });
  const later = h("div", { class: "pager" });
  let first = null;
  let last = null;
  let lastDay = null;
  const forgotten = (turn) => onChange?.({ forgot: turn });

  function dayMark(turn) {
    return h("p", { class: "section-label turn-day" }, longDate(turn.day));
  }

  function place(list, where) {
    if (where === "end") {
      for (const turn of list) {
        if (turn.day !== lastDay) append(turns, dayMark(turn));
        lastDay = turn.day;
        append(turns, turnRow(turn, highlight, forgotten));
      }
    } else {
      // Earlier turns go on top; the day mark above the old first turn stays right only if its day changes.
      const rows = [];
      let day = null;
      for (const turn of list) {
        if (turn.day !== day) rows.push(dayMark(turn));
        day = turn.day;
        rows.push(turnRow(turn, highlight, forgotten));
      }
      const oldMark = turns.querySelector(".turn-day");
      if (oldMark && list.length && list[list.length - 1].day === first.day) oldMark.remove();
      turns.prepend(...rows);
    }
  }

  function moreButton(target, text, load) {
    append(clear(target), button(text, { kind: "ghost", onclick: safely(load) }));
  }

  async function loadLater() {
    const answer = await api.get(`/v1/conversations/messages/${encoded(last.id)}`, { before: 0, after: REACH });
    const fresh = answer.turns.slice(1);
    place(fresh, "end");
    if (fresh.length) last = fresh[fresh.length - 1];
    if (fresh.length < REACH) clear(later);
  }

  async function loadEarlier() {
    const answer = await api.get(`/v1/conversations/messages/${encoded(first.id)}`, { before: REACH, after: 0 });
    const fresh = answer.turns.slice(0, -1);
    place(fresh, "start");
    if (fresh.length) first = fresh[0];
    if (fresh.length < REACH) clear(earlier);
  }

  async function show() {
    append(clear(sheet.body), spinner());
    // A found turn comes with a few turns before it; one more earlier tells whether there are others.
    const context = highlight ? CONTEXT : 0;
    let answer;
    try {
      answer = await api.get(`/v1/conversations/messages/${encoded(messageId)}`, { before: context + 1, after: REACH });
    } catch (error) {
      if (error.status !== 401) append(clear(sheet.body), errorBox(error, show));
      return;
    }
    const anchorAt = answer.turns.findIndex((turn) => turn.id === messageId);
    const shown = answer.turns.slice(Math.max(0, anchorAt - context));
    first = shown[0];
    last = shown[shown.length - 1];
    const actions = h("div", { class: "actions" });
    if (answer.conversation_id !== null) {
      append(actions, button(s("forgetConversation"), {
        kind: "danger", iconName: "trash", dataset: { action: "forget-conversation" },
        onclick: () => {
          sheet.close();
          onChange?.({ hide: answer.conversation_id });
          undoable(s("forgotConversation"), {
            commit: async () => {
              await api.delete(`/v1/conversations/${encoded(answer.conversation_id)}`, { namespace: ns() });
              onChange?.({ forgotConversation: answer.conversation_id });
            },
            restore: () => onChange?.({ show: answer.conversation_id }),
          });
        },
      }));
    }
    append(clear(sheet.body),
      h("div", { class: "item-meta" }, sourceChip(first.source), conversationName(answer)),
      earlier, turns, later, actions);
    place(shown, "end");
    if (anchorAt > context) moreButton(earlier, s("earlier"), loadEarlier);
    if (answer.turns.length - 1 - anchorAt >= REACH) moreButton(later, s("later"), loadLater);
    sheet.body.querySelector(".turn-anchor")?.scrollIntoView({ block: "center" });
  }
  show();
  return sheet;
}

function conversationCard(conversation, open) {
  const key = conversation.conversation_id ?? `${conversation.source}:`;
  return h("button", { class: "item conversation", type: "button", dataset: { conversation: key }, onclick: () => open(conversation) },
    h("div", { class: "item-meta" }, sourceChip(conversation.source), conversationName(conversation),
      h("span", { class: "spacer" }), h("span", {}, span(conversation.first_at, conversation.last_at))),
    h("p", { class: "content clamp", translate: "no" }, conversation.first_line),
    h("div", { class: "item-meta" }, h("span", {}, s("turns", { count: conversation.messages }))));
}

function hitCard(turn, open) {
  const dataset = { id: turn.id, conversation: turn.conversation_id ?? "" };
  return h("button", { class: "item conversation-hit", type: "button", dataset, onclick: () => open(turn) },
    h("div", { class: "item-meta" }, h("span", { class: "role", dataset: { role: turn.role } }, label("roles", turn.role)),
      conversationName(turn), h("span", { class: "spacer" }),
      h("time", { datetime: turn.created_at, title: dateTime(turn.created_at) }, shortDate(turn.day), " ", timeOfDay(turn.created_at))),
    h("p", { class: "content clamp", translate: "no" }, turn.content));
}

export function render(container, route) {
  const asked = route.params.get("day");
  const day = asked && DAY.test(asked) ? asked : dayOf(new Date());
  const list = h("div", { class: "list", id: "conversation-list" });
  const summary = h("p", { class: "small muted", id: "day-summary" });
  const dayInput = h("input", { type: "date", name: "day", value: day, "aria-label": s("goToDay") });
  const stepper = (id, name, text) =>
    h("button", { class: "icon-button", type: "button", id, "aria-label": text, title: text }, icon(name));
  const previous = stepper("previous-day", "back", s("previousDay"));
  const next = stepper("next-day", "forward", s("nextDay"));
  const forgetDay = button(s("forgetDay"), { kind: "danger", iconName: "trash", id: "forget-day", disabled: true });
  let current = null;

  const goTo = (target) => {
    if (target && target !== day) location.hash = `#/conversations?day=${target}`;
  };
  dayInput.addEventListener("change", () => DAY.test(dayInput.value) && goTo(dayInput.value));

  const onChange = (what) => {
    const card = (id) => list.querySelector(`[data-conversation="${CSS.escape(id)}"]`);
    if (what.hide) card(what.hide)?.setAttribute("hidden", "");
    else if (what.show) card(what.show)?.removeAttribute("hidden");
    else load();
  };
  const open = (conversation) => openConversation(conversation.first_message_id, { conversationId: conversation.conversation_id, onChange });

  forgetDay.addEventListener("click", () => {
    if (!current || !confirm(s("confirmDay", { date: longDate(current.day), count: current.messages }))) return;
    const shown = [...list.children];
    shown.forEach((child) => (child.hidden = true));
    const { since, until } = current;
    undoable(s("forgotDay"), {
      commit: async () => {
        const answer = await api.post("/v1/conversations/forget", { namespace: ns(), since, until });
        toast(s("forgotten", { count: answer.forgotten }), { kind: "ok" });
        load();
      },
      restore: () => shown.forEach((child) => (child.hidden = false)),
    });
  });

  const query = h("input", { type: "search", name: "q", placeholder: s("searchPlaceholder"), "aria-label": s("searchLabel") });
  const searchForm = h("form", {
    class: "search-bar", role: "search",
    onsubmit: (event) => {
      event.preventDefault();
      if (query.value.trim()) search(query.value.trim());
      else load();
    },
  }, query, button(s("search"), { iconName: "search", type: "submit" }));
  query.addEventListener("search", () => { if (!query.value) load(); });

  // What a found turn's sheet forgot leaves the results.
  const onHitChange = (what) => {
    const hits = (conversation) => list.querySelectorAll(`.conversation-hit[data-conversation="${CSS.escape(conversation)}"]`);
    if (what.forgot) list.querySelector(`.conversation-hit[data-id="${CSS.escape(what.forgot.id)}"]`)?.setAttribute("hidden", "");
    else if (what.hide) hits(what.hide).forEach((hit) => hit.setAttribute("hidden", ""));
    else if (what.show) hits(what.show).forEach((hit) => hit.removeAttribute("hidden"));
  };
  const openHit = (turn) => openConversation(turn.id, { conversationId: turn.conversation_id, highlight: turn.id, onChange: onHitChange });

  let loads = 0;
  // While searching, the day's own controls step aside.
  const dayBar = h("div", { class: "row day-bar" }, previous, h("h2", { id: "day-heading" }, longDate(day)), next);
  const searching = (on) => [dayBar, dayInput, forgetDay].forEach((part) => (part.hidden = on));

  async function search(text) {
    const mine = ++loads;
    append(clear(list), spinner());
    clear(summary);
    searching(true);
    try {
      const answer = await api.post("/v1/conversations/search", { query: text, namespace: ns(), limit: SEARCH_LIMIT });
      if (mine !== loads) return;
      append(summary, s("matches", { count: answer.turns.length, query: text }));
      append(clear(list),
        button(s("backToDay"), { kind: "ghost", iconName: "back", id: "back-to-day", onclick: () => { query.value = ""; load(); } }),
        ...(answer.turns.length ? answer.turns.map((turn) => hitCard(turn, openHit))
          : [emptyState(s("nothingFound"), s("nothingFoundHint"))]));
    } catch (error) {
      if (mine === loads && error.status !== 401) append(clear(list), errorBox(error, () => search(text)));
    }
  }

  async function load() {
    const mine = ++loads;
    append(clear(list), spinner());
    clear(summary);
    searching(false);
    try {
      const answer = await api.get("/v1/conversations", { namespace: ns(), day });
      if (mine !== loads) return;
      current = answer;
      previous.disabled = !answer.previous_day;
      next.disabled = !answer.next_day;
      previous.onclick = () => goTo(answer.previous_day);
      next.onclick = () => goTo(answer.next_day);
      forgetDay.disabled = answer.messages === 0;
      append(summary, answer.messages
        ? s("daySummary", { conversations: s("conversationCount", { count: answer.count }), turns: s("turns", { count: answer.messages }) })
        : null);
      append(clear(list), ...(answer.conversations.length
        ? answer.conversations.map((conversation) => conversationCard(conversation, open))
        : [emptyState(s("none", { date: longDate(answer.day) }), s("noneHint"))]));
      if (answer.count > answer.conversations.length) {
        append(list, h("p", { class: "small muted" }, s("moreThanShown", { count: answer.count - answer.conversations.length })));
      }
    } catch (error) {
      if (mine === loads && error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }

  append(container,
    pageHeader(s("title"), s("subtitle")),
    searchForm,
    dayBar,
    h("div", { class: "row" }, dayInput, summary, h("span", { class: "spacer" }), forgetDay),
    list);
  load();
}

// Her own todos: the open ones in the order she will take them, a form to add one, and
// Done / Abandon on each.
import { api, ns } from "./api.js";
import { append, clear, h } from "./dom.js";
import { longDate } from "./format.js";
import { aboutHer, num, t } from "./i18n.js";
import { button, emptyState, safely, toast } from "./ui.js";

function badges(todo) {
  return [
    todo.priority !== 3 ? h("span", { class: "chip", dataset: { priority: String(todo.priority) } }, t("todos.priority", { value: todo.priority })) : null,
    todo.due ? h("span", { class: "chip chip-plan" }, t("todos.due", { date: longDate(todo.due) })) : null,
  ];
}

function todoRow(todo, refresh) {
  const close = (status, path, label, message) => button(label, {
    kind: status === "done" ? "primary" : "ghost",
    iconName: status === "done" ? "check" : "close",
    dataset: { todoAction: status },
    onclick: safely(async () => {
      await api.post(`/v1/todos/${encodeURIComponent(todo.id)}/${path}`);
      toast(message, { kind: "ok" });
      await refresh();
    }),
  });
  return h("div", { class: "plan-row todo-row", dataset: { id: todo.id } },
    h("p", { class: "content", translate: "no" }, todo.text), badges(todo),
    close("done", "done", t("common.done"), t("todos.doneToast")), close("abandoned", "abandon", t("common.abandon"), t("todos.abandonedToast")));
}

/** ``page``: GET /v1/todos (the open ones, next first); ``stats``: GET /v1/todos/stats;
 * ``name``: the companion's (the boot package's companion_name). */
export function todosCard(page, stats, name) {
  const rows = h("div", { id: "todo-rows" });
  const summary = h("span", { class: "chip", id: "todo-counts" });
  const show = (todos, counts) => {
    summary.textContent = t("todos.counts", { open: counts.open, done: counts.done_last_7_days });
    append(clear(rows), todos.length
      ? todos.map((todo) => todoRow(todo, refresh))
      : emptyState(aboutHer(name, "todos.empty"), t("todos.emptyHint")));
  };
  const refresh = async () => {
    const [fresh, counts] = await Promise.all([
      api.get("/v1/todos", { namespace: ns() }),
      api.get("/v1/todos/stats", { namespace: ns() }),
    ]);
    show(fresh.todos, counts);
  };
  const text = h("input", { type: "text", name: "todoText", placeholder: aboutHer(name, "todos.placeholder"), "aria-label": t("todos.text"), maxlength: 500, required: true });
  const priority = h("select", { name: "todoPriority", "aria-label": t("todos.priorityLabel") },
    [5, 4, 3, 2, 1].map((value) => h("option", { value, selected: value === 3 }, t(`todos.priorities.p${value}`))));
  const due = h("input", { type: "date", name: "todoDue", "aria-label": t("todos.dueLabel") });
  const form = h("form", { class: "row todo-form", id: "todo-form", onsubmit: safely(async (event) => {
    event.preventDefault();
    if (!text.value.trim()) return;
    await api.post("/v1/todos", { namespace: ns(), text: text.value.trim(), priority: Number(priority.value), due: due.value || null });
    form.reset();
    toast(t("todos.added"), { kind: "ok" });
    await refresh();
  }) }, text, priority, due, button(t("todos.add"), { kind: "primary", iconName: "plus", type: "submit" }));
  show(page.todos, stats);
  return h("section", { class: "card", id: "her-todos" },
    h("div", { class: "card-head" }, h("h2", {}, aboutHer(name, "todos.title")), summary), rows, form);
}

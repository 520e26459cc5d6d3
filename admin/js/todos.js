// Her own todos: the open ones in the order she will take them, a form to add one, and
// Done / Abandon on each.
import { api, ns } from "./api.js";
import { append, clear, h } from "./dom.js";
import { longDate } from "./format.js";
import { button, emptyState, safely, toast } from "./ui.js";

function badges(todo) {
  return [
    todo.priority !== 3 ? h("span", { class: "chip", dataset: { priority: String(todo.priority) } }, `priority ${todo.priority}`) : null,
    todo.due ? h("span", { class: "chip chip-plan" }, `due ${longDate(todo.due)}`) : null,
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
    h("p", { class: "content" }, todo.text), badges(todo),
    close("done", "done", "Done", "Todo done."), close("abandoned", "abandon", "Abandon", "Todo abandoned."));
}

/** ``page``: GET /v1/todos (the open ones, next first); ``stats``: GET /v1/todos/stats. */
export function todosCard(page, stats) {
  const rows = h("div", { id: "todo-rows" });
  const summary = h("span", { class: "chip", id: "todo-counts" });
  const show = (todos, counts) => {
    summary.textContent = `${counts.open} open · ${counts.done_last_7_days} done this week`;
    append(clear(rows), todos.length
      ? todos.map((todo) => todoRow(todo, refresh))
      : emptyState("Nothing on her list", "Add one below, or let an agent keep it with todo_add."));
  };
  const refresh = async () => {
    const [fresh, counts] = await Promise.all([
      api.get("/v1/todos", { namespace: ns() }),
      api.get("/v1/todos/stats", { namespace: ns() }),
    ]);
    show(fresh.todos, counts);
  };
  const text = h("input", { type: "text", name: "todoText", placeholder: "What she means to do", maxlength: 500, required: true });
  const priority = h("select", { name: "todoPriority", "aria-label": "Priority" },
    [[5, "5 urgent"], [4, "4"], [3, "3 normal"], [2, "2"], [1, "1 whenever"]].map(([value, label]) => h("option", { value, selected: value === 3 }, label)));
  const due = h("input", { type: "date", name: "todoDue", "aria-label": "Due" });
  const form = h("form", { class: "row todo-form", id: "todo-form", onsubmit: safely(async (event) => {
    event.preventDefault();
    if (!text.value.trim()) return;
    await api.post("/v1/todos", { namespace: ns(), text: text.value.trim(), priority: Number(priority.value), due: due.value || null });
    form.reset();
    toast("Todo added.", { kind: "ok" });
    await refresh();
  }) }, text, priority, due, button("Add", { kind: "primary", iconName: "plus", type: "submit" }));
  show(page.todos, stats);
  return h("section", { class: "card", id: "her-todos" },
    h("div", { class: "card-head" }, h("h2", {}, "Her todos"), summary), rows, form);
}

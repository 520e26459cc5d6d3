// Precious: the owner's words kept verbatim, append-only (only the owner key deletes).
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { when } from "../format.js";
import { button, emptyState, errorBox, field, safely, spinner, toast, undoable } from "../ui.js";

export function render(container) {
  const list = h("div", { class: "list", id: "precious-list" });
  const content = h("textarea", { name: "content", rows: 3, placeholder: "Words to keep exactly as they were said" });
  const note = h("input", { type: "text", name: "note", placeholder: "Why it matters (optional)" });
  const form = h("form", {
    class: "form",
    onsubmit: safely(async (event) => {
      event.preventDefault();
      if (!content.value.trim()) return;
      await api.post("/v1/precious", { namespace: ns(), content: content.value, note: note.value.trim() || undefined, source: "admin" });
      content.value = "";
      note.value = "";
      toast("Kept.", { kind: "ok" });
      load();
    }),
  }, field("Add precious words", content), field("Note", note), h("div", { class: "form-actions" }, button("Keep", { kind: "primary", type: "submit", iconName: "plus" })));

  async function load() {
    append(clear(list), spinner());
    try {
      const { precious } = await api.get("/v1/precious", { namespace: ns(), limit: 200 });
      append(clear(list), ...(precious.length ? precious.map((item) => {
        const card = h("article", { class: "item", dataset: { id: item.id } },
          h("blockquote", { class: "quote content" }, item.content),
          item.note ? h("p", { class: "small" }, item.note) : null,
          h("div", { class: "item-meta" }, h("span", {}, when(item.created_at)), h("span", {}, item.source), h("span", { class: "spacer" }),
            button("Delete", { kind: "danger", onclick: () => {
              card.hidden = true;
              undoable("Precious words deleted.", { commit: () => api.delete(`/v1/precious/${encodeURIComponent(item.id)}`), restore: () => (card.hidden = false) });
            }, class: "button button-small button-danger" })));
        return card;
      }) : [emptyState("Nothing kept yet", "Precious words are never summarised or recalled; they stay word for word.")]));
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }
  append(container, h("section", { class: "card" }, form), list);
  load();
}

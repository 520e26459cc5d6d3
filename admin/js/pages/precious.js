// Precious: the owner's words kept verbatim, append-only (only the owner key deletes).
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { when } from "../format.js";
import { t } from "../i18n.js";
import { button, emptyState, errorBox, field, safely, spinner, toast, undoable } from "../ui.js";

export function render(container) {
  const list = h("div", { class: "list", id: "precious-list" });
  const content = h("textarea", { name: "content", rows: 3, placeholder: t("precious.placeholder") });
  const note = h("input", { type: "text", name: "note", placeholder: t("precious.notePlaceholder") });
  const form = h("form", {
    class: "form",
    onsubmit: safely(async (event) => {
      event.preventDefault();
      if (!content.value.trim()) return;
      await api.post("/v1/precious", { namespace: ns(), content: content.value, note: note.value.trim() || undefined, source: "admin" });
      content.value = "";
      note.value = "";
      toast(t("precious.kept"), { kind: "ok" });
      load();
    }),
  }, field(t("precious.add"), content), field(t("precious.note"), note), h("div", { class: "form-actions" }, button(t("precious.keep"), { kind: "primary", type: "submit", iconName: "plus" })));

  async function load() {
    append(clear(list), spinner());
    try {
      const { precious } = await api.get("/v1/precious", { namespace: ns(), limit: 200 });
      append(clear(list), ...(precious.length ? precious.map((item) => {
        const card = h("article", { class: "item", dataset: { id: item.id } },
          h("blockquote", { class: "quote content", translate: "no" }, item.content),
          item.note ? h("p", { class: "small", translate: "no" }, item.note) : null,
          h("div", { class: "item-meta" }, h("span", {}, when(item.created_at)), h("span", { translate: "no" }, item.source), h("span", { class: "spacer" }),
            button(t("common.delete"), { kind: "danger", onclick: () => {
              card.hidden = true;
              undoable(t("precious.deleted"), { commit: () => api.delete(`/v1/precious/${encodeURIComponent(item.id)}`), restore: () => (card.hidden = false) });
            }, class: "button button-small button-danger" })));
        return card;
      }) : [emptyState(t("precious.empty"), t("precious.emptyHint"))]));
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }
  append(container, h("section", { class: "card" }, form), list);
  load();
}

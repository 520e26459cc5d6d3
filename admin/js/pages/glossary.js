// Glossary: your own words (term, aliases, definition); recall spots them in messages.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { t } from "../i18n.js";
import { button, emptyState, errorBox, field, modal, safely, spinner, toast, undoable } from "../ui.js";

function entryForm(entry, done) {
  const term = h("input", { type: "text", name: "term", value: entry?.term || "", required: true, maxlength: 100 });
  const aliases = h("input", { type: "text", name: "aliases", value: (entry?.aliases || []).join(", "), placeholder: t("common.commaSeparated") });
  const definition = h("textarea", { name: "definition", rows: 3, value: entry?.definition || "" });
  return h("form", {
    class: "form",
    onsubmit: safely(async (event) => {
      event.preventDefault();
      const body = { term: term.value.trim(), aliases: aliases.value.split(/[,，、]/).map((a) => a.trim()).filter(Boolean), definition: definition.value.trim() };
      if (!body.term) return;
      if (entry) await api.patch(`/v1/glossary/${encodeURIComponent(entry.id)}`, body);
      else await api.post("/v1/glossary", { ...body, namespace: ns() });
      toast(t("common.saved"), { kind: "ok" });
      done();
    }),
  }, field(t("glossary.term"), term), field(t("glossary.aliases"), aliases), field(t("glossary.definition"), definition),
  h("div", { class: "form-actions" }, button(t("common.save"), { kind: "primary", type: "submit" })));
}

export function render(container) {
  const list = h("div", { class: "list", id: "glossary-list" });
  const edit = (entry) => {
    const sheet = modal(entry ? t("glossary.edit", { term: entry.term }) : t("glossary.new"));
    append(sheet.body, entryForm(entry, () => { sheet.close(); load(); }));
  };
  async function load() {
    append(clear(list), spinner());
    try {
      const { glossary } = await api.get("/v1/glossary", { namespace: ns() });
      append(clear(list), ...(glossary.length ? glossary.map((entry) => {
        const card = h("article", { class: "item", dataset: { id: entry.id } },
          h("div", { class: "row" }, h("h3", { translate: "no" }, entry.term), ...(entry.aliases || []).map((a) => h("span", { class: "chip", translate: "no" }, a))),
          entry.definition ? h("p", { class: "content", translate: "no" }, entry.definition) : null,
          h("div", { class: "row" }, h("span", { class: "spacer" }),
            button(t("common.edit"), { class: "button button-small", "aria-label": t("glossary.editNamed", { term: entry.term }), onclick: () => edit(entry) }),
            button(t("common.delete"), { class: "button button-small button-danger", "aria-label": t("glossary.deleteNamed", { term: entry.term }), onclick: () => {
              card.hidden = true;
              undoable(t("glossary.deleted", { term: entry.term }), { commit: () => api.delete(`/v1/glossary/${encodeURIComponent(entry.id)}`), restore: () => (card.hidden = false) });
            } })));
        return card;
      }) : [emptyState(t("glossary.empty"), t("glossary.emptyHint"))]));
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }
  append(container, h("div", { class: "row" }, h("span", { class: "spacer" }), button(t("glossary.new"), { kind: "primary", iconName: "plus", onclick: () => edit(null) })), list);
  load();
}

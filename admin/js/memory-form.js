// The form to write a memory: new, edit, or a new version (supersede).
import { h } from "./dom.js";
import { TYPES, label, suggestFactKey } from "./format.js";
import { num, t } from "./i18n.js";
import { button, field } from "./ui.js";

/** ``mode`` is "new", "edit" or "supersede"; ``submit(values)`` does the call. */
export function memoryForm(mode, memory, submit, cancel) {
  const m = memory || {};
  const content = h("textarea", { name: "content", required: true, rows: 4, maxlength: 20000, value: mode === "supersede" ? "" : m.content || "",
    placeholder: t(mode === "supersede" ? "memoryForm.contentNowPlaceholder" : "memoryForm.contentPlaceholder") });
  const type = h("select", { name: "type" }, TYPES.map((value) => h("option", { value, selected: value === (m.type || "note") }, label("types", value))));
  const factKey = h("input", { type: "text", name: "fact_key", value: m.fact_key || "", maxlength: 200, placeholder: t("memoryForm.factKeyPlaceholder"), spellcheck: "false" });
  const importance = h("input", { type: "range", name: "importance", min: 0, max: 1, step: 0.05, value: m.importance ?? 0.5 });
  const importanceValue = h("span", { class: "small muted" }, num(importance.value));
  importance.addEventListener("input", () => (importanceValue.textContent = num(importance.value)));
  const tags = h("input", { type: "text", name: "tags", value: (m.tags || []).join(", "), placeholder: t("common.commaSeparated") });
  const pinned = h("input", { type: "checkbox", name: "pinned", checked: Boolean(m.pinned) });
  // A plan's last day; a plan written elsewhere with a time keeps it unless a day is picked.
  const validTo = h("input", { type: "date", name: "valid_to", value: /^\d{4}-\d{2}-\d{2}$/.test(m.valid_to || "") ? m.valid_to : "" });
  const validToField = field(t("memoryForm.until"), validTo, t("memoryForm.untilHint"));
  const showValidTo = () => (validToField.hidden = type.value !== "plan");
  type.addEventListener("change", showValidTo);
  showValidTo();
  const error = h("p", { class: "notice notice-error", hidden: true, role: "alert" });
  const save = button(t(`memoryForm.save.${mode}`), { kind: "primary", type: "submit", iconName: "check" });

  const form = h("form", {
    class: "form",
    onsubmit: async (event) => {
      event.preventDefault();
      const values = {
        content: content.value.trim(),
        type: type.value,
        importance: Number(importance.value),
        tags: tags.value.split(/[,，、]/).map((tag) => tag.trim()).filter(Boolean),
        pinned: pinned.checked,
      };
      if (values.type === "plan" && validTo.value && validTo.value !== m.valid_to) values.valid_to = validTo.value;
      if (!values.content) {
        error.hidden = false;
        error.textContent = t("memoryForm.contentMissing");
        return;
      }
      if (mode !== "edit") values.fact_key = factKey.value.trim() || (mode === "supersede" && m.fact_key) || suggestFactKey(values.type, values.content);
      else if (factKey.value.trim() && factKey.value.trim() !== m.fact_key) values.fact_key = factKey.value.trim();
      save.disabled = true;
      try {
        await submit(values);
      } catch (failure) {
        error.hidden = false;
        error.textContent = failure.message || String(failure);
      } finally {
        save.disabled = false;
      }
    },
  },
  mode === "supersede" ? h("div", { class: "target" }, h("span", { class: "section-label" }, t("memoryForm.current")), h("p", { class: "content diff-old", translate: "no" }, m.content || "")) : null,
  field(t(mode === "supersede" ? "memoryForm.newVersion" : "memoryForm.content"), content),
  h("div", { class: "grid grid-2" }, field(t("memoryForm.type"), type), field(t("memory.factKey"), factKey, mode === "edit" ? null : t("memoryForm.factKeyHint"))),
  validToField,
  field(t("memory.importance"), h("div", { class: "row" }, h("div", { class: "spacer" }, importance), importanceValue)),
  field(t("memoryForm.tags"), tags),
  h("label", { class: "check" }, pinned, t("memoryForm.pinned")),
  error,
  h("div", { class: "form-actions" }, cancel ? button(t("common.cancel"), { kind: "ghost", onclick: cancel }) : null, save));
  return form;
}

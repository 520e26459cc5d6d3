// The form to write a memory: new, edit, or a new version (supersede).
import { h } from "./dom.js";
import { TYPES, suggestFactKey } from "./format.js";
import { button, field } from "./ui.js";

/** ``mode`` is "new", "edit" or "supersede"; ``submit(values)`` does the call. */
export function memoryForm(mode, memory, submit, cancel) {
  const m = memory || {};
  const content = h("textarea", { name: "content", required: true, rows: 4, maxlength: 20000, value: mode === "supersede" ? "" : m.content || "",
    placeholder: mode === "supersede" ? "What is true now" : "What should be remembered" });
  const type = h("select", { name: "type" }, TYPES.map((t) => h("option", { value: t, selected: t === (m.type || "note") }, t)));
  const factKey = h("input", { type: "text", name: "fact_key", value: m.fact_key || "", maxlength: 200, placeholder: "made from the content if left empty", spellcheck: "false" });
  const importance = h("input", { type: "range", name: "importance", min: 0, max: 1, step: 0.05, value: m.importance ?? 0.5 });
  const importanceValue = h("span", { class: "small muted" }, String(importance.value));
  importance.addEventListener("input", () => (importanceValue.textContent = importance.value));
  const tags = h("input", { type: "text", name: "tags", value: (m.tags || []).join(", "), placeholder: "comma, separated" });
  const pinned = h("input", { type: "checkbox", name: "pinned", checked: Boolean(m.pinned) });
  // A plan's last day; a plan written elsewhere with a time keeps it unless a day is picked.
  const validTo = h("input", { type: "date", name: "valid_to", value: /^\d{4}-\d{2}-\d{2}$/.test(m.valid_to || "") ? m.valid_to : "" });
  const validToField = field("Until", validTo, "The plan's last day: after it the plan expires and is no longer recalled.");
  const showValidTo = () => (validToField.hidden = type.value !== "plan");
  type.addEventListener("change", showValidTo);
  showValidTo();
  const error = h("p", { class: "notice notice-error", hidden: true, role: "alert" });
  const save = button({ new: "Save memory", edit: "Save changes", supersede: "Save new version" }[mode], { kind: "primary", type: "submit", iconName: "check" });

  const form = h("form", {
    class: "form",
    onsubmit: async (event) => {
      event.preventDefault();
      const values = {
        content: content.value.trim(),
        type: type.value,
        importance: Number(importance.value),
        tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean),
        pinned: pinned.checked,
      };
      if (values.type === "plan" && validTo.value && validTo.value !== m.valid_to) values.valid_to = validTo.value;
      if (!values.content) {
        error.hidden = false;
        error.textContent = "Write what the memory says.";
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
  mode === "supersede" ? h("div", { class: "target" }, h("span", { class: "section-label" }, "Current version"), h("p", { class: "content diff-old" }, m.content || "")) : null,
  field(mode === "supersede" ? "New version" : "Content", content),
  h("div", { class: "grid grid-2" }, field("Type", type), field("Fact key", factKey, mode === "edit" ? null : "The same key later updates this memory instead of adding another.")),
  validToField,
  field("Importance", h("div", { class: "row" }, h("div", { class: "spacer" }, importance), importanceValue)),
  field("Tags", tags),
  h("label", { class: "check" }, pinned, "Pinned (never expires)"),
  error,
  h("div", { class: "form-actions" }, cancel ? button("Cancel", { kind: "ghost", onclick: cancel }) : null, save));
  return form;
}

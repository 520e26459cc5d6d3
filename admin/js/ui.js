// Shared pieces of interface: toasts, undoable actions, modal sheets, small widgets.
import { append, h, icon, clear } from "./dom.js";
import { label, typeColour } from "./format.js";
import { t } from "./i18n.js";

export const UNDO_MS = 5000;

export function toast(message, { kind = "info", action, ms = 3500 } = {}) {
  const box = document.getElementById("toasts");
  // An error toast says the server's words (its API speaks English): data, not the panel's text.
  const item = h("div", { class: ["toast", `toast-${kind}`] }, h("span", { class: "toast-text", translate: kind === "error" ? "no" : undefined }, message));
  if (action) append(item, h("button", { class: "toast-action", type: "button", onclick: () => { action.run(); item.remove(); } }, action.label));
  append(box, item);
  setTimeout(() => item.remove(), ms);
  return item;
}

const pending = new Set();

/** Do ``commit`` after a few seconds unless the user presses Undo. The view is updated at
 * once by the caller; ``restore`` puts it back. Leaving the page commits at once. */
export function undoable(message, { commit, restore, ms = UNDO_MS }) {
  const box = document.getElementById("toasts");
  let settled = false;
  const entry = { flush: () => finish(true) };
  const bar = h("span", { class: "toast-timer" });
  bar.style.animationDuration = `${ms}ms`;
  const item = h(
    "div",
    { class: "toast toast-undo", "data-undo": "" },
    h("span", { class: "toast-text" }, message),
    h("button", { class: "toast-action", type: "button", onclick: () => finish(false) }, icon("undo", 16), t("common.undo")),
    bar,
  );
  const timer = setTimeout(() => finish(true), ms);
  async function finish(apply) {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    pending.delete(entry);
    item.remove();
    if (!apply) {
      restore?.();
      toast(t("common.undone"));
      return;
    }
    try {
      await commit();
    } catch (error) {
      restore?.();
      toast(error.message || String(error), { kind: "error", ms: 6000 });
    }
  }
  pending.add(entry);
  append(box, item);
  return entry;
}

export function flushPending() {
  for (const entry of [...pending]) entry.flush();
}
window.addEventListener("pagehide", flushPending);

/** A modal sheet (bottom sheet on a phone, dialog on a desktop). Returns {body, close}. */
export function modal(title, { onClose, wide = false } = {}) {
  const root = document.getElementById("modal-root");
  const body = h("div", { class: "sheet-body" });
  const previous = document.activeElement;
  const close = () => {
    backdrop.remove();
    document.removeEventListener("keydown", onKey);
    onClose?.();
    previous?.focus?.();
  };
  const onKey = (event) => {
    if (root.lastElementChild !== backdrop) return; // a sheet opened on top of this one has the keys
    if (event.key === "Escape") close();
    // Tab stays inside the sheet (aria-modal): from its last control back to its first.
    else if (event.key === "Tab") {
      const controls = [...sheet.querySelectorAll("a[href], button, input, select, textarea, [tabindex]")]
        .filter((c) => !c.disabled && c.tabIndex >= 0 && c.getClientRects().length);
      const [first, last] = [controls[0], controls[controls.length - 1]];
      if (event.shiftKey ? document.activeElement === first || !sheet.contains(document.activeElement) : document.activeElement === last) {
        event.preventDefault();
        (event.shiftKey ? last : first)?.focus();
      }
    }
  };
  const heading = h("h2", { class: "sheet-title", id: `sheet-${Date.now()}` }, title);
  const sheet = h(
    "div",
    { class: ["sheet", wide && "sheet-wide"], role: "dialog", "aria-modal": "true", "aria-labelledby": heading.id },
    h("header", { class: "sheet-head" }, heading,
      h("button", { class: "icon-button", type: "button", "aria-label": t("common.close"), onclick: close }, icon("close"))),
    body,
  );
  // A press that starts in the sheet (selecting an id to copy) and ends outside it must not close it.
  let pressedOutside = false;
  const backdrop = h("div", {
    class: "backdrop",
    onpointerdown: (e) => (pressedOutside = e.target === backdrop),
    onclick: (e) => e.target === backdrop && pressedOutside && close(),
  }, sheet);
  document.addEventListener("keydown", onKey);
  append(root, backdrop);
  // The first field takes the focus on the next frame, unless one of the sheet's own has it
  // by then: a click into a field as the sheet opened must not send the typing elsewhere.
  requestAnimationFrame(() => {
    if (!sheet.contains(document.activeElement)) (sheet.querySelector("input, textarea, select") || sheet.querySelector("button"))?.focus();
  });
  return { body, close, setTitle: (text) => (heading.textContent = text) };
}

export function typeChip(type) {
  const chip = h("span", { class: "chip type-chip", dataset: { type } }, label("types", type));
  chip.style.setProperty("--type", typeColour(type));
  return chip;
}

// A memory's layer; its reason shows on hover (and in full in the memory's sheet).
export function layerChip(memory) {
  return h("span", { class: "chip chip-layer", dataset: { layer: memory.layer }, title: memory.layer_reason || "" }, label("layers", memory.layer));
}

export function spinner(text = t("common.loading")) {
  return h("div", { class: "loading", role: "status" }, h("span", { class: "spin" }), text);
}

export function emptyState(title, text, ...actions) {
  return h("div", { class: "empty" }, h("p", { class: "empty-title" }, title), text ? h("p", {}, text) : null, actions);
}

export function errorBox(error, retry) {
  return h(
    "div",
    { class: "error-box", role: "alert" },
    h("p", { translate: "no" }, error.message || String(error)),
    retry ? h("button", { class: "button", type: "button", onclick: retry }, t("common.tryAgain")) : null,
  );
}

/** Run ``load`` into ``target`` with a spinner, and an error box with a retry button. */
export async function loadInto(target, load) {
  append(clear(target), spinner());
  try {
    const content = await load();
    append(clear(target), ...[content].flat().filter(Boolean));
  } catch (error) {
    if (error.status === 401) return;
    append(clear(target), errorBox(error, () => loadInto(target, load)));
  }
}

export function pageHeader(title, subtitle, ...actions) {
  return h(
    "header",
    { class: "page-head" },
    h("div", {}, h("h1", {}, title), subtitle ? h("p", { class: "subtitle" }, subtitle) : null),
    actions.length ? h("div", { class: "page-actions" }, actions) : null,
  );
}

export function button(label, { kind = "", iconName, onclick, type = "button", ...rest } = {}) {
  return h("button", { class: ["button", kind && `button-${kind}`], type, onclick, ...rest }, iconName ? icon(iconName, 18) : null, label);
}

export function field(label, control, hint) {
  return h("label", { class: "field" }, h("span", { class: "field-label" }, label), control, hint ? h("span", { class: "field-hint" }, hint) : null);
}

/** A segmented control; ``onChange`` gets the chosen value. */
export function segmented(options, current, onChange, label) {
  const group = h("div", { class: "segmented", role: "tablist", "aria-label": label });
  for (const [value, text] of options) {
    append(group, 
      h("button", {
        type: "button", role: "tab", class: "segment", "aria-selected": String(value === current), dataset: { value },
        onclick: () => {
          group.querySelectorAll(".segment").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.value === value)));
          onChange(value);
        },
      }, text),
    );
  }
  return group;
}

/** A progress bar; ``show(done, total, finished)`` moves it (an empty total shows it full). */
export function progressBar(id, label) {
  const fill = h("div", { class: "progress-fill" });
  const bar = h("div", { class: "progress", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": 0, "aria-label": label, id }, fill);
  const show = (done, total, finished = false) => {
    const value = total ? Math.min(100, Math.round((done / total) * 100)) : 100;
    fill.style.width = `${value}%`;
    bar.setAttribute("aria-valuenow", String(value));
    bar.dataset.done = String(finished);
  };
  return [bar, show];
}

/** Disable a button while ``work`` runs. */
export async function busy(buttonElement, work) {
  buttonElement.disabled = true;
  buttonElement.classList.add("is-busy");
  try {
    return await work();
  } finally {
    buttonElement.disabled = false;
    buttonElement.classList.remove("is-busy");
  }
}

/** An event handler that reports a failure as a toast instead of losing it. */
export function safely(handler) {
  return async (...args) => {
    try {
      await handler(...args);
    } catch (error) {
      if (error.status !== 401) toast(error.message || String(error), { kind: "error", ms: 6000 });
    }
  };
}

/** Hand ``text`` to the browser as a file download named ``name``. */
export function saveFile(name, text, type) {
  const link = h("a", { href: URL.createObjectURL(new Blob([text], { type })), download: name });
  append(document.body, link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

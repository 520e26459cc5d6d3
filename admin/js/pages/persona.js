// Her persona: the six knobs around their baseline, a step up or down with a reason (the
// owner's key), revert one or all, and every change. The summary comes from the server in
// the panel's language; a tune the brakes hold says which brake and by how much.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { currentLanguage, num, section, when } from "../i18n.js";
import { button, busy, emptyState, errorBox, field, spinner, toast } from "../ui.js";

const s = section("persona");
const STEP = 0.05;
const value = (n) => num(n, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const signed = (n) => num(n, { minimumFractionDigits: 2, maximumFractionDigits: 2, signDisplay: "exceptZero" });
const language = () => (currentLanguage().startsWith("zh") ? "zh" : "en");

/** The brakes that held a tune, in the panel's words. */
function held(error) {
  const brakes = error.details?.brakes || [];
  if (error.code !== "persona_brake" || !brakes.length) return error.message;
  const words = brakes.map((b) =>
    b.brake === "step" ? s("brakeStep", { limit: value(b.limit), over: value(b.over) })
      : b.brake === "daily" ? s("brakeDaily", { when: when(b.next_tune_at) })
        : s("brakeDrift", { limit: value(b.limit), over: value(b.over) }));
  return s("held", { brakes: words.join(s("brakeJoin")) });
}

function knobRow(knob, act) {
  const fill = h("span", { class: "bar-fill persona-fill" });
  fill.style.width = `${Math.round(knob.value * 100)}%`;
  const mark = h("span", { class: "persona-baseline", title: s("baseline", { value: value(knob.baseline) }) });
  mark.style.left = `${Math.round(knob.baseline * 100)}%`;
  return h("article", { class: "item persona-knob", dataset: { knob: knob.name } },
    h("div", { class: "row" },
      h("h3", {}, s(`knobs.${knob.name}`)),
      h("span", { class: "chip", translate: "no", dataset: { lean: knob.name } }, knob.lean),
      h("span", { class: "spacer" }),
      h("span", { class: "persona-value", dataset: { value: knob.name } }, value(knob.value)),
      knob.drift ? h("span", { class: "muted small" }, s("drift", { drift: signed(knob.drift) })) : null),
    h("div", { class: "bar-track persona-track" }, fill, mark),
    h("div", { class: "row" },
      knob.next_tune_at ? h("span", { class: "muted small" }, s("nextTune", { when: when(knob.next_tune_at) })) : null,
      h("span", { class: "spacer" }),
      button(s("lower"), { class: "button button-small", "aria-label": s("lowerNamed", { knob: s(`knobs.${knob.name}`) }), dataset: { tune: "down" }, onclick: (e) => act(e.currentTarget, "tune", knob.name, -STEP) }),
      button(s("raise"), { class: "button button-small", "aria-label": s("raiseNamed", { knob: s(`knobs.${knob.name}`) }), dataset: { tune: "up" }, onclick: (e) => act(e.currentTarget, "tune", knob.name, STEP) }),
      knob.drift ? button(s("revert"), { class: "button button-small button-ghost", dataset: { revert: knob.name }, onclick: (e) => act(e.currentTarget, "revert", knob.name) }) : null));
}

function changeRow(change) {
  return h("div", { class: "plan-row persona-change", dataset: { kind: change.kind } },
    h("span", { class: "chip chip-kind" }, s(`kinds.${change.kind}`)),
    h("strong", {}, s(`knobs.${change.knob}`)),
    h("span", {}, s("fromTo", { before: value(change.value_before), after: value(change.value_after) })),
    h("span", { class: "content", translate: "no" }, change.reason),
    h("span", { class: "spacer" }),
    h("span", { class: "muted small" }, when(change.changed_at)));
}

export function render(container) {
  const reason = h("input", { type: "text", name: "personaReason", maxlength: 500, placeholder: s("reasonPlaceholder") });
  const summary = h("div", { class: "card persona-summary", id: "persona-summary" });
  const knobs = h("div", { class: "list", id: "persona-knobs" });
  const history = h("div", { class: "card", id: "persona-history" });

  async function act(control, kind, knob, delta) {
    const why = reason.value.trim();
    if (!why) {
      toast(s("reasonNeeded"), { kind: "error" });
      reason.focus();
      return;
    }
    const body = kind === "tune" ? { namespace: ns(), knob, delta, reason: why } : { namespace: ns(), reason: why, ...(knob ? { knob } : {}) };
    try {
      await busy(control, () => api.post(`/v1/persona/${kind}`, body));
      toast(kind === "tune" ? s("tuned") : s("reverted"), { kind: "ok" });
      reason.value = "";
      load();
    } catch (error) {
      if (error.status !== 401) toast(held(error), { kind: "error", ms: 8000 });
    }
  }

  async function load() {
    append(clear(knobs), spinner());
    try {
      const [state, changes] = await Promise.all([
        api.get("/v1/persona", { namespace: ns(), language: language() }),
        api.get("/v1/persona/history", { namespace: ns(), limit: 20 }),
      ]);
      append(clear(summary),
        h("div", { class: "card-head" }, h("h2", {}, s("summaryTitle")),
          state.tuned ? button(s("revertAll"), { class: "button button-small", id: "persona-revert-all", onclick: (e) => act(e.currentTarget, "revert") }) : null),
        state.tuned ? h("p", { class: "content-large", translate: "no", id: "persona-summary-text" }, state.summary) : h("p", { class: "muted" }, s("atBaseline")),
        h("p", { class: "muted small" }, s("notMemory")));
      append(clear(knobs), ...state.knobs.map((k) => knobRow(k, act)));
      append(clear(history), h("h2", {}, s("historyTitle")),
        changes.changes.length ? h("div", {}, ...changes.changes.map(changeRow)) : emptyState(s("noChanges"), s("noChangesHint")));
    } catch (error) {
      if (error.status !== 401) append(clear(knobs), errorBox(error, load));
    }
  }

  append(container, summary, field(s("reason"), reason, s("brakes")), knobs, history);
  load();
}

// Plans: a plan's badge (its status and the day it is good until) and the buttons that
// mark it done or abandoned.
import { api } from "./api.js";
import { h } from "./dom.js";
import { label, longDate, when } from "./format.js";
import { t } from "./i18n.js";
import { button, safely, toast } from "./ui.js";

/** "until Sunday, December 6, 2026" for a day, the local time for a moment, "no end date" for none. */
export function until(validTo) {
  if (!validTo) return t("plans.noEnd");
  return t("plans.until", { date: /^\d{4}-\d{2}-\d{2}$/.test(validTo) ? longDate(validTo) : when(validTo) });
}

export function planBadge(memory) {
  return h("span", { class: "chip chip-plan", dataset: { planStatus: memory.plan_status } },
    t("plans.badge", { status: label("planStatuses", memory.plan_status), until: until(memory.valid_to) }));
}

/** Done and Abandon for an active plan; ``after(status)`` runs once the server agreed. */
export function planButtons(memory, after) {
  if (memory.plan_status !== "active") return [];
  const close = (status, path, message) => button(t(status === "done" ? "common.done" : "common.abandon"), {
    kind: status === "done" ? "primary" : "ghost",
    iconName: status === "done" ? "check" : "close",
    dataset: { planAction: status },
    onclick: safely(async () => {
      await api.post(`/v1/plans/${encodeURIComponent(memory.id)}/${path}`);
      toast(message, { kind: "ok" });
      after(status);
    }),
  });
  return [close("done", "done", t("plans.doneToast")), close("abandoned", "abandon", t("plans.abandonedToast"))];
}

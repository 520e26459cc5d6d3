// Review queue: each candidate the dream proposed, with the words it came from and the
// memory it would change. Approve is one click; discard, merge and supersede are one
// click too, with a few seconds to undo before they are sent. A contradiction shows the
// older and the newer memory and asks which one stands: the newer (approve), the older
// (discard), or both (the contradicts edge is removed). Memories other namespaces share
// into this one (or this one into others) wait above the candidates (shares.js), and so do
// the proposals about people (new people, merges: pages/people.js).
import { api, ns } from "../api.js";
import { refreshPendingBadge } from "../badge.js";
import { append, clear, h, icon } from "../dom.js";
import { label, percent, when } from "../format.js";
import { t } from "../i18n.js";
import { openMemory } from "../memory-view.js";
import { until } from "../plans.js";
import { sharesSection } from "../shares.js";
import { proposalsSection } from "./people.js";
import { button, emptyState, errorBox, modal, pageHeader, safely, segmented, spinner, toast, typeChip, undoable } from "../ui.js";

const STATUSES = ["pending", "approved", "merged", "superseded", "discarded"];

function targetBox(candidate) {
  const heading = t(candidate.kind === "delete" ? "review.wouldArchive" : "review.wouldChange");
  return memoryBox(candidate.target_memory_id, heading, candidate.kind !== "add" ? "diff-old" : null);
}

function memoryBox(id, heading, contentClass) {
  const box = h("div", { class: "target", dataset: { target: id } },
    h("span", { class: "section-label" }, heading),
    h("p", { class: "content muted" }, t("common.loading")));
  api.get(`/v1/memories/${encodeURIComponent(id)}`).then(({ memory }) => {
    append(clear(box),
      h("span", { class: "section-label" }, heading),
      h("p", { class: ["content", contentClass, "target-content"], translate: "no" }, memory.content),
      h("div", { class: "item-meta" }, typeChip(memory.type), memory.status !== "active" ? h("span", { class: "chip chip-status", dataset: { status: memory.status } }, label("statuses", memory.status)) : null,
        memory.fact_key ? h("span", { class: "mono", translate: "no" }, memory.fact_key) : null,
        h("button", { class: "button button-small button-ghost", type: "button", onclick: () => openMemory(memory.id) }, t("common.open"))));
  }).catch((error) => {
    append(clear(box), h("span", { class: "section-label" }, t("review.targetMemory")), h("p", { class: "small muted", translate: "no" }, error.message));
  });
  return box;
}

/** Two memories that cannot both hold: the older one, and the newer (stored, or from the dream's messages). */
function contradictionPair(candidate) {
  return h("div", { class: "stack contradiction" },
    h("p", { class: "content content-large contradiction-question" }, t("review.whichStands")),
    memoryBox(candidate.target_memory_id, t("review.older"), null),
    candidate.result_memory_id
      ? memoryBox(candidate.result_memory_id, t("review.newer"), null)
      : h("div", { class: "target" }, h("span", { class: "section-label" }, t("review.newerFromMessages")),
          h("p", { class: "content candidate-content", translate: "no" }, candidate.content)));
}

/** Choose the memory a candidate is merged into or replaces. */
function pickTarget(candidate, verb) {
  return new Promise((resolve) => {
    let chosen = null;
    const sheet = modal(t(`review.choose.${verb}`), { onClose: () => resolve(chosen) });
    const results = h("div", { class: "list" });
    const input = h("input", { type: "search", placeholder: t("common.searchMemoriesPlaceholder"), value: candidate.content.slice(0, 80), "aria-label": t("common.searchMemories") });
    async function find() {
      append(clear(results), spinner());
      try {
        const hits = input.value.trim()
          ? (await api.post("/v1/memory/search", { query: input.value.trim(), namespace: ns(), k: 10 })).hits
          : (await api.get("/v1/memories", { namespace: ns(), limit: 20 })).memories;
        append(clear(results), ...(hits.length ? hits.map((m) =>
          h("button", { class: "item", type: "button", onclick: () => { chosen = m; sheet.close(); } },
            h("div", { class: "item-meta" }, typeChip(m.type), m.fact_key ? h("span", { class: "mono", translate: "no" }, m.fact_key) : null),
            h("p", { class: "content clamp", translate: "no" }, m.content)))
          : [emptyState(t("review.noMatch"), t("review.noMatchHint"))]));
      } catch (error) {
        append(clear(results), errorBox(error, find));
      }
    }
    append(sheet.body, h("form", { class: "search-bar", onsubmit: (e) => { e.preventDefault(); find(); } }, input, button(t("common.search"), { iconName: "search", type: "submit" })), results);
    find();
  });
}

function candidateCard(candidate, pending, remove, restore) {
  const card = h("article", { class: "item candidate", dataset: { id: candidate.id, kind: candidate.kind } });
  const path = (verb) => `/v1/candidates/${encodeURIComponent(candidate.id)}/${verb}`;

  const approve = safely(async () => {
    approveButton.disabled = true;
    try {
      const answer = await api.post(path("approve"));
      remove(card);
      toast(t("review.approved", { action: label("approveActions", answer.action) }), {
        kind: "ok", ms: 5000,
        action: answer.memory ? { label: t("common.open"), run: () => openMemory(answer.memory.id) } : undefined,
      });
    } finally {
      approveButton.disabled = false;
    }
  });

  function later(message, send) {
    remove(card);
    undoable(message, { commit: async () => { await send(); refreshPendingBadge(); }, restore: () => restore(card) });
  }

  async function withTarget(verb) {
    const target = candidate.target_memory_id ? { id: candidate.target_memory_id } : await pickTarget(candidate, verb);
    if (!target) return;
    later(t(`review.into.${verb}`), () => api.post(path(verb), { target_id: target.id }));
  }

  const contradiction = candidate.kind === "contradiction";
  const approveButton = button(t(contradiction ? "review.keepNewer" : "review.approve"), { kind: "ok", iconName: "check", onclick: approve, dataset: { action: "approve" } });
  // Both stand: the contradicts edge goes, which closes the question (only a stored pair has one).
  async function bothStand() {
    const newer = encodeURIComponent(candidate.result_memory_id);
    const { relations } = await api.get(`/v1/memories/${newer}`);
    const edge = relations.find((r) => r.relation === "contradicts" && r.target_id === candidate.target_memory_id);
    if (edge) await api.delete(`/v1/memories/${newer}/relations/${encodeURIComponent(edge.id)}`);
  }
  const decisions = contradiction
    ? [approveButton,
        button(t("review.keepOlder"), { iconName: "undo", dataset: { action: "discard" }, onclick: () => later(t("review.keptOlder"), () => api.post(path("discard"))) }),
        candidate.result_memory_id
          ? button(t("review.bothStand"), { kind: "ghost", iconName: "check", dataset: { action: "both" }, onclick: () => later(t("review.bothStood"), bothStand) })
          : null]
    : [approveButton,
        button(t(candidate.target_memory_id ? "review.merge" : "review.mergeChoose"), { iconName: "merge", dataset: { action: "merge" }, onclick: safely(() => withTarget("merge")) }),
        button(t(candidate.target_memory_id ? "review.supersede" : "review.supersedeChoose"), { iconName: "swap", dataset: { action: "supersede" }, onclick: safely(() => withTarget("supersede")) }),
        button(t("review.discard"), { kind: "danger", iconName: "trash", dataset: { action: "discard" }, onclick: () => later(t("review.discarded"), () => api.post(path("discard"))) })];
  append(card, 
    h("div", { class: "item-meta" },
      h("span", { class: "chip chip-kind", dataset: { kind: candidate.kind } }, label("kinds", candidate.kind)),
      typeChip(candidate.type),
      candidate.type === "plan" ? h("span", { class: "chip chip-plan", dataset: { planStatus: "active" } }, until(candidate.valid_to)) : null,
      h("span", {}, t("review.confidence", { value: percent(candidate.confidence) })),
      h("span", { class: "spacer" }), h("span", {}, when(candidate.created_at))),
    contradiction ? contradictionPair(candidate) : h("p", { class: "content content-large candidate-content", translate: "no" }, candidate.content),
    candidate.fact_key && !contradiction ? h("p", { class: "mono muted", translate: "no" }, candidate.fact_key) : null,
    candidate.evidence.length
      ? h("div", { class: "stack" }, h("span", { class: "section-label" }, icon("quote", 14), t("memory.fromMessages")),
          candidate.evidence.map((e) => h("blockquote", { class: "quote candidate-quote", translate: "no" }, e.quote)))
      : null,
    candidate.target_memory_id && !contradiction ? targetBox(candidate) : null,
    candidate.reason ? h("p", { class: "small muted", translate: "no" }, candidate.reason) : null,
    pending
      ? h("div", { class: "actions" }, ...decisions)
      : candidate.result_memory_id
        ? h("div", { class: "actions" }, button(t("review.openMemory"), { onclick: () => openMemory(candidate.result_memory_id) }))
        : null,
  );
  return card;
}

export function render(container) {
  let status = "pending";
  const list = h("div", { class: "list", id: "candidate-list" });
  const summary = h("p", { class: "subtitle", id: "review-summary" });
  const more = h("div", { class: "pager" });

  function updateSummary() {
    const shown = list.querySelectorAll(".candidate:not([hidden])").length;
    summary.textContent = t(`review.summary.${status}`, { count: shown });
    if (status === "pending" && shown === 0 && !list.querySelector(".empty")) {
      append(list, emptyState(t("review.caughtUp"), t("review.caughtUpHint"),
        h("a", { class: "button", href: "#/more/maintenance" }, t("review.runDream"))));
    }
  }
  const remove = (card) => { card.hidden = true; updateSummary(); };
  const restore = (card) => { card.hidden = false; list.querySelector(".empty")?.remove(); updateSummary(); };

  async function load(cursor = null) {
    if (!cursor) append(clear(list), spinner());
    clear(more);
    try {
      const page = await api.get("/v1/candidates", { namespace: ns(), status, limit: 50, cursor });
      if (!cursor) clear(list);
      append(list, ...page.candidates.map((c) => candidateCard(c, status === "pending", (card) => { remove(card); refreshPendingBadge(); }, restore)));
      if (page.next_cursor) append(more, button(t("review.loadMore"), { onclick: () => load(page.next_cursor) }));
      if (!page.candidates.length && !cursor && status !== "pending") append(list, emptyState(t(`review.none.${status}`)));
      updateSummary();
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, () => load()));
    }
  }

  const shares = sharesSection();
  const people = proposalsSection();
  people.reload().catch(() => {});  // the candidates below report a failure to reach the server
  append(container, 
    pageHeader(t("review.title"), null, button(t("review.refresh"), { kind: "ghost", iconName: "refresh", onclick: () => { load(); shares.reload(); people.reload(); refreshPendingBadge(); } })),
    shares.element,
    people.element,
    summary,
    segmented(STATUSES.map((value) => [value, t(`review.statuses.${value}`)]), status, (value) => { status = value; load(); }, t("review.statusLabel")),
    list, more,
  );
  load();
}

// Shared memories: a memory of one namespace proposed into another (a bot's into
// 'default'). The Review page lists the open shares of the namespace, proposals to approve
// or reject and approved ones to revoke; a memory's sheet offers "Share to…".
import { api, ns } from "./api.js";
import { refreshPendingBadge } from "./badge.js";
import { append, clear, h } from "./dom.js";
import { when } from "./format.js";
import { button, field, modal, safely, toast, typeChip } from "./ui.js";

const path = (share, verb) => `/v1/shares/${encodeURIComponent(share.id)}/${verb}`;

/** The shared memory's words, loaded into the card (it may live in another namespace). */
function sharedMemory(share) {
  const box = h("p", { class: "content share-content muted" }, "Loading…");
  api.get(`/v1/memories/${encodeURIComponent(share.memory_id)}`).then(({ memory }) => {
    box.classList.remove("muted");
    append(clear(box), memory.content);
  }).catch((error) => { box.textContent = error.message; });
  return box;
}

function shareCard(share, reload) {
  const decide = (verb, message) => safely(async () => {
    await api.post(path(share, verb));
    toast(message, { kind: "ok" });
    reload();
    refreshPendingBadge();
  });
  const proposed = share.status === "proposed";
  return h("article", { class: "item share", dataset: { id: share.id, status: share.status } },
    h("div", { class: "item-meta" },
      h("span", { class: "chip chip-status", dataset: { status: share.status } }, share.status),
      h("span", { class: "share-route" }, `${share.source_namespace} → ${share.target_namespace}`),
      h("span", {}, `by ${share.proposed_by}`),
      h("span", { class: "spacer" }), h("span", {}, when(share.updated_at))),
    sharedMemory(share),
    share.note ? h("p", { class: "small muted" }, share.note) : null,
    h("div", { class: "actions" },
      proposed ? button("Approve", { kind: "ok", iconName: "check", dataset: { action: "approve" }, onclick: decide("approve", `Shared into ${share.target_namespace}.`) }) : null,
      proposed ? button("Reject", { kind: "danger", iconName: "close", dataset: { action: "reject" }, onclick: decide("reject", "Share rejected.") }) : null,
      !proposed ? button("Revoke", { kind: "danger", iconName: "undo", dataset: { action: "revoke" }, onclick: decide("revoke", `No longer shared into ${share.target_namespace}.`) }) : null));
}

/** The open shares out of and into the current namespace; nothing while there are none. */
export function sharesSection() {
  const section = h("section", { class: "stack", id: "shares", hidden: true });
  async function load() {
    try {
      const { shares } = await api.get("/v1/shares", { namespace: ns() });
      const waiting = shares.filter((s) => s.status === "proposed").length;
      append(clear(section),
        h("h2", { class: "section-label" }, waiting ? `Shared memories · ${waiting} waiting` : "Shared memories"),
        h("div", { class: "list" }, shares.map((s) => shareCard(s, load))));
      section.hidden = shares.length === 0;
    } catch (error) {
      if (error.status !== 401) toast(error.message, { kind: "error" });
    }
  }
  load();
  return { element: section, reload: load };
}

/** "Share to…": propose this memory into another namespace (the owner's panel may approve at once). */
export function shareButton(memory) {
  return button("Share to…", {
    iconName: "merge",
    onclick: () => {
      const sheet = modal("Share to another namespace");
      const target = h("input", { name: "target", required: true, value: memory.namespace === "default" ? "" : "default", placeholder: "default", autocomplete: "off" });
      const note = h("input", { name: "note", maxlength: 2000, placeholder: "Why it matters there (optional)" });
      append(sheet.body, h("form", {
        class: "stack",
        onsubmit: safely(async (event) => {
          event.preventDefault();
          const share = await api.post("/v1/shares", { memory_id: memory.id, target_namespace: target.value.trim(), note: note.value.trim() || null });
          sheet.close();
          toast(`Proposed for ${share.target_namespace}; it is recalled there once approved.`, {
            kind: "ok", ms: 6000,
            action: { label: "Approve now", run: safely(async () => { await api.post(path(share, "approve")); toast("Shared.", { kind: "ok" }); }) },
          });
        }),
      },
      h("div", { class: "row" }, typeChip(memory.type), h("span", { class: "small muted" }, `from ${memory.namespace}`)),
      field("Namespace", target, "Where it should be recalled too; it stays in its own namespace."),
      field("Note", note),
      h("div", { class: "actions" }, button("Propose", { kind: "primary", type: "submit" }))));
    },
  });
}

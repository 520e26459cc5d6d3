// Shared memories: a memory of one namespace proposed into another (a bot's into
// 'default'). The Review page lists the open shares of the namespace, proposals to approve
// or reject and approved ones to revoke; a memory's sheet offers "Share to…".
import { api, ns } from "./api.js";
import { refreshPendingBadge } from "./badge.js";
import { append, clear, h } from "./dom.js";
import { label, when } from "./format.js";
import { t } from "./i18n.js";
import { button, field, modal, safely, toast, typeChip } from "./ui.js";

const path = (share, verb) => `/v1/shares/${encodeURIComponent(share.id)}/${verb}`;

/** The shared memory's words, loaded into the card (it may live in another namespace). */
function sharedMemory(share) {
  const box = h("p", { class: "content share-content muted", translate: "no" }, t("common.loading"));
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
      h("span", { class: "chip chip-status", dataset: { status: share.status } }, label("shareStatuses", share.status)),
      h("span", { class: "share-route", translate: "no" }, `${share.source_namespace} → ${share.target_namespace}`),
      h("span", {}, t("shares.by", { who: share.proposed_by })),
      h("span", { class: "spacer" }), h("span", {}, when(share.updated_at))),
    sharedMemory(share),
    share.note ? h("p", { class: "small muted", translate: "no" }, share.note) : null,
    h("div", { class: "actions" },
      proposed ? button(t("shares.approve"), { kind: "ok", iconName: "check", dataset: { action: "approve" }, onclick: decide("approve", t("shares.approved", { namespace: share.target_namespace })) }) : null,
      proposed ? button(t("shares.reject"), { kind: "danger", iconName: "close", dataset: { action: "reject" }, onclick: decide("reject", t("shares.rejected")) }) : null,
      !proposed ? button(t("shares.revoke"), { kind: "danger", iconName: "undo", dataset: { action: "revoke" }, onclick: decide("revoke", t("shares.revoked", { namespace: share.target_namespace })) }) : null));
}

/** The open shares out of and into the current namespace; nothing while there are none. */
export function sharesSection() {
  const section = h("section", { class: "stack", id: "shares", hidden: true });
  async function load() {
    try {
      const { shares } = await api.get("/v1/shares", { namespace: ns() });
      const waiting = shares.filter((s) => s.status === "proposed").length;
      append(clear(section),
        h("h2", { class: "section-label" }, waiting ? t("shares.titleWaiting", { count: waiting }) : t("shares.title")),
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
  return button(t("shares.shareTo"), {
    iconName: "merge",
    dataset: { action: "share" },
    onclick: () => {
      const sheet = modal(t("shares.sheetTitle"));
      const target = h("input", { name: "target", required: true, value: memory.namespace === "default" ? "" : "default", placeholder: "default", autocomplete: "off", spellcheck: "false", translate: "no" });
      const note = h("input", { name: "note", maxlength: 2000, placeholder: t("shares.notePlaceholder") });
      append(sheet.body, h("form", {
        class: "stack",
        onsubmit: safely(async (event) => {
          event.preventDefault();
          const share = await api.post("/v1/shares", { memory_id: memory.id, target_namespace: target.value.trim(), note: note.value.trim() || null });
          sheet.close();
          toast(t("shares.proposed", { namespace: share.target_namespace }), {
            kind: "ok", ms: 6000,
            action: { label: t("shares.approveNow"), run: safely(async () => { await api.post(path(share, "approve")); toast(t("shares.shared"), { kind: "ok" }); }) },
          });
        }),
      },
      h("div", { class: "row" }, typeChip(memory.type), h("span", { class: "small muted" }, t("shares.from", { namespace: memory.namespace }))),
      field(t("shares.namespace"), target, t("shares.namespaceHint")),
      field(t("shares.note"), note),
      h("div", { class: "actions" }, button(t("shares.propose"), { kind: "primary", type: "submit" }))));
    },
  });
}

// One memory in a sheet: what it says, where it came from, its relations and history,
// and the actions on it (edit, new version, archive or restore, delete with undo).
import { api, ns } from "./api.js";
import { append, clear, h, icon } from "./dom.js";
import { label, percent, when } from "./format.js";
import { dateTime, num, t, tOr } from "./i18n.js";
import { memoryForm } from "./memory-form.js";
import { planBadge, planButtons } from "./plans.js";
import { shareButton } from "./shares.js";
import { button, errorBox, layerChip, modal, safely, spinner, toast, typeChip, undoable } from "./ui.js";

const HISTORY_DEPTH = 10;

async function history(memory, events) {
  // Older versions: each "created" event of a new version names the one it replaced.
  const versions = [];
  let previous = events.find((e) => e.event === "created" && e.detail && e.detail.supersedes)?.detail.supersedes;
  while (previous && versions.length < HISTORY_DEPTH) {
    try {
      const older = await api.get(`/v1/memories/${encodeURIComponent(previous)}`);
      versions.push(older.memory);
      previous = older.events.find((e) => e.event === "created" && e.detail && e.detail.supersedes)?.detail.supersedes;
    } catch {
      break;
    }
  }
  return versions;
}

// What the nightly consolidation did, each of which the history can undo (once).
const UNDOABLE = new Set(["consolidation_archived", "consolidation_merged", "consolidation_strengthened", "consolidation_edge_dropped"]);

function describeEvent(event) {
  const detail = event.detail || {};
  const extra = detail.reason ? h("span", { translate: "no" }, ` (${detail.reason})`)
    : detail.fields ? h("span", { translate: "no" }, ` (${detail.fields.join(", ")})`)
    : detail.superseded_by ? [" ", t("memory.byNewVersion")]
    : detail.from ? [" ", t("memory.was", { value: detail.from })] : null;
  return [tOr(`memory.events.${event.event}`, event.event), extra, " · ", h("span", { translate: "no" }, event.actor), " · ", when(event.created_at)];
}

/** A value to copy as it is (an id, a fact key, a time stamp): selectable text and a Copy button. */
function copyable(text, shown = text, { mono = true, id } = {}) {
  const copy = h("button", {
    class: "icon-button copy-button", type: "button", "aria-label": t("memory.copy", { value: text }), title: t("common.copy"),
    onclick: safely(async () => {
      await navigator.clipboard.writeText(text);
      toast(t("common.copied"), { kind: "ok" });
    }),
  }, icon("copy", 16));
  return h("dd", { class: "copyable", id }, h("span", { class: mono ? "mono" : undefined, translate: "no" }, shown), copy);
}

const moment = (value) => h("time", { datetime: value, title: value }, dateTime(value));

export function openMemory(id, { onChange } = {}) {
  const sheet = modal(t("memory.title"), { wide: true });
  const changed = (what) => onChange?.(what);
  async function show() {
    append(clear(sheet.body), spinner());
    let data;
    try {
      data = await api.get(`/v1/memories/${encodeURIComponent(id)}`);
    } catch (error) {
      if (error.status !== 401) append(clear(sheet.body), errorBox(error, show));
      return;
    }
    const { memory, relations, events } = data;
    sheet.setTitle(memory.status === "active" ? t("memory.title") : t("memory.titleWithStatus", { status: label("statuses", memory.status) }));
    const versionsBox = h("div", { class: "stack" }, spinner(t("memory.loadingHistory")));
    const relationList = relations.filter((r) => r.relation !== "supersedes");
    const undone = new Set(events.filter((e) => e.event === "consolidation_undone").map((e) => e.detail?.event_id));
    const actions = h("div", { class: "actions" });
    if (memory.status === "active") {
      append(actions, 
        ...(memory.type === "plan" ? planButtons(memory, (status) => { changed(status); show(); }) : []),
        memory.layer === "cold" ? button(t("memory.bringBack"), {
          iconName: "undo",
          onclick: safely(async () => {
            await api.patch(`/v1/memories/${encodeURIComponent(id)}`, { layer: "long" });
            toast(t("memory.backInRecall"), { kind: "ok" });
            changed("restored");
            show();
          }),
        }) : null,
        button(t("common.edit"), { iconName: "edit", dataset: { action: "edit" }, onclick: () => edit("edit") }),
        button(t("memory.newVersion"), { iconName: "swap", dataset: { action: "supersede" }, onclick: () => edit("supersede") }),
        shareButton(memory),
        button(t("memory.archive"), {
          iconName: "archive",
          onclick: safely(async () => {
            await api.post(`/v1/memories/${encodeURIComponent(id)}/archive`);
            toast(t("memory.archived"), { kind: "ok" });
            changed("archived");
            show();
          }),
        }),
      );
    } else if (memory.status === "archived") {
      append(actions, button(t("memory.restore"), {
        iconName: "undo",
        onclick: safely(async () => {
          await api.patch(`/v1/memories/${encodeURIComponent(id)}`, { status: "active" });
          toast(t("memory.restored"), { kind: "ok" });
          changed("restored");
          show();
        }),
      }));
    }
    if (memory.status !== "deleted") {
      append(actions, button(t("common.delete"), {
        kind: "danger", iconName: "trash",
        onclick: () => {
          sheet.close();
          changed({ hide: id });
          undoable(t("memory.deleted"), {
            commit: async () => {
              await api.delete(`/v1/memories/${encodeURIComponent(id)}`);
              changed("deleted");
            },
            restore: () => changed({ show: id }),
          });
        },
      }));
    }

    append(clear(sheet.body), 
      h("div", { class: "row" }, typeChip(memory.type), layerChip(memory),
        h("span", { class: "chip chip-status", dataset: { status: memory.status } }, label("statuses", memory.status)),
        memory.namespace !== ns() ? h("span", { class: "chip chip-namespace", translate: "no" }, memory.namespace) : null,
        memory.type === "plan" ? planBadge(memory) : null,
        memory.pinned ? h("span", { class: "chip chip-pin" }, icon("star", 12), t("memory.pinned")) : null,
        memory.authored_by ? h("span", { class: "chip" }, t("memory.by", { who: memory.authored_by })) : null,
        (memory.tags || []).map((tag) => h("span", { class: "chip", translate: "no" }, `#${tag}`))),
      h("p", { class: "content content-large", id: "memory-content", translate: "no" }, memory.content),
      h("dl", { class: "kv" },
        h("dt", {}, t("memory.factKey")), memory.fact_key ? copyable(memory.fact_key) : h("dd", {}, "—"),
        h("dt", {}, t("memory.layer")), h("dd", { id: "memory-layer" }, label("layers", memory.layer), ": ",
          h("span", { translate: "no" }, memory.layer_reason || "—"),
          memory.layer_at ? [" (", when(memory.layer_at), ")"] : null,
          memory.revivals ? [" · ", t("memory.revived", { count: memory.revivals })] : null),
        h("dt", {}, t("memory.importance")), h("dd", {}, percent(memory.importance)),
        h("dt", {}, t("memory.confidence")), h("dd", {}, percent(memory.confidence)),
        h("dt", {}, t("memory.source")), h("dd", { translate: "no" }, memory.source),
        h("dt", {}, t("memory.recalled")), h("dd", {}, t("memory.recallCount", { count: memory.recall_count }),
          memory.last_injected_at ? [" · ", t("memory.lastRecalled", { when: when(memory.last_injected_at) })] : null),
        h("dt", {}, t("memory.created")), copyable(memory.created_at, moment(memory.created_at), { mono: false, id: "memory-created" }),
        h("dt", {}, t("memory.updated")), copyable(memory.updated_at, moment(memory.updated_at), { mono: false, id: "memory-updated" }),
        h("dt", {}, t("memory.id")), copyable(memory.id, memory.id, { id: "memory-id" })),
      memory.evidence?.length
        ? h("div", { class: "stack" }, h("span", { class: "section-label" }, t("memory.fromMessages")),
            memory.evidence.map((e) => h("blockquote", { class: "quote", translate: "no" }, e.quote, e.message_id ? h("span", { class: "quote-source" }, e.message_id) : null)))
        : null,
      relationList.length
        ? h("div", { class: "stack" }, h("span", { class: "section-label" }, t("memory.relations")),
            relationList.map((r) => {
              const other = r.source_id === id ? r.target_id : r.source_id;
              return h("button", { class: "button button-small button-ghost", type: "button", onclick: () => { sheet.close(); openMemory(other, { onChange }); } },
                r.source_id === id ? "→ " : "← ", label("relations", r.relation), " (", num(r.weight), ")", h("span", { class: "mono muted", translate: "no" }, other.slice(0, 8)));
            }))
        : null,
      h("div", { class: "stack" }, h("span", { class: "section-label" }, t("memory.history")),
        h("ul", { class: "small muted", id: "memory-events" }, events.map((e) => h("li", {}, describeEvent(e),
          UNDOABLE.has(e.event) && !undone.has(e.id) ? button(t("common.undo"), {
            kind: "small", iconName: "undo",
            onclick: safely(async () => {
              await api.post(`/v1/memories/${encodeURIComponent(id)}/events/${e.id}/undo`);
              toast(t("common.undone"), { kind: "ok" });
              changed("undone");
              show();
            }),
          }) : null))),
        versionsBox),
      actions,
    );
    history(memory, events).then((versions) => {
      append(clear(versionsBox), ...versions.map((v) =>
        h("button", { class: "target", type: "button", style: { textAlign: "left", cursor: "pointer", font: "inherit", color: "inherit" },
          onclick: () => { sheet.close(); openMemory(v.id, { onChange }); } },
          h("span", { class: "section-label" }, t("memory.earlierVersion"), " · ", label("statuses", v.status), " · ", when(v.updated_at)),
          h("p", { class: "content diff-old", translate: "no" }, v.content))));
    });

    function edit(mode) {
      append(clear(sheet.body), memoryForm(mode, memory, async (values) => {
        if (mode === "edit") {
          await api.patch(`/v1/memories/${encodeURIComponent(id)}`, values);
          toast(t("common.saved"), { kind: "ok" });
          changed("edited");
          show();
        } else {
          const answer = await api.post(`/v1/memories/${encodeURIComponent(id)}/supersede`, { ...values, namespace: memory.namespace || ns() });
          toast(t("memory.superseded"), { kind: "ok" });
          changed("superseded");
          id = answer.memory.id;
          show();
        }
      }, show));
    }
  }
  show();
  return sheet;
}

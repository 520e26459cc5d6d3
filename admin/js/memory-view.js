// One memory in a sheet: what it says, where it came from, its relations and history,
// and the actions on it (edit, new version, archive or restore, delete with undo).
import { api, ns } from "./api.js";
import { append, clear, h, icon } from "./dom.js";
import { percent, when } from "./format.js";
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
  const extra = detail.reason ? ` (${detail.reason})` : detail.fields ? ` (${detail.fields.join(", ")})` : detail.superseded_by ? " by a new version" : detail.from ? ` (was ${detail.from})` : "";
  return `${event.event}${extra} · ${event.actor} · ${when(event.created_at)}`;
}

export function openMemory(id, { onChange } = {}) {
  const sheet = modal("Memory", { wide: true });
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
    sheet.setTitle(memory.status === "active" ? "Memory" : `Memory (${memory.status})`);
    const versionsBox = h("div", { class: "stack" }, spinner("Loading history…"));
    const relationList = relations.filter((r) => r.relation !== "supersedes");
    const undone = new Set(events.filter((e) => e.event === "consolidation_undone").map((e) => e.detail?.event_id));
    const actions = h("div", { class: "actions" });
    if (memory.status === "active") {
      append(actions, 
        ...(memory.type === "plan" ? planButtons(memory, (status) => { changed(status); show(); }) : []),
        memory.layer === "cold" ? button("Bring back", {
          iconName: "undo",
          onclick: safely(async () => {
            await api.patch(`/v1/memories/${encodeURIComponent(id)}`, { layer: "long" });
            toast("Back in recall.", { kind: "ok" });
            changed("restored");
            show();
          }),
        }) : null,
        button("Edit", { iconName: "edit", onclick: () => edit("edit") }),
        button("New version", { iconName: "swap", onclick: () => edit("supersede") }),
        shareButton(memory),
        button("Archive", {
          iconName: "archive",
          onclick: safely(async () => {
            await api.post(`/v1/memories/${encodeURIComponent(id)}/archive`);
            toast("Archived. Restore it any time from the Archived list.", { kind: "ok" });
            changed("archived");
            show();
          }),
        }),
      );
    } else if (memory.status === "archived") {
      append(actions, button("Restore", {
        iconName: "undo",
        onclick: safely(async () => {
          await api.patch(`/v1/memories/${encodeURIComponent(id)}`, { status: "active" });
          toast("Restored.", { kind: "ok" });
          changed("restored");
          show();
        }),
      }));
    }
    if (memory.status !== "deleted") {
      append(actions, button("Delete", {
        kind: "danger", iconName: "trash",
        onclick: () => {
          sheet.close();
          changed({ hide: id });
          undoable("Memory deleted.", {
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
        h("span", { class: "chip chip-status", dataset: { status: memory.status } }, memory.status),
        memory.namespace !== ns() ? h("span", { class: "chip chip-namespace" }, memory.namespace) : null,
        memory.type === "plan" ? planBadge(memory) : null,
        memory.pinned ? h("span", { class: "chip chip-pin" }, icon("star", 12), "pinned") : null,
        memory.authored_by ? h("span", { class: "chip" }, `by ${memory.authored_by}`) : null,
        (memory.tags || []).map((t) => h("span", { class: "chip" }, `#${t}`))),
      h("p", { class: "content content-large", id: "memory-content" }, memory.content),
      h("dl", { class: "kv" },
        h("dt", {}, "Fact key"), h("dd", { class: "mono" }, memory.fact_key || "—"),
        h("dt", {}, "Layer"), h("dd", { id: "memory-layer" }, `${memory.layer}: ${memory.layer_reason || "—"}`,
          memory.layer_at ? ` (${when(memory.layer_at)})` : "", memory.revivals ? `, revived ${memory.revivals}×` : ""),
        h("dt", {}, "Importance"), h("dd", {}, percent(memory.importance)),
        h("dt", {}, "Confidence"), h("dd", {}, percent(memory.confidence)),
        h("dt", {}, "Source"), h("dd", {}, memory.source),
        h("dt", {}, "Recalled"), h("dd", {}, `${memory.recall_count} times${memory.last_injected_at ? `, last ${when(memory.last_injected_at)}` : ""}`),
        h("dt", {}, "Created"), h("dd", {}, when(memory.created_at)),
        h("dt", {}, "Updated"), h("dd", {}, when(memory.updated_at)),
        h("dt", {}, "Id"), h("dd", { class: "mono" }, memory.id)),
      memory.evidence?.length
        ? h("div", { class: "stack" }, h("span", { class: "section-label" }, "From your messages"),
            memory.evidence.map((e) => h("blockquote", { class: "quote" }, e.quote, e.message_id ? h("span", { class: "quote-source" }, e.message_id) : null)))
        : null,
      relationList.length
        ? h("div", { class: "stack" }, h("span", { class: "section-label" }, "Relations"),
            relationList.map((r) => {
              const other = r.source_id === id ? r.target_id : r.source_id;
              return h("button", { class: "button button-small button-ghost", type: "button", onclick: () => { sheet.close(); openMemory(other, { onChange }); } },
                `${r.source_id === id ? "→" : "←"} ${r.relation} (${r.weight})`, h("span", { class: "mono muted" }, other.slice(0, 8)));
            }))
        : null,
      h("div", { class: "stack" }, h("span", { class: "section-label" }, "History"),
        h("ul", { class: "small muted", id: "memory-events" }, events.map((e) => h("li", {}, describeEvent(e),
          UNDOABLE.has(e.event) && !undone.has(e.id) ? button("Undo", {
            kind: "small", iconName: "undo",
            onclick: safely(async () => {
              await api.post(`/v1/memories/${encodeURIComponent(id)}/events/${e.id}/undo`);
              toast("Undone.", { kind: "ok" });
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
          h("span", { class: "section-label" }, `Earlier version · ${v.status} · ${when(v.updated_at)}`),
          h("p", { class: "content diff-old" }, v.content))));
    });

    function edit(mode) {
      append(clear(sheet.body), memoryForm(mode, memory, async (values) => {
        if (mode === "edit") {
          await api.patch(`/v1/memories/${encodeURIComponent(id)}`, values);
          toast("Saved.", { kind: "ok" });
          changed("edited");
          show();
        } else {
          const answer = await api.post(`/v1/memories/${encodeURIComponent(id)}/supersede`, { ...values, namespace: memory.namespace || ns() });
          toast("New version saved; the old one is kept as history.", { kind: "ok" });
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

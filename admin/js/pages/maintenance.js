// Maintenance: the health report (with its repair) and the messages no memory cites,
// vector index health and rebuild (with progress), the dream (dry run or for real),
// export and import.
import { api, ns } from "../api.js";
import { refreshPendingBadge } from "../badge.js";
import { append, clear, h } from "../dom.js";
import { plural, when } from "../format.js";
import { busy, button, errorBox, field, loadInto, safely, saveFile, toast } from "../ui.js";

const REINDEX_BATCH = 20;

const UNANCHORED_PAGE = 20;

function reportView(report) {
  const failed = report.checks.filter((c) => c.status === "fail").length;
  const warned = report.checks.filter((c) => c.status === "warn").length;
  return [
    h("p", { class: ["notice", report.status === "ok" ? "notice-ok" : report.status === "warn" ? "notice-warn" : "notice-error"], id: "health-status" },
      report.status === "ok" ? `All ${report.checks.length} checks are fine.`
        : `${plural(failed, "check")} failed, ${plural(warned, "check")} to look at.`),
    h("ul", { class: "check-list", id: "health-checks" }, report.checks.map((check) =>
      h("li", { class: "check", dataset: { check: check.name, status: check.status } },
        h("span", { class: "chip chip-check", dataset: { status: check.status } }, check.status),
        h("span", { class: "check-name" }, check.name.replaceAll("_", " ")),
        h("span", { class: "small muted check-summary" }, check.summary)))),
  ];
}

function doctorCard(afterwards) {
  const report = h("div", { class: "stack" });
  const status = h("div", { class: "small stack", role: "status", id: "repair-status" });
  const load = () => loadInto(report, async () => reportView(await api.get("/v1/health/report")));
  const repair = button("Repair", { kind: "primary", iconName: "refresh", id: "health-repair" });
  repair.addEventListener("click", () => busy(repair, async () => {
    append(clear(status), h("p", { class: "muted" }, "Keeping a backup, then repairing…"));
    try {
      const answer = await api.post("/v1/health/repair", { backup: true });
      append(clear(status),
        h("p", { class: "muted", id: "repair-backup" }, answer.backup.path ? `Backup: ${answer.backup.path}` : answer.backup.note),
        h("ul", { class: "repair-actions" }, answer.actions.map((a) => h("li", {}, a.summary))));
      append(clear(report), ...reportView(answer.report));
      afterwards();
    } catch (error) {
      if (error.status !== 401) append(clear(status), errorBox(error));
    }
  }));
  load();
  return h("section", { class: "card", id: "health-report" },
    h("div", { class: "card-head" }, h("h2", {}, "Health"), button("Check", { kind: "ghost", iconName: "refresh", onclick: load, id: "health-check" })),
    h("div", { class: "stack" }, report,
      h("p", { class: "small muted" }, "Repair keeps an export first, then queues memories missing from the index, removes vectors of deleted ones, expires plans past their end and rebuilds the word index. Duplicates and contradictions stay for you to decide."),
      h("div", {}, repair), status));
}

function unanchoredCard() {
  const list = h("ul", { class: "list", id: "unanchored-list" });
  const more = button("Show more", { kind: "ghost", id: "unanchored-more" });
  const note = h("p", { class: "small muted", role: "status" });
  let cursor = null;
  const page = safely(async () => {
    const answer = await api.get("/v1/health/unanchored", { namespace: ns(), limit: UNANCHORED_PAGE, cursor: cursor || undefined });
    append(list, answer.messages.map((m) => h("li", { class: "item", dataset: { id: m.id } },
      h("p", { class: "content" }, m.content),
      h("div", { class: "item-meta" }, when(m.created_at), m.conversation_id ? h("span", { class: "mono" }, m.conversation_id) : null))));
    cursor = answer.next_cursor;
    more.hidden = !cursor;
    note.textContent = list.children.length ? "" : "Every message older than a day is cited by some memory.";
  });
  more.addEventListener("click", () => busy(more, page));
  more.hidden = true;
  page();
  return h("section", { class: "card", id: "unanchored" },
    h("h2", {}, "Messages no memory cites"),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, "Your messages older than a day that no memory quotes or comes from, newest first: what the dream may have missed."),
      list, note, h("div", {}, more)));
}

function healthView(health) {
  const outbox = health.outbox || {};
  const ok = !health.mismatch && !health.missing_from_index && !outbox.pending;
  return [
    h("p", { class: ["notice", ok ? "notice-ok" : "notice-warn"], id: "vector-status" },
      health.mismatch ? String(health.mismatch)
        : ok ? "The index is in step with the database."
        : `${health.missing_from_index} memories are missing from the index; ${outbox.pending || 0} writes wait in the outbox.`),
    h("dl", { class: "kv" },
      h("dt", {}, "Embedder"), h("dd", { class: "mono" }, `${health.embedding_model} (${health.dimensions} dims)`),
      h("dt", {}, "Index built with"), h("dd", { class: "mono" }, health.index ? `${health.index.model} (${health.index.dimensions} dims)` : "—"),
      h("dt", {}, "Vectors"), h("dd", {}, String(health.indexed_vectors)),
      h("dt", {}, "Live memories"), h("dd", {}, String(health.active_memories)),
      h("dt", {}, "Missing"), h("dd", {}, `${health.missing_from_index}${health.missing_count_complete ? "" : "+"}`),
      h("dt", {}, "Outbox"), h("dd", {}, `${outbox.pending ?? 0} pending${outbox.max_attempts ? ` (up to ${outbox.max_attempts} attempts)` : ""}`)),
  ];
}

function healthCard() {
  const body = h("div", { class: "stack" });
  const load = () => loadInto(body, async () => healthView(await api.get("/v1/debug/vector_health")));
  load();
  return [h("section", { class: "card", id: "vector-health" },
    h("div", { class: "card-head" }, h("h2", {}, "Vector index"), button("Check", { kind: "ghost", iconName: "refresh", onclick: load })), body), load];
}

function reindexCard(afterwards) {
  const fill = h("div", { class: "progress-fill" });
  const bar = h("div", { class: "progress", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": 0, "aria-label": "Reindex progress", id: "reindex-progress" }, fill);
  const label = h("p", { class: "small muted", id: "reindex-label", role: "status" }, "Rebuilds every vector from the database, a batch at a time.");
  const start = button("Rebuild index", { kind: "primary", iconName: "refresh", id: "reindex-start" });
  bar.hidden = true;
  const show = (done, total, finished) => {
    const value = total ? Math.round((done / total) * 100) : 100;
    fill.style.width = `${value}%`;
    bar.setAttribute("aria-valuenow", String(value));
    bar.dataset.done = String(finished);
  };
  start.addEventListener("click", () => busy(start, async () => {
    bar.hidden = false;
    show(0, 1, false);
    label.textContent = "Starting…";
    try {
      let step = await api.post("/v1/debug/vector_reindex", { restart: true, batch: REINDEX_BATCH });
      const total = Math.max(step.queued ?? step.active_memories, step.pending, 1);
      let failures = 0;
      while (!step.done) {
        show(total - step.pending, total, false);
        label.textContent = `Indexed ${total - step.pending} of ${total}…`;
        failures = step.failed_now && !step.indexed_now ? failures + 1 : 0;
        if (failures >= 3) throw new Error(`The index keeps refusing writes (${step.pending} left); check Vector index above.`);
        step = await api.post("/v1/debug/vector_reindex", { batch: REINDEX_BATCH });
      }
      show(total, total, true);
      label.textContent = `Done: ${plural(step.active_memories, "memory", "memories")} indexed.`;
      afterwards();
    } catch (error) {
      label.textContent = error.message;
    }
  }));
  return h("section", { class: "card", id: "reindex" }, h("h2", {}, "Rebuild the index"), h("div", { class: "stack" }, label, bar, h("div", {}, start)));
}

function dreamCard() {
  const date = h("input", { type: "date", name: "dream-date", "aria-label": "Day to dream" });
  const report = h("div", { class: "stack", id: "dream-report" });
  api.get("/v1/memory_boot", { namespace: ns() }).then((boot) => (date.value ||= boot.date)).catch(() => {});
  const runButton = (label, dryRun, kind) => {
    const b = button(label, { kind, id: dryRun ? "dream-dry-run" : "dream-run" });
    b.addEventListener("click", () => busy(b, async () => {
      append(clear(report), h("p", { class: "small muted" }, dryRun ? "Dreaming (dry run)…" : "Dreaming…"));
      try {
        const answer = await api.post("/v1/dream/run", { date: date.value || undefined, dry_run: dryRun });
        append(clear(report), ...dreamReport(answer, dryRun));
        if (!dryRun) refreshPendingBadge();
      } catch (error) {
        if (error.status !== 401) append(clear(report), errorBox(error));
      }
    }));
    return b;
  };
  return h("section", { class: "card", id: "dream" },
    h("h2", {}, "Dream"),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, "Reads a day's messages, writes its diary entry and proposes memories for review. A dry run shows what it would propose and writes nothing."),
      field("Day", date),
      h("div", { class: "row" }, runButton("Dry run", true, ""), runButton("Run dream", false, "primary")),
      report));
}

function dreamReport(answer, dryRun) {
  const runs = answer.runs || [];
  if (!runs.length) return [h("p", { class: "notice" }, `No messages on ${answer.date} to dream about.`)];
  const mine = runs.filter((r) => r.namespace === ns());
  const candidates = mine.flatMap((r) => r.candidates);
  const made = mine.reduce((n, r) => n + r.candidates_created, 0);
  return [
    h("p", { class: ["notice", mine.some((r) => r.status === "failed") ? "notice-error" : "notice-ok"] },
      dryRun ? `Dry run for ${answer.date}: would propose ${plural(candidates.length, "candidate")}; nothing was written.`
        : `Dreamt ${answer.date}: ${plural(made, "new candidate")} in the review queue.`,
      ...mine.filter((r) => r.error).map((r) => ` ${r.error}`)),
    ...runs.map((r) => h("p", { class: "small muted" }, `${r.namespace}: ${r.status}, ${plural(r.messages_read, "message")} read, extractor ${r.extractor}`)),
    ...candidates.map((c) => h("div", { class: "target" }, h("span", { class: "section-label" }, c.type), h("p", { class: "content" }, c.content),
      c.evidence.map((e) => h("blockquote", { class: "quote" }, e.quote)))),
    !dryRun && made ? h("a", { class: "button button-primary", href: "#/review" }, "Review them") : null,
  ];
}

function backupCard() {
  const status = h("p", { class: "small muted", role: "status", id: "backup-status" });
  const file = h("input", { type: "file", accept: "application/json,.json", "aria-label": "Export file to import", hidden: true });
  const exportButton = button("Export", { iconName: "download", id: "export" });
  exportButton.addEventListener("click", () => busy(exportButton, safely(async () => {
    const document_ = await api.get("/api/memories/export", { namespace: ns() });
    saveFile(`companion-memory-${ns()}-${new Date().toISOString().slice(0, 10)}.json`, JSON.stringify(document_, null, 2), "application/json");
    status.textContent = "Export downloaded.";
  })));
  file.addEventListener("change", safely(async () => {
    const chosen = file.files[0];
    file.value = "";
    if (!chosen) return;
    let document_;
    try {
      document_ = JSON.parse(await chosen.text());
    } catch {
      status.textContent = `${chosen.name} is not JSON.`;
      return;
    }
    status.textContent = `Importing ${chosen.name}…`;
    const answer = await api.post("/api/memories/import", document_);
    const counts = Object.entries(answer.imported || answer).filter(([, v]) => typeof v === "number").map(([k, v]) => `${v} ${k}`).join(", ");
    status.textContent = `Imported ${chosen.name}${counts ? `: ${counts}` : ""}.`;
    toast("Import finished; vectors are rebuilt in the background.", { kind: "ok" });
  }));
  return h("section", { class: "card", id: "backup" }, h("h2", {}, "Export and import"),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, "Everything in this namespace as one JSON file. Importing upserts rows by id, so importing twice changes nothing."),
      h("div", { class: "row" }, exportButton, button("Import…", { iconName: "upload", onclick: () => file.click() }), file), status));
}

export function render(container) {
  const [health, reloadHealth] = healthCard();
  append(container, doctorCard(reloadHealth), h("div", { class: "grid grid-2" }, health, reindexCard(reloadHealth)), unanchoredCard(), dreamCard(), backupCard());
}

// Maintenance: the health report (with its repair) and the messages no memory cites,
// vector index health and rebuild (with progress), the dream (dry run or for real),
// export and import.
import { api, ns } from "../api.js";
import { refreshPendingBadge } from "../badge.js";
import { append, clear, h } from "../dom.js";
import { label, longDate, when } from "../format.js";
import { num, t, tOr } from "../i18n.js";
import { busy, button, errorBox, field, loadInto, progressBar, safely, saveFile, toast } from "../ui.js";

const REINDEX_BATCH = 20;

const UNANCHORED_PAGE = 20;

function reportView(report) {
  const failed = report.checks.filter((c) => c.status === "fail").length;
  const warned = report.checks.filter((c) => c.status === "warn").length;
  return [
    h("p", { class: ["notice", report.status === "ok" ? "notice-ok" : report.status === "warn" ? "notice-warn" : "notice-error"], id: "health-status" },
      report.status === "ok" ? t("maintenance.allFine", { count: report.checks.length })
        : t("maintenance.someFailed", { failed: t("maintenance.checks", { count: failed }), warned: t("maintenance.checks", { count: warned }) })),
    h("ul", { class: "check-list", id: "health-checks" }, report.checks.map((check) =>
      h("li", { class: "check", dataset: { check: check.name, status: check.status } },
        h("span", { class: "chip chip-check", dataset: { status: check.status } }, label("checkStatuses", check.status)),
        h("span", { class: "check-name" }, tOr(`maintenance.checkNames.${check.name}`, check.name.replaceAll("_", " "))),
        // The server's words (its report speaks English): data.
        h("span", { class: "small muted check-summary", translate: "no" }, check.summary)))),
  ];
}

function doctorCard(afterwards) {
  const report = h("div", { class: "stack" });
  const status = h("div", { class: "small stack", role: "status", id: "repair-status" });
  const load = () => loadInto(report, async () => reportView(await api.get("/v1/health/report")));
  const repair = button(t("maintenance.repair"), { kind: "primary", iconName: "refresh", id: "health-repair" });
  repair.addEventListener("click", () => busy(repair, async () => {
    append(clear(status), h("p", { class: "muted" }, t("maintenance.repairing")));
    try {
      const answer = await api.post("/v1/health/repair", { backup: true });
      append(clear(status),
        answer.backup.path
          ? h("p", { class: "muted", id: "repair-backup" }, t("maintenance.backup"), " ", h("span", { class: "mono", translate: "no" }, answer.backup.path))
          : h("p", { class: "muted", id: "repair-backup", translate: "no" }, answer.backup.note),
        h("ul", { class: "repair-actions", translate: "no" }, answer.actions.map((a) => h("li", {}, a.summary))));
      append(clear(report), ...reportView(answer.report));
      afterwards();
    } catch (error) {
      if (error.status !== 401) append(clear(status), errorBox(error));
    }
  }));
  load();
  return h("section", { class: "card", id: "health-report" },
    h("div", { class: "card-head" }, h("h2", {}, t("maintenance.health")), button(t("maintenance.check"), { kind: "ghost", iconName: "refresh", onclick: load, id: "health-check", "aria-label": t("maintenance.checkHealth") })),
    h("div", { class: "stack" }, report,
      h("p", { class: "small muted" }, t("maintenance.repairHint")),
      h("div", {}, repair), status));
}

function unanchoredCard() {
  const list = h("ul", { class: "list", id: "unanchored-list" });
  const more = button(t("maintenance.showMore"), { kind: "ghost", id: "unanchored-more" });
  const note = h("p", { class: "small muted", role: "status" });
  let cursor = null;
  const page = safely(async () => {
    const answer = await api.get("/v1/health/unanchored", { namespace: ns(), limit: UNANCHORED_PAGE, cursor: cursor || undefined });
    append(list, answer.messages.map((m) => h("li", { class: "item", dataset: { id: m.id } },
      h("p", { class: "content", translate: "no" }, m.content),
      h("div", { class: "item-meta" }, when(m.created_at), m.conversation_id ? h("span", { class: "mono", translate: "no" }, m.conversation_id) : null))));
    cursor = answer.next_cursor;
    more.hidden = !cursor;
    note.textContent = list.children.length ? "" : t("maintenance.allCited");
  });
  more.addEventListener("click", () => busy(more, page));
  more.hidden = true;
  page();
  return h("section", { class: "card", id: "unanchored" },
    h("h2", {}, t("maintenance.unanchored")),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, t("maintenance.unanchoredHint")),
      list, note, h("div", {}, more)));
}

function healthView(health) {
  const outbox = health.outbox || {};
  const ok = !health.mismatch && !health.missing_from_index && !outbox.pending;
  return [
    h("p", { class: ["notice", ok ? "notice-ok" : "notice-warn"], id: "vector-status" },
      health.mismatch ? h("span", { translate: "no" }, String(health.mismatch))
        : ok ? t("maintenance.inStep")
        : t("maintenance.outOfStep", { missing: t("maintenance.missingMemories", { count: health.missing_from_index }), pending: t("maintenance.waitingWrites", { count: outbox.pending || 0 }) })),
    h("dl", { class: "kv" },
      h("dt", {}, t("maintenance.embedder")), h("dd", {}, h("span", { class: "mono", translate: "no" }, health.embedding_model), " ", t("maintenance.dims", { count: health.dimensions })),
      h("dt", {}, t("maintenance.indexBuiltWith")), h("dd", {}, health.index ? [h("span", { class: "mono", translate: "no" }, health.index.model), " ", t("maintenance.dims", { count: health.index.dimensions })] : "—"),
      h("dt", {}, t("maintenance.vectors")), h("dd", {}, num(health.indexed_vectors)),
      h("dt", {}, t("maintenance.liveMemories")), h("dd", {}, num(health.active_memories)),
      h("dt", {}, t("maintenance.missing")), h("dd", {}, num(health.missing_from_index), health.missing_count_complete ? "" : "+"),
      h("dt", {}, t("maintenance.outbox")), h("dd", {}, t("maintenance.pending", { count: outbox.pending ?? 0 }),
        outbox.max_attempts ? [" ", t("maintenance.upToAttempts", { count: outbox.max_attempts })] : null)),
  ];
}

function healthCard() {
  const body = h("div", { class: "stack" });
  const load = () => loadInto(body, async () => healthView(await api.get("/v1/debug/vector_health")));
  load();
  return [h("section", { class: "card", id: "vector-health" },
    h("div", { class: "card-head" }, h("h2", {}, t("maintenance.vectorIndex")), button(t("maintenance.check"), { kind: "ghost", iconName: "refresh", onclick: load, "aria-label": t("maintenance.checkIndex") })), body), load];
}

function reindexCard(afterwards) {
  const [bar, show] = progressBar("reindex-progress", t("maintenance.reindexProgress"));
  const note = h("p", { class: "small muted", id: "reindex-label", role: "status" }, t("maintenance.reindexHint"));
  const start = button(t("maintenance.rebuild"), { kind: "primary", iconName: "refresh", id: "reindex-start" });
  bar.hidden = true;
  start.addEventListener("click", () => busy(start, async () => {
    bar.hidden = false;
    show(0, 1, false);
    note.textContent = t("maintenance.starting");
    try {
      let step = await api.post("/v1/debug/vector_reindex", { restart: true, batch: REINDEX_BATCH });
      const total = Math.max(step.queued ?? step.active_memories, step.pending, 1);
      let failures = 0;
      while (!step.done) {
        show(total - step.pending, total, false);
        note.textContent = t("maintenance.indexed", { done: total - step.pending, total });
        failures = step.failed_now && !step.indexed_now ? failures + 1 : 0;
        if (failures >= 3) throw new Error(t("maintenance.refusing", { count: step.pending }));
        step = await api.post("/v1/debug/vector_reindex", { batch: REINDEX_BATCH });
      }
      show(total, total, true);
      note.textContent = t("maintenance.reindexed", { count: step.active_memories });
      afterwards();
    } catch (error) {
      note.textContent = error.message;
    }
  }));
  return h("section", { class: "card", id: "reindex" }, h("h2", {}, t("maintenance.rebuildTitle")), h("div", { class: "stack" }, note, bar, h("div", {}, start)));
}

function dreamCard() {
  const date = h("input", { type: "date", name: "dream-date" });
  const report = h("div", { class: "stack", id: "dream-report" });
  api.get("/v1/memory_boot", { namespace: ns() }).then((boot) => (date.value ||= boot.date)).catch(() => {});
  const runButton = (text, dryRun, kind) => {
    const b = button(text, { kind, id: dryRun ? "dream-dry-run" : "dream-run" });
    b.addEventListener("click", () => busy(b, async () => {
      append(clear(report), h("p", { class: "small muted" }, t(dryRun ? "maintenance.dreamingDry" : "maintenance.dreaming")));
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
    h("h2", {}, t("maintenance.dream")),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, t("maintenance.dreamHint")),
      field(t("maintenance.dreamDay"), date),
      h("div", { class: "row" }, runButton(t("maintenance.dryRun"), true, ""), runButton(t("maintenance.runDream"), false, "primary")),
      report));
}

function dreamReport(answer, dryRun) {
  const runs = answer.runs || [];
  if (!runs.length) return [h("p", { class: "notice" }, t("maintenance.noMessages", { date: longDate(answer.date) }))];
  const mine = runs.filter((r) => r.namespace === ns());
  const candidates = mine.flatMap((r) => r.candidates);
  const made = mine.reduce((n, r) => n + r.candidates_created, 0);
  return [
    h("p", { class: ["notice", mine.some((r) => r.status === "failed") ? "notice-error" : "notice-ok"] },
      dryRun ? t("maintenance.dryRunReport", { date: longDate(answer.date), count: candidates.length })
        : t("maintenance.dreamReport", { date: longDate(answer.date), count: made }),
      ...mine.filter((r) => r.error).map((r) => [" ", h("span", { translate: "no" }, r.error)])),
    ...runs.map((r) => h("p", { class: "small muted" }, h("span", { translate: "no" }, r.namespace), ": ",
      t("maintenance.runLine", { status: tOr(`maintenance.runStatuses.${r.status}`, r.status), count: r.messages_read }), " ", h("span", { class: "mono", translate: "no" }, r.extractor))),
    ...candidates.map((c) => h("div", { class: "target" }, h("span", { class: "section-label" }, label("types", c.type)), h("p", { class: "content", translate: "no" }, c.content),
      c.evidence.map((e) => h("blockquote", { class: "quote", translate: "no" }, e.quote)))),
    !dryRun && made ? h("a", { class: "button button-primary", href: "#/review" }, t("maintenance.reviewThem")) : null,
  ];
}

function backupCard() {
  const status = h("p", { class: "small muted", role: "status", id: "backup-status" });
  const file = h("input", { type: "file", accept: "application/json,.json", "aria-label": t("maintenance.importFile"), hidden: true });
  const exportButton = button(t("maintenance.export"), { iconName: "download", id: "export" });
  exportButton.addEventListener("click", () => busy(exportButton, safely(async () => {
    const document_ = await api.get("/api/memories/export", { namespace: ns() });
    saveFile(`companion-memory-${ns()}-${new Date().toISOString().slice(0, 10)}.json`, JSON.stringify(document_, null, 2), "application/json");
    status.textContent = t("maintenance.exported");
  })));
  file.addEventListener("change", safely(async () => {
    const chosen = file.files[0];
    file.value = "";
    if (!chosen) return;
    let document_;
    try {
      document_ = JSON.parse(await chosen.text());
    } catch {
      status.textContent = t("maintenance.notJson", { name: chosen.name });
      return;
    }
    status.textContent = t("maintenance.importing", { name: chosen.name });
    const answer = await api.post("/api/memories/import", document_);
    const counts = Object.entries(answer.imported || answer).filter(([, v]) => typeof v === "number").map(([k, v]) => `${num(v)} ${k}`).join(", ");
    status.textContent = t(counts ? "maintenance.importedCounts" : "maintenance.imported", { name: chosen.name, counts });
    toast(t("maintenance.importDone"), { kind: "ok" });
  }));
  return h("section", { class: "card", id: "backup" }, h("h2", {}, t("maintenance.backupTitle")),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, t("maintenance.backupHint")),
      h("div", { class: "row" }, exportButton, button(t("maintenance.import"), { iconName: "upload", onclick: () => file.click() }), file), status));
}

export function render(container) {
  const [health, reloadHealth] = healthCard();
  append(container, doctorCard(reloadHealth), h("div", { class: "grid grid-2" }, health, reindexCard(reloadHealth)), unanchoredCard(), dreamCard(), backupCard());
}

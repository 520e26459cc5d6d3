// Import: a chat history from another app (ChatGPT, Claude, Chatbox, Cherry Studio, a JSONL
// or a Markdown transcript), uploaded in parts (the server's request-body limit), then
// followed while the server checks and stores it and while its episodes are embedded.
// The newest import shows when the page opens (a reloaded page follows a running one again),
// and the recent ones below, to look at any of them.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { currentTimeZone, dateTime, num, section, tOr, when } from "../i18n.js";
import { busy, button, errorBox, field, progressBar } from "../ui.js";

const s = section("imports");
const FORMATS = ["auto", "chatgpt", "claude", "chatbox", "cherry-studio", "jsonl", "markdown"];
const WORKING = new Set(["queued", "checking", "storing"]);
const POLL_MS = 1000;
const RECENT = 10;
// A part whose answer was lost is sent again (the server takes a part twice); after this many
// failures in a row the upload stops and says why.
const ATTEMPTS = 3;

// Uploads this tab is sending: they go on when the page is left, and a page opened again
// follows them instead of calling them stopped.
const sending = new Set();

const formatName = (format) => tOr(`imports.formats.${format}`, format);

function bytes(count) {
  const [unit, size] = count >= 1024 * 1024 ? ["megabyte", 1024 * 1024] : ["kilobyte", 1024];
  return num(count / size, { style: "unit", unit, maximumFractionDigits: 1 });
}

async function sendPart(job, part, start) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await api.put(`/v1/imports/${job.id}/parts/${start}`, part);
    } catch (error) {
      if (error.status !== 0 || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** ``file`` sent in parts of at most ``job.part_bytes`` bytes, in order, from where the
 * server's upload stands; ``progress`` sees the job after each part. */
async function upload(file, job, progress) {
  while (job.status === "uploading" && job.received < job.size) {
    const start = job.received;
    try {
      job = await sendPart(job, file.slice(start, start + job.part_bytes), start);
    } catch (error) {
      if (error.status !== 409) throw error;
      // The server holds another amount than this page thought: go on from what it has.
      const received = error.details.received;
      job = received === undefined ? await api.get(`/v1/imports/${job.id}`) : { ...job, received };
      if (job.status === "uploading" && job.received === start) throw error;
    }
    progress(job);
  }
  return job;
}

function form(follow, refresh) {
  const file = h("input", { type: "file", id: "import-file", accept: ".json,.jsonl,.md,.zip", hidden: true });
  const chosen = h("span", { class: "small muted", id: "import-chosen" }, s("noFile"));
  const format = h("select", { name: "format" }, FORMATS.map((value) => h("option", { value }, formatName(value))));
  const namespace = h("input", { type: "text", name: "namespace", value: ns(), spellcheck: "false", autocomplete: "off" });
  const since = h("input", { type: "date", name: "since" });
  const until = h("input", { type: "date", name: "until" });
  const dryRun = h("input", { type: "checkbox", name: "dryRun" });
  const problem = h("div", { id: "import-problem" });
  const start = button(s("start"), { kind: "primary", iconName: "upload", id: "import-start" });
  file.addEventListener("change", () => {
    const picked = file.files[0];
    append(clear(chosen), picked ? [h("span", { class: "mono", translate: "no" }, picked.name), " · ", bytes(picked.size)] : s("noFile"));
  });
  start.addEventListener("click", () => busy(start, async () => {
    clear(problem);
    const picked = file.files[0];
    const say = (text) => append(problem, h("p", { class: "notice notice-error", role: "alert" }, text));
    if (!picked) return say(s("pickFirst"));
    if (!picked.size) return say(s("emptyFile", { name: picked.name }));
    let job;
    try {
      job = await api.post("/v1/imports", {
        name: picked.name, size: picked.size, format: format.value, namespace: namespace.value.trim() || "default",
        since: since.value || undefined, until: until.value || undefined, dry_run: dryRun.checked,
      });
      sending.add(job.id);
      const show = follow(job);
      refresh();
      job = await upload(picked, job, show);
    } catch (error) {
      if (error.status !== 401) append(problem, errorBox(error));
    } finally {
      if (job) sending.delete(job.id);
    }
  }));
  return h("section", { class: "card", id: "import-form" },
    h("h2", {}, s("title")),
    h("div", { class: "stack" },
      h("p", { class: "small muted" }, s("hint")),
      field(s("file"), h("div", { class: "row" }, button(s("choose"), { iconName: "upload", onclick: () => file.click(), id: "import-choose" }), chosen, file), s("fileHint")),
      h("div", { class: "grid grid-2" },
        field(s("format"), format),
        field(s("namespace"), namespace),
        field(s("since"), since),
        field(s("until"), until, s("daysHint", { zone: currentTimeZone() }))),
      h("label", { class: "check" }, dryRun, " ", s("dryRun")),
      problem,
      h("div", {}, start)));
}

function summaryView(job) {
  const summary = job.summary;
  const reasons = Object.entries(summary.skipped_by_reason);
  const dropped = Object.entries(summary.dropped);
  const row = (name, ...value) => [h("dt", {}, name), h("dd", {}, ...value)];
  return h("dl", { class: "kv", id: "import-summary" },
    row(s("detected"), formatName(job.detected), job.reason ? h("span", { class: "small muted", translate: "no" }, ` (${job.reason})`) : null),
    row(s("conversations"), h("span", { dataset: { count: "conversations" } }, num(summary.conversations))),
    row(s("messages"), h("span", { dataset: { count: "messages" } }, num(summary.messages))),
    row(s(job.dry_run ? "wouldStore" : "stored"), h("span", { dataset: { count: "stored" } }, num(job.stored))),
    row(s("duplicates"), h("span", { dataset: { count: "duplicates" } }, num(job.duplicates))),
    job.since || job.until || job.outside ? row(s("outside"), h("span", { dataset: { count: "outside" } }, num(job.outside))) : null,
    row(s("skipped"), h("span", { dataset: { count: "skipped" } }, num(summary.skipped)),
      reasons.length ? [" (", reasons.map(([reason, count], index) => [index ? ", " : "", tOr(`imports.reasons.${reason}`, reason), " ", num(count)]), ")"] : null),
    summary.empty_conversations ? row(s("emptyConversations"), num(summary.empty_conversations)) : null,
    dropped.length ? row(s("dropped"), dropped.map(([part, count], index) => [index ? ", " : "", h("span", { class: "mono", translate: "no" }, part), " ", num(count)])) : null,
    summary.first ? row(s("dates"), h("span", { id: "import-dates" }, s("range", { first: dateTime(summary.first), last: dateTime(summary.last) }))) : null,
    summary.warnings.length ? row(s("warnings"), h("ul", { class: "import-warnings", translate: "no" }, summary.warnings.map((w) => h("li", {}, w)))) : null);
}

function statusLine(job) {
  if (job.status === "uploading") {
    const params = { sent: bytes(job.received), size: bytes(job.size) };
    return sending.has(job.id) ? s("uploading", params) : s("uploadStopped", params);
  }
  if (job.status === "storing") return s("storingLine", { position: job.position, total: job.total ?? 0 });
  if (job.status === "done") return s(job.dry_run ? "dryRunLine" : "doneLine", { count: job.stored });
  if (job.status === "failed") return s("failedLine");
  return s(`${job.status}Line`);
}

/** The card that shows one import: ``show(job)`` draws it as the server last said,
 * ``unreachable(error, retry)`` says why it could not be asked. */
function jobCard() {
  const title = h("h2", { class: "import-name", translate: "no" });
  const status = h("span", { class: "chip chip-status", id: "import-state" });
  const [uploadBar, showUpload] = progressBar("import-upload-progress", s("uploadProgress"));
  const [bar, showProgress] = progressBar("import-progress", s("progress"));
  const line = h("p", { id: "import-line", role: "status" });
  const error = h("p", { class: "notice notice-error", id: "import-error", role: "alert", translate: "no", hidden: true });
  const details = h("div", { class: "stack" });
  const embedding = h("p", { class: "notice", id: "import-embedding", hidden: true });
  const problem = h("div", {});
  const card = h("section", { class: "card", id: "import-job", hidden: true },
    h("div", { class: "card-head" }, title, status),
    h("div", { class: "stack" },
      h("span", { class: "field-label" }, s("uploadProgress")), uploadBar,
      h("span", { class: "field-label" }, s("progress")), bar,
      line, error, details, embedding, problem));
  const show = (job) => {
    card.hidden = false;
    clear(problem);
    card.dataset.id = job.id;
    card.dataset.status = job.status;
    title.textContent = job.name;
    status.textContent = s(`statuses.${job.status}`);
    status.dataset.status = job.status;
    showUpload(job.received, job.size, job.received >= job.size);
    const finished = job.status === "done";
    showProgress(finished ? 1 : job.status === "storing" ? job.position : 0, finished ? 1 : job.total || 1, finished);
    line.textContent = statusLine(job);
    error.hidden = !job.error;
    error.textContent = job.error || "";
    append(clear(details), job.summary ? summaryView(job) : null);
    embedding.hidden = job.status !== "done" || job.dry_run;
    embedding.textContent = job.embedding_left ? s("embedding", { count: job.embedding_left, namespace: job.namespace }) : s("embedded");
  };
  const unreachable = (failure, retry) => append(clear(problem), errorBox(failure, retry));
  return [card, show, unreachable];
}

/** Still something to follow: the import runs, or its upload is sent from this tab, or its episodes are being embedded. */
const going = (job) => WORKING.has(job.status) || sending.has(job.id) || (job.status === "done" && job.embedding_left > 0);

function recentItem(job, follow) {
  return h("li", {},
    h("button", { type: "button", class: "item import-item", dataset: { id: job.id, status: job.status }, onclick: () => follow(job) },
      h("div", { class: "row" },
        h("span", { class: "import-name", translate: "no" }, job.name),
        h("span", { class: "chip chip-status", dataset: { status: job.status } }, s(`statuses.${job.status}`)),
        h("span", { class: "chip chip-namespace", translate: "no" }, job.namespace)),
      h("div", { class: "item-meta" }, h("span", {}, when(job.created_at)),
        job.summary ? h("span", {}, s("recentCounts", { messages: job.summary.messages, stored: job.stored, duplicates: job.duplicates })) : null)));
}

export function render(container) {
  const [card, show, unreachable] = jobCard();
  const list = h("ul", { class: "list import-list", id: "import-list" });
  let following = null;
  // Each follow() starts a new round of polls; an answer from an earlier round is dropped.
  let round = 0;
  let timer = null;
  let left = false;
  const current = (mine) => !left && mine === round;

  async function poll(mine) {
    let job;
    try {
      job = await api.get(`/v1/imports/${following}`);
    } catch (error) {
      if (error.status !== 401 && current(mine)) unreachable(error, () => poll(mine));
      return;
    }
    if (!current(mine)) return;
    // The list shows each import's status: asked again when this one's changes.
    if (job.status !== card.dataset.status) refresh();
    show(job);
    if (going(job)) timer = setTimeout(poll, POLL_MS, mine);
  }

  /** Show ``job`` and follow it until it ends and its episodes are embedded; returns what an upload reports its parts to. */
  function follow(job) {
    clearTimeout(timer);
    const mine = ++round;
    following = job.id;
    show(job);
    if (going(job)) timer = setTimeout(poll, POLL_MS, mine);
    return (next) => current(mine) && show(next);
  }

  async function refresh() {
    try {
      const { imports } = await api.get("/v1/imports", { limit: RECENT });
      if (left) return imports;
      append(clear(list), imports.length ? imports.map((job) => recentItem(job, follow)) : h("li", { class: "muted small" }, s("none")));
      return imports;
    } catch (error) {
      if (error.status !== 401) append(clear(list), h("li", {}, errorBox(error, refresh)));
      return [];
    }
  }

  append(container,
    form(follow, refresh),
    card,
    h("section", { class: "card", id: "import-recent" }, h("h2", {}, s("recent")), list));
  // The newest import is shown: after a reload, one still going is followed again.
  refresh().then(([newest]) => {
    if (newest && !following) follow(newest);
  });
  return () => {
    left = true;
    clearTimeout(timer);
  };
}

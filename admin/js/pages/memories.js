// Memories: by type and status, a page at a time; search through the recall pipeline;
// open one to edit it, write a new version, archive or delete it.
import { api, ns } from "../api.js";
import { append, clear, h, icon } from "../dom.js";
import { TYPES, label, percent, suggestFactKey, typeColour, when } from "../format.js";
import { num, t } from "../i18n.js";
import { memoryForm } from "../memory-form.js";
import { openMemory } from "../memory-view.js";
import { planBadge } from "../plans.js";
import { button, emptyState, errorBox, layerChip, modal, pageHeader, spinner, toast, typeChip } from "../ui.js";

const PAGE_SIZE = 20;
const STATUSES = ["active", "archived", "superseded", "all"];
const LAYERS = ["", "instant", "short", "long", "cold", "permanent"];

export function memoryCard(memory, onOpen, extra = []) {
  return h("button", { class: "item memory-item", type: "button", dataset: { id: memory.id }, onclick: () => onOpen(memory.id) },
    h("div", { class: "item-meta" }, typeChip(memory.type), layerChip(memory),
      memory.status !== "active" ? h("span", { class: "chip chip-status", dataset: { status: memory.status } }, label("statuses", memory.status)) : null,
      memory.type === "plan" ? planBadge(memory) : null,
      memory.pinned ? h("span", { class: "chip chip-pin" }, icon("star", 12), t("memory.pinned")) : null,
      // A hit from another namespace (asked for, or shared into this one) says where it lives.
      memory.namespace && memory.namespace !== ns()
        ? (memory.share_id
          ? h("span", { class: "chip chip-namespace", title: t("memories.sharedInto") }, t("memories.sharedFrom", { namespace: memory.namespace }))
          : h("span", { class: "chip chip-namespace", translate: "no" }, memory.namespace))
        : null,
      extra, h("span", { class: "spacer" }), h("span", {}, when(memory.updated_at))),
    h("p", { class: "content clamp memory-content", translate: "no" }, memory.content),
    h("div", { class: "item-meta" }, memory.fact_key ? h("span", { class: "mono", translate: "no" }, memory.fact_key) : null,
      h("span", {}, t("memories.importance", { value: percent(memory.importance) })),
      memory.recall_count ? h("span", {}, t("memories.recalled", { count: memory.recall_count })) : null));
}

export function render(container, route) {
  const state = {
    type: TYPES.includes(route.params.get("type")) ? route.params.get("type") : "",
    status: "active",
    layer: "",
    cursors: [null],
    query: route.params.get("q") || "",
  };
  const list = h("div", { class: "list", id: "memory-list" });
  const pager = h("div", { class: "pager" });
  const chips = h("div", { class: "chips chips-scroll", role: "toolbar", "aria-label": t("memories.filterByType") });
  const statusSelect = h("select", { "aria-label": t("memories.status"), name: "status", style: { width: "auto" } },
    STATUSES.map((value) => h("option", { value }, t(`memories.statuses.${value}`))));
  const layerSelect = h("select", { "aria-label": t("memory.layer"), name: "layer", style: { width: "auto" } },
    LAYERS.map((value) => h("option", { value }, value ? label("layers", value) : t("memories.allLayers"))));
  const search = h("input", { type: "search", name: "q", placeholder: t("common.searchMemoriesPlaceholder"), value: state.query, "aria-label": t("common.searchMemories") });

  statusSelect.addEventListener("change", () => { state.status = statusSelect.value; state.cursors = [null]; load(); });
  layerSelect.addEventListener("change", () => { state.layer = layerSelect.value; state.cursors = [null]; load(); });
  const searchForm = h("form", {
    class: "search-bar", role: "search",
    onsubmit: (event) => { event.preventDefault(); state.query = search.value.trim(); state.cursors = [null]; load(); },
  }, search, button(t("common.search"), { iconName: "search", type: "submit" }));
  search.addEventListener("search", () => { if (!search.value) { state.query = ""; load(); } });

  const onChange = (what) => {
    if (what && what.hide) list.querySelector(`[data-id="${CSS.escape(what.hide)}"]`)?.setAttribute("hidden", "");
    else if (what && what.show) list.querySelector(`[data-id="${CSS.escape(what.show)}"]`)?.removeAttribute("hidden");
    else load();
  };
  const open = (id) => openMemory(id, { onChange });

  function renderChips(counts) {
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const all = [["", t("memories.all", { count: total })],
      ...TYPES.filter((type) => counts[type] || type === state.type).map((type) => [type, [label("types", type), " ", num(counts[type] || 0)]])];
    append(clear(chips), ...all.map(([type, text]) => {
      const chip = h("button", { class: "chip", type: "button", "aria-pressed": String(type === state.type), dataset: { type: type || "all" },
        onclick: () => { state.type = type; state.cursors = [null]; renderChips(counts); load(); } }, text);
      if (type) chip.classList.add("type-chip");
      if (type) chip.style.setProperty("--type", typeColour(type));
      return chip;
    }));
  }

  const refreshCounts = () => api.get("/v1/memory_boot", { namespace: ns() }).then((boot) => renderChips(boot.counts)).catch(() => {});

  // A slow answer to an earlier load (a search still running when the query is cleared) must not
  // overwrite the newer one, so each load remembers its number and drops a stale answer.
  let loads = 0;
  async function load() {
    const mine = ++loads;
    const query = state.query;
    if (!query) refreshCounts();
    append(clear(list), spinner());
    clear(pager);
    try {
      if (query) {
        const answer = await api.post("/v1/memory/search", { query, namespace: ns(), k: 30, types: state.type ? [state.type] : [] });
        if (mine !== loads) return;
        append(clear(list), 
          h("div", { class: "row small muted" }, t("memories.matches", { count: answer.hits.length, query }), h("span", { class: "spacer" }),
            button(t("memories.clearSearch"), { kind: "ghost", onclick: () => { search.value = ""; state.query = ""; load(); } })),
          ...(answer.hits.length ? answer.hits.map((hit) => memoryCard(hit, open, [h("span", { class: "chip" }, t("memories.score", { value: num(hit.score, { minimumFractionDigits: 2, maximumFractionDigits: 2 }) }))]))
            : [emptyState(t("memories.nothingFound"), t("memories.nothingFoundHint"))]),
        );
        return;
      }
      const cursor = state.cursors[state.cursors.length - 1];
      const page = await api.get("/v1/memories", { namespace: ns(), type: state.type || undefined, status: state.status, layer: state.layer || undefined, limit: PAGE_SIZE, cursor });
      if (mine !== loads) return;
      append(clear(list), ...(page.memories.length ? page.memories.map((m) => memoryCard(m, open))
        : [emptyState(t("memories.none"), state.status === "active" ? t("memories.noneHint") : "")]));
      const number = state.cursors.length;
      append(pager, 
        button(t("memories.newer"), { kind: "ghost", iconName: "back", disabled: number === 1, onclick: () => { state.cursors.pop(); load(); } }),
        h("span", { class: "small muted", id: "page-number" }, t("memories.page", { number })),
        button(t("common.older"), { kind: "ghost", disabled: !page.next_cursor, onclick: () => { state.cursors.push(page.next_cursor); load(); } }),
      );
    } catch (error) {
      if (mine === loads && error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }

  function create() {
    const sheet = modal(t("memories.new"));
    append(sheet.body, memoryForm("new", { type: state.type || "note" }, async (values) => {
      values.fact_key ||= suggestFactKey(values.type, values.content);
      const answer = await api.post("/v1/memories", { ...values, namespace: ns() });
      sheet.close();
      toast(t(answer.created ? "memories.saved" : "memories.upserted"), { kind: "ok" });
      load();
    }, () => sheet.close()));
  }

  append(container, 
    pageHeader(t("memories.title"), t("memories.subtitle"),
      h("a", { class: "button", href: "#/starmap" }, icon("map", 18), t("memories.starMap")),
      button(t("memories.new"), { kind: "primary", iconName: "plus", onclick: create })),
    searchForm,
    h("div", { class: "row" }, h("div", { class: "spacer", style: { minWidth: 0 } }, chips), layerSelect, statusSelect),
    list, pager,
  );
  renderChips({});
  load();
}

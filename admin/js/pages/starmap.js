// Star map: live memories as stars coloured by type, relations as lines between them,
// people as four-pointed stars with a dashed line to each memory about them.
// Drag to pan, wheel or pinch to zoom, filter by type, search, click a star to open it;
// download the map as a standalone SVG or as Mermaid text.
import { api, ns } from "../api.js";
import { append, clear, h, icon, svg } from "../dom.js";
import { RELATION_COLOURS, label, typeColour } from "../format.js";
import { t } from "../i18n.js";
import { openMemory } from "../memory-view.js";
import { bounds, layout } from "../starmap/layout.js";
import { busy, errorBox, safely, saveFile, spinner } from "../ui.js";

const NODE_LIMIT = 400;
const LABEL_ZOOM = 1.6;
const open = (element) => {
  if (element.dataset.kind === "person") location.hash = "#/more/people";
  else openMemory(element.dataset.id, { onChange: () => {} });
};
const sparkle = (x, y, r) => Array.from({ length: 8 }, (_, step) => {
  const angle = (step * Math.PI) / 4 - Math.PI / 2;
  const reach = step % 2 === 0 ? r * 1.6 : r * 0.4;
  return `${x + reach * Math.cos(angle)},${y + reach * Math.sin(angle)}`;
}).join(" ");
const shorten = (text, size = 26) => (text.length > size ? `${text.slice(0, size - 1)}…` : text);

export function render(container) {
  const wrap = h("div", { class: "map-wrap" }, spinner(t("starmap.drawing")));
  append(container, wrap);
  const controller = new AbortController();
  draw(wrap, controller.signal).catch((error) => {
    if (error.status !== 401) append(clear(wrap), h("div", { style: { padding: "24px" } }, errorBox(error, () => render(clear(container)))));
  });
  return () => controller.abort();
}

function downloadButton(format, name) {
  const b = h("button", { class: "chip map-download", type: "button", id: `map-download-${format}`, "aria-label": t("starmap.download", { format: name }) },
    icon("download", 16), h("span", { translate: "no" }, name));
  b.addEventListener("click", () => busy(b, safely(async () => {
    const file = await api.get("/v1/admin/starmap", { namespace: ns(), format, limit: NODE_LIMIT });
    saveFile(file.filename, file.content, file.media_type);
  })));
  return b;
}

async function draw(wrap, signal) {
  const graph = await api.get("/v1/admin/graph", { namespace: ns(), limit: NODE_LIMIT });
  const nodes = graph.nodes.map((n) => ({ ...n, radius: 5 + (n.importance || 0) * 9 + (n.pinned ? 2 : 0) }));
  const edges = graph.edges.map((e) => ({ ...e, source: e.source_id, target: e.target_id }));
  layout(nodes, edges);
  const byId = new Map(nodes.map((n) => [n.id, n]));

  const view = { x: 0, y: 0, k: 1 };
  const hiddenTypes = new Set();
  let query = "";

  const edgeLayer = svg("g", { class: "edges" }, edges.map((e) => {
    const a = byId.get(e.source);
    const b = byId.get(e.target);
    return svg("line", { class: ["map-edge", e.relation], x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: RELATION_COLOURS[e.relation] || "#94a3b8",
      "stroke-width": 1 + (e.weight || 0) * 1.5, dataset: { source: e.source, target: e.target, relation: e.relation } },
    svg("title", {}, label("relations", e.relation)));
  }));
  // A memory is a round star; a person a four-pointed one, and opening her goes to People.
  const nodeLayer = svg("g", { class: "nodes" }, nodes.map((n) => {
    const common = { fill: typeColour(n.type), tabindex: 0, role: "button",
      "aria-label": t("starmap.star", { type: label("types", n.type), content: shorten(n.content, 80) }),
      dataset: { id: n.id, type: n.type, kind: n.kind || "memory" } };
    const shape = n.kind === "person"
      ? svg("polygon", { ...common, class: ["map-node", "map-person"], points: sparkle(n.x, n.y, n.radius) })
      : svg("circle", { ...common, class: ["map-node", n.pinned && "pinned"], cx: n.x, cy: n.y, r: n.radius });
    return append(shape, svg("title", {}, t("starmap.starTitle", { type: label("types", n.type), content: n.content })));
  }));
  const labelLayer = svg("g", { class: "labels" }, nodes.map((n) =>
    svg("text", { class: "map-label", translate: "no", x: n.x + n.radius + 4, y: n.y, "dominant-baseline": "middle", dataset: { id: n.id, type: n.type, important: String(n.pinned || n.importance >= 0.7) } },
      shorten(n.content))));
  const scene = svg("g", {}, edgeLayer, nodeLayer, labelLayer);
  const map = svg("svg", { class: "map", id: "starmap", role: "group", "aria-label": t("starmap.label", { count: nodes.length }) }, scene);

  const status = h("div", { class: "map-status", id: "map-status" });
  const search = h("input", { type: "search", placeholder: t("starmap.findPlaceholder"), "aria-label": t("starmap.search"), id: "map-search" });
  const filters = h("div", { class: "chips chips-scroll", role: "toolbar", "aria-label": t("memories.filterByType") }, [...new Set(nodes.map((n) => n.type))].sort().map((type) => {
    const chip = h("button", { class: "chip type-chip map-filter", type: "button", "aria-pressed": "true", dataset: { type },
      onclick: () => {
        if (hiddenTypes.has(type)) hiddenTypes.delete(type); else hiddenTypes.add(type);
        chip.setAttribute("aria-pressed", String(!hiddenTypes.has(type)));
        refresh();
      } }, label("types", type));
    chip.style.setProperty("--type", typeColour(type));
    return chip;
  }));
  const zoomBy = (factor) => zoomAt(map.clientWidth / 2, map.clientHeight / 2, factor);
  append(clear(wrap), 
    map,
    h("div", { class: "map-toolbar" },
      h("div", { class: "map-panel" }, h("a", { class: "icon-button", href: "#/memories", "aria-label": t("starmap.back") }, icon("back")),
        icon("search", 18), search),
      filters,
      h("div", { class: "chips" }, downloadButton("svg", "SVG"), downloadButton("mermaid", "Mermaid"))),
    h("div", { class: "map-zoom" },
      h("button", { class: "icon-button", type: "button", "aria-label": t("starmap.zoomIn"), onclick: () => zoomBy(1.3) }, icon("zoomIn")),
      h("button", { class: "icon-button", type: "button", "aria-label": t("starmap.zoomOut"), onclick: () => zoomBy(1 / 1.3) }, icon("zoomOut")),
      h("button", { class: "icon-button", type: "button", "aria-label": t("starmap.fit"), onclick: fit }, icon("fit"))),
    status,
  );
  if (!nodes.length) {
    append(wrap, h("div", { class: "empty", style: { position: "absolute", inset: "40% 0 auto" } },
      h("p", { class: "empty-title" }, t("starmap.empty")), h("p", {}, t("starmap.emptyHint"))));
  }

  function apply() {
    scene.setAttribute("transform", `translate(${view.x} ${view.y}) scale(${view.k})`);
    // Labels keep their size on screen whatever the zoom.
    labelLayer.style.fontSize = `${11 / view.k}px`;
    labelLayer.style.strokeWidth = `${3 / view.k}px`;
    const all = view.k >= LABEL_ZOOM || nodes.length <= 40;
    for (const text of labelLayer.children) {
      text.style.display = hiddenTypes.has(text.dataset.type) || (!all && text.dataset.important !== "true") ? "none" : "";
    }
  }

  function fit() {
    const visible = nodes.filter((n) => !hiddenTypes.has(n.type));
    const box = bounds(visible.length ? visible : nodes);
    box.width += 120; // the labels to the right of the rightmost stars
    const width = map.clientWidth || 800;
    const height = map.clientHeight || 600;
    const top = 110; // room for the toolbar
    view.k = Math.min(width / box.width, (height - top) / box.height, 1.5);
    view.x = width / 2 - (box.x + box.width / 2) * view.k;
    view.y = top + (height - top) / 2 - (box.y + box.height / 2) * view.k;
    apply();
  }

  function zoomAt(px, py, factor) {
    const k = Math.min(8, Math.max(0.15, view.k * factor));
    view.x = px - ((px - view.x) * k) / view.k;
    view.y = py - ((py - view.y) * k) / view.k;
    view.k = k;
    apply();
  }

  function refresh() {
    const q = query.toLowerCase();
    let matches = 0;
    for (const circle of nodeLayer.children) {
      const node = byId.get(circle.dataset.id);
      const hidden = hiddenTypes.has(node.type);
      const hit = q && (node.content.toLowerCase().includes(q) || (node.fact_key || "").toLowerCase().includes(q));
      if (hit && !hidden) matches++;
      circle.style.display = hidden ? "none" : "";
      circle.classList.toggle("match", Boolean(hit));
      circle.classList.toggle("dim", Boolean(q) && !hit);
    }
    for (const line of edgeLayer.children) {
      const hidden = hiddenTypes.has(byId.get(line.dataset.source).type) || hiddenTypes.has(byId.get(line.dataset.target).type);
      line.style.display = hidden ? "none" : "";
      line.classList.toggle("dim", Boolean(q));
    }
    for (const text of labelLayer.children) text.classList.toggle("dim", Boolean(q) && !nodeLayer.querySelector(`[data-id="${CSS.escape(text.dataset.id)}"]`).classList.contains("match"));
    const shown = nodes.filter((n) => !hiddenTypes.has(n.type) && n.kind !== "person").length;
    const people = nodes.filter((n) => !hiddenTypes.has(n.type) && n.kind === "person").length;
    const relations = edges.filter((e) => e.relation !== "about").length;
    const parts = [t("starmap.memories", { count: shown }), t("starmap.relations", { count: relations }),
      people ? t("starmap.people", { count: people }) : null,
      graph.truncated ? t("starmap.truncated", { count: NODE_LIMIT }) : null, q ? t("starmap.matches", { count: matches }) : null];
    append(clear(status), parts.filter(Boolean).flatMap((part, i) => (i ? [" · ", part] : [part])));
    apply();
  }

  search.addEventListener("input", () => { query = search.value.trim(); refresh(); });
  search.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const first = nodeLayer.querySelector(".map-node.match");
    if (!first) return;
    const node = byId.get(first.dataset.id);
    view.k = Math.max(view.k, 2);
    view.x = map.clientWidth / 2 - node.x * view.k;
    view.y = map.clientHeight / 2 - node.y * view.k;
    apply();
  });

  // Pan with one pointer, pinch with two; a press that barely moves on a star opens it.
  const pointers = new Map();
  let moved = 0;
  let pinch = null;
  map.addEventListener("pointerdown", (event) => {
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    map.setPointerCapture(event.pointerId);
    moved = 0;
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = { distance: Math.hypot(a.x - b.x, a.y - b.y) };
    }
    map.classList.add("dragging");
  }, { signal });
  map.addEventListener("pointermove", (event) => {
    const last = pointers.get(event.pointerId);
    if (!last) return;
    const dx = event.clientX - last.x;
    const dy = event.clientY - last.y;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    moved += Math.abs(dx) + Math.abs(dy);
    if (pointers.size === 2 && pinch) {
      const [a, b] = [...pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      const rect = map.getBoundingClientRect();
      zoomAt((a.x + b.x) / 2 - rect.left, (a.y + b.y) / 2 - rect.top, distance / (pinch.distance || distance));
      pinch.distance = distance;
    } else if (pointers.size === 1) {
      view.x += dx;
      view.y += dy;
      apply();
    }
  }, { signal });
  const release = (event) => {
    const wasTap = pointers.size === 1 && moved < 6;
    pointers.delete(event.pointerId);
    if (pointers.size < 2) pinch = null;
    map.classList.remove("dragging");
    const target = document.elementFromPoint(event.clientX, event.clientY);
    if (wasTap && event.type === "pointerup" && target?.classList?.contains("map-node")) open(target);
  };
  map.addEventListener("pointerup", release, { signal });
  map.addEventListener("pointercancel", release, { signal });
  map.addEventListener("wheel", (event) => {
    event.preventDefault();
    const rect = map.getBoundingClientRect();
    zoomAt(event.clientX - rect.left, event.clientY - rect.top, Math.exp(-event.deltaY * 0.0015));
  }, { passive: false, signal });
  nodeLayer.addEventListener("keydown", (event) => {
    if ((event.key === "Enter" || event.key === " ") && event.target.dataset.id) {
      event.preventDefault();
      open(event.target);
    }
  }, { signal });
  window.addEventListener("resize", fit, { signal });

  refresh();
  fit();
}

// The shell: tabs, hash routes, theme, and what a 401 does (back to Settings, saying why).
import { onUnauthorized } from "./api.js";
import { applyTheme, loadConfig } from "./config.js";
import { append, clear, h, icon } from "./dom.js";
import { flushPending } from "./ui.js";
import { refreshPendingBadge } from "./badge.js";
import { parseRoute } from "./router.js";

const TABS = [
  { id: "today", label: "Today", icon: "today" },
  { id: "review", label: "Review", icon: "review" },
  { id: "memories", label: "Memories", icon: "memories" },
  { id: "more", label: "More", icon: "more" },
  { id: "settings", label: "Settings", icon: "settings" },
];
// Pages that live under a tab without being one.
const PARENT = { starmap: "memories" };

const PAGES = {
  today: () => import("./pages/today.js"),
  review: () => import("./pages/review.js"),
  memories: () => import("./pages/memories.js"),
  starmap: () => import("./pages/starmap.js"),
  more: () => import("./pages/more.js"),
  settings: () => import("./pages/settings.js"),
};

let cleanup = null;
let renderToken = 0;

const route = () => parseRoute(location.hash, (page) => page in PAGES);

function buildTabs() {
  const nav = document.getElementById("tabs");
  append(clear(nav), 
    h("div", { class: "brand" }, h("img", { src: "icon.svg", alt: "", width: 28, height: 28 }), h("span", {}, "companion-memory")),
    ...TABS.map((tab) =>
      h("a", { class: "tab", href: `#/${tab.id}`, dataset: { tab: tab.id } },
        icon(tab.icon, 22), h("span", { class: "tab-label" }, tab.label),
        tab.id === "review" ? h("span", { class: "badge", id: "pending-badge", hidden: true }) : null),
    ),
  );
}

async function render() {
  const token = ++renderToken;
  flushPending();
  if (cleanup) {
    try { cleanup(); } catch { /* a page's cleanup must not stop the next page */ }
    cleanup = null;
  }
  const current = route();
  if (!loadConfig().apiKey && current.page !== "settings") {
    location.replace("#/settings?reason=welcome");
    return;
  }
  const active = PARENT[current.page] || current.page;
  document.querySelectorAll(".tab").forEach((tab) => {
    if (tab.dataset.tab === active) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  });
  document.body.dataset.page = current.page;
  const main = document.getElementById("main");
  const container = h("div", { class: "page", dataset: { page: current.page } });
  append(clear(main), container);
  main.scrollTop = 0;
  window.scrollTo(0, 0);
  const module = await PAGES[current.page]();
  if (token !== renderToken) return;
  cleanup = (await module.render(container, current)) || null;
}

function start() {
  applyTheme();
  buildTabs();
  onUnauthorized((error) => {
    const reason = error.code === "missing_key" ? "welcome" : "unauthorized";
    if (route().page !== "settings" || reason === "unauthorized") location.hash = `#/settings?reason=${reason}`;
  });
  window.addEventListener("hashchange", render);
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applyTheme());
  render();
  if (loadConfig().apiKey) refreshPendingBadge();
}

start();

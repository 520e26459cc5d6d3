// The shell: tabs, hash routes, theme, language, and what a 401 does (back to Settings, saying why).
import { onUnauthorized } from "./api.js";
import { applyTheme, loadConfig, serverUrl } from "./config.js";
import { append, clear, h, icon } from "./dom.js";
import { followServerTimeZone, setLanguage, t } from "./i18n.js";
import { flushPending } from "./ui.js";
import { refreshPendingBadge } from "./badge.js";
import { parseRoute } from "./router.js";

const TABS = ["today", "review", "memories", "conversations", "more", "settings"];
// Pages that live under a tab without being one.
const PARENT = { starmap: "memories" };

const PAGES = {
  today: () => import("./pages/today.js"),
  review: () => import("./pages/review.js"),
  memories: () => import("./pages/memories.js"),
  starmap: () => import("./pages/starmap.js"),
  conversations: () => import("./pages/conversations.js"),
  more: () => import("./pages/more.js"),
  settings: () => import("./pages/settings.js"),
};

let cleanup = null;
let renderToken = 0;

const route = () => parseRoute(location.hash, (page) => page in PAGES);

function buildTabs() {
  const nav = document.getElementById("tabs");
  nav.setAttribute("aria-label", t("app.sections"));
  document.title = t("app.title");
  const badge = document.getElementById("pending-badge");
  append(clear(nav),
    h("div", { class: "brand" }, h("img", { src: "icons/icon.svg", alt: "", width: 28, height: 28 }), h("span", { translate: "no" }, "companion-memory")),
    ...TABS.map((tab) =>
      h("a", { class: "tab", href: `#/${tab}`, dataset: { tab } },
        icon(tab, 22), h("span", { class: "tab-label" }, t(`tabs.${tab}`)),
        // The badge keeps its count when the language changes.
        tab === "review" ? badge || h("span", { class: "badge", id: "pending-badge", hidden: true }) : null),
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

async function start() {
  applyTheme();
  setLanguage(loadConfig().language);
  buildTabs();
  await followServerTimeZone(serverUrl());
  onUnauthorized((error) => {
    const reason = error.code === "missing_key" ? "welcome" : "unauthorized";
    if (route().page !== "settings" || reason === "unauthorized") location.hash = `#/settings?reason=${reason}`;
  });
  window.addEventListener("hashchange", render);
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applyTheme());
  // Settings switched the language (or the server): every word and date again.
  window.addEventListener("panel:relabel", async () => {
    setLanguage(loadConfig().language);
    buildTabs();
    await followServerTimeZone(serverUrl());
    render();
  });
  render();
  if (loadConfig().apiKey) refreshPendingBadge();
  // Only an offline page (sw.js): the API is never cached.
  navigator.serviceWorker?.register("sw.js").catch(() => {});
}

start();

// The panel's settings, kept in this browser's localStorage (never in a URL or a cookie).
const STORAGE_KEY = "companion-memory.admin";
// language "": follow the browser's.
const DEFAULTS = { server: "", apiKey: "", namespace: "default", theme: "system", language: "" };

export function loadConfig() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) || "{}");
    return { ...DEFAULTS, ...(saved && typeof saved === "object" ? saved : {}) };
  } catch {
    return { ...DEFAULTS };
  }
}

export function saveConfig(changes) {
  const next = { ...loadConfig(), ...changes };
  localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  return next;
}

/** The API's base URL: the configured server, else the origin that served the panel. */
export function serverUrl(config = loadConfig()) {
  const configured = (config.server || "").trim().replace(/\/+$/, "");
  return configured || location.origin;
}

export function namespace() {
  return loadConfig().namespace || "default";
}

/** Sets the page's theme; "system" follows the device (app.js re-applies it on changes). */
export function applyTheme(theme = loadConfig().theme) {
  const system = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  const chosen = ["light", "dark"].includes(theme) ? theme : system;
  document.documentElement.dataset.theme = chosen;
  // The browser's bar follows the chosen theme, not only the device's.
  for (const meta of document.querySelectorAll('meta[name="theme-color"]')) {
    meta.content = THEME_COLOURS[theme] || THEME_COLOURS[meta.media.includes("dark") ? "dark" : "light"];
  }
}

// The page's background in each theme (css/app.css --bg).
const THEME_COLOURS = { light: "#f6f7fb", dark: "#0f1117" };

// The panel's settings, kept in this browser's localStorage (never in a URL or a cookie).
const STORAGE_KEY = "companion-memory.admin";
const DEFAULTS = { server: "", apiKey: "", namespace: "default", theme: "system" };

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
  document.documentElement.dataset.theme = ["light", "dark"].includes(theme) ? theme : system;
}

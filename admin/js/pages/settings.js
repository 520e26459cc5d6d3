// Settings: where the server is, the API key (kept in this browser only), namespace, theme.
import { api } from "../api.js";
import { applyTheme, loadConfig, saveConfig, serverUrl } from "../config.js";
import { append, h } from "../dom.js";
import { refreshPendingBadge } from "../badge.js";
import { connectedApps } from "../connected-apps.js";
import { busy, button, field, pageHeader, segmented, toast } from "../ui.js";

const REASONS = {
  welcome: ["notice", "Welcome! Enter the API key your server printed on its first start (or your CHATBOX_API_KEY) to open the panel."],
  unauthorized: ["notice notice-error", "The server refused the API key (401 Unauthorized). Check the key below and save it again."],
};

export function render(container, route) {
  const config = loadConfig();
  const reason = REASONS[route.params.get("reason")];
  const status = h("p", { class: "small muted", id: "connection-status", role: "status" });

  const server = h("input", { type: "url", name: "server", value: config.server, placeholder: location.origin, autocomplete: "url" });
  const key = h("input", { type: "password", name: "apiKey", value: config.apiKey, placeholder: "cm-…", autocomplete: "off", spellcheck: "false" });
  const namespace = h("input", { type: "text", name: "namespace", value: config.namespace, placeholder: "default" });
  const reveal = h("button", {
    class: "button button-small button-ghost", type: "button",
    onclick: () => { key.type = key.type === "password" ? "text" : "password"; reveal.textContent = key.type === "password" ? "Show" : "Hide"; },
  }, "Show");
  const save = button("Save and connect", { kind: "primary", type: "submit", iconName: "check" });

  const form = h(
    "form",
    {
      class: "form", autocomplete: "off",
      onsubmit: async (event) => {
        event.preventDefault();
        const ns = namespace.value.trim() || "default";
        if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(ns)) {
          status.textContent = "A namespace is letters, digits and . _ : - (at most 64 characters).";
          return;
        }
        saveConfig({ server: server.value.trim(), apiKey: key.value.trim(), namespace: ns });
        await busy(save, async () => {
          status.textContent = `Connecting to ${serverUrl()}…`;
          try {
            await api.get("/v1/memories", { namespace: ns, limit: 1 });
            status.textContent = `Connected to ${serverUrl()}.`;
            toast("Connected. Your key is saved in this browser.", { kind: "ok" });
            refreshPendingBadge();
            location.hash = "#/today";
          } catch (error) {
            status.textContent = error.message;
          }
        });
      },
    },
    field("Server URL", server, "Leave empty to use the server this page came from."),
    field("API key", h("div", { class: "row" }, h("div", { class: "spacer" }, key), reveal),
      "Kept in this browser's local storage and sent only in the Authorization header."),
    field("Namespace", namespace, "Whose memories to show; most people keep “default”."),
    h("div", { class: "form-actions" },
      button("Forget key", {
        kind: "danger", onclick: () => {
          saveConfig({ apiKey: "" });
          key.value = "";
          status.textContent = "The key was removed from this browser.";
        },
      }),
      save),
    status,
  );

  const theme = segmented(
    [["system", "System"], ["light", "Light"], ["dark", "Dark"]],
    config.theme,
    (value) => { saveConfig({ theme: value }); applyTheme(value); },
    "Theme",
  );

  append(container, 
    pageHeader("Settings", "Connection, key and look of this panel."),
    reason ? h("p", { class: reason[0], role: "alert", id: "settings-reason" }, reason[1]) : null,
    h("section", { class: "card" }, h("h2", {}, "Connection"), form),
    config.apiKey ? connectedApps() : null,
    h("section", { class: "card" }, h("h2", {}, "Theme"), theme),
    h("section", { class: "card small muted" }, h("h2", {}, "About"),
      h("p", {}, "companion-memory admin panel. Everything here talks to the REST API with your key; nothing is loaded from anywhere else.")),
  );
  if (!config.apiKey) key.focus();
}

// Settings: where the server is, the API key (kept in this browser only), namespace, theme, language.
import { api } from "../api.js";
import { applyTheme, loadConfig, saveConfig, serverUrl } from "../config.js";
import { append, h } from "../dom.js";
import { refreshPendingBadge } from "../badge.js";
import { LANGUAGES, section } from "../i18n.js";
import { connectedApps } from "../connected-apps.js";
import { busy, button, field, pageHeader, segmented, toast } from "../ui.js";

const s = section("settings");
const REASONS = { welcome: "notice", unauthorized: "notice notice-error" };
// Each language is named in itself, so that anyone can find their own.
const LANGUAGE_NAMES = { "zh-CN": "简体中文", en: "English" };

export function render(container, route) {
  const config = loadConfig();
  const reason = route.params.get("reason");
  const status = h("p", { class: "small muted", id: "connection-status", role: "status" });

  // Their placeholders are example values, not words.
  const server = h("input", { type: "url", name: "server", value: config.server, placeholder: location.origin, autocomplete: "url", translate: "no" });
  const key = h("input", { type: "password", name: "apiKey", value: config.apiKey, placeholder: "cm-…", autocomplete: "off", spellcheck: "false", translate: "no" });
  const namespace = h("input", { type: "text", name: "namespace", value: config.namespace, placeholder: "default", translate: "no" });
  const reveal = h("button", {
    class: "button button-small button-ghost", type: "button", "aria-pressed": "false",
    onclick: () => {
      key.type = key.type === "password" ? "text" : "password";
      reveal.setAttribute("aria-pressed", String(key.type === "text"));
      reveal.textContent = s(key.type === "password" ? "show" : "hide");
    },
  }, s("show"));
  const save = button(s("save"), { kind: "primary", type: "submit", iconName: "check" });

  const form = h(
    "form",
    {
      class: "form", autocomplete: "off",
      onsubmit: async (event) => {
        event.preventDefault();
        const ns = namespace.value.trim() || "default";
        if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(ns)) {
          status.textContent = s("badNamespace");
          return;
        }
        saveConfig({ server: server.value.trim(), apiKey: key.value.trim(), namespace: ns });
        await busy(save, async () => {
          status.textContent = s("connecting", { server: serverUrl() });
          try {
            await api.get("/v1/memories", { namespace: ns, limit: 1 });
            status.textContent = s("connected", { server: serverUrl() });
            toast(s("connectedToast"), { kind: "ok" });
            refreshPendingBadge();
            // The server may be another one now: its time zone.
            window.dispatchEvent(new Event("panel:relabel"));
            location.hash = "#/today";
          } catch (error) {
            status.textContent = error.message;
          }
        });
      },
    },
    field(s("server"), server, s("serverHint")),
    field(s("key"), h("div", { class: "row" }, h("div", { class: "spacer" }, key), reveal), s("keyHint")),
    field(s("namespace"), namespace, s("namespaceHint")),
    h("div", { class: "form-actions" },
      button(s("forget"), {
        kind: "danger", onclick: () => {
          saveConfig({ apiKey: "" });
          key.value = "";
          status.textContent = s("forgotten");
        },
      }),
      save),
    status,
  );

  const theme = segmented(
    ["system", "light", "dark"].map((value) => [value, s(`themes.${value}`)]),
    config.theme,
    (value) => { saveConfig({ theme: value }); applyTheme(value); },
    s("theme"),
  );

  const language = segmented(
    [["", s("followBrowser")], ...LANGUAGES.map((tag) => [tag, h("span", { lang: tag, translate: "no" }, LANGUAGE_NAMES[tag])])],
    LANGUAGES.includes(config.language) ? config.language : "",
    (value) => {
      saveConfig({ language: value });
      window.dispatchEvent(new Event("panel:relabel"));
    },
    s("language"),
  );
  language.id = "language";

  append(container,
    pageHeader(s("title"), s("subtitle")),
    REASONS[reason] ? h("p", { class: REASONS[reason], role: "alert", id: "settings-reason" }, s(`reasons.${reason}`)) : null,
    h("section", { class: "card" }, h("h2", {}, s("connection")), form),
    h("section", { class: "card" }, h("h2", {}, s("language")), language),
    h("section", { class: "card" }, h("h2", {}, s("theme")), theme),
    config.apiKey ? connectedApps() : null,
    h("section", { class: "card small muted" }, h("h2", {}, s("about")), h("p", {}, s("aboutText")),
      h("p", { id: "about-her" }, s("aboutHer"))),
  );
  if (!config.apiKey) key.focus();
}

// The OAuth consent page: /oauth/authorize sends the browser here with ?request=<id>. The owner
// signs in with the owner key, sees who asks, where the answer goes and what it may do, and
// approves or denies. It talks only to the server that served it: the consent cookie that
// proves this browser began the request belongs to that server.
import { applyTheme, loadConfig, saveConfig } from "./config.js";
import { append, clear, h } from "./dom.js";
import { followServerTimeZone, section, setLanguage, tOr, tWith, when } from "./i18n.js";
import { busy, button, field } from "./ui.js";

const s = section("authorize");
// What the server or the app said, shown as it is (never translated).
const verbatim = (tag, value, attrs = {}) => h(tag, { translate: "no", ...attrs }, value);

const root = document.getElementById("consent");
const requestId = new URLSearchParams(location.search).get("request");
// The request's deadline is shown in the server's zone, as the panel shows its times.
const zoneKnown = followServerTimeZone(location.origin);

function say(text, kind = "notice") {
  append(clear(root), h("h1", {}, s("title")), h("p", { class: kind, role: "status", id: "consent-status" }, text));
}

function failure(data, status) {
  return tWith("authorize.failed", { error: verbatim("span", (data && data.error && data.error.message) || String(status)) });
}

async function call(method, path, key, body) {
  const headers = { Authorization: `Bearer ${key}`, Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(location.origin + path, {
    method, headers, credentials: "same-origin", cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  return { status: response.status, data };
}

function signIn(problem) {
  const key = h("input", { type: "password", name: "ownerKey", autocomplete: "off", spellcheck: "false", required: true });
  const remember = h("input", { type: "checkbox", name: "remember" });
  const next = button(s("next"), { kind: "primary", type: "submit" });
  const form = h("form", {
    class: "form", id: "sign-in",
    onsubmit: (event) => {
      event.preventDefault();
      busy(next, () => show(key.value.trim(), remember.checked));
    },
  },
  field(s("keyLabel"), key),
  h("label", { class: "check" }, remember, " ", s("remember")),
  h("div", { class: "form-actions" }, next));
  append(clear(root), h("h1", {}, s("title")),
    problem ? h("p", { class: "notice notice-error", role: "alert" }, problem) : h("p", {}, s("signIn")),
    h("section", { class: "card" }, form));
  key.focus();
}

async function show(key, remember) {
  const { status, data } = await call("GET", `/v1/oauth/requests/${encodeURIComponent(requestId)}`, key);
  if (status === 401 || status === 403) return signIn(s("wrongKey"));
  if (status === 404) return say(s("expired"), "notice notice-warn");
  if (status !== 200) return say(failure(data, status), "notice notice-error");
  if (remember) saveConfig({ apiKey: key });
  await zoneKnown;
  const approve = button(s("approve"), { kind: "primary", id: "approve", onclick: () => decide(key, true, approve, deny) });
  const deny = button(s("deny"), { id: "deny", onclick: () => decide(key, false, deny, approve) });
  append(clear(root),
    h("h1", {}, s("title")),
    h("section", { class: "card", id: "consent-card" },
      h("h2", { id: "client-name" }, tWith("authorize.asks", { name: verbatim("span", data.client_name) })),
      h("p", { class: "small muted" }, data.verified_host
        ? tWith("authorize.verified", { host: verbatim("span", data.verified_host) }) : s("unverified")),
      h("p", {}, s("redirect")),
      verbatim("p", data.redirect_uri, { class: "mono", id: "redirect-uri" }),
      h("p", {}, s("scopesTitle")),
      h("ul", { id: "scopes" }, data.scopes.map((scope) => h("li", {}, tOr(`authorize.scopes.${scope}`, scope)))),
      h("p", { class: "small muted" }, s("until", { time: when(data.expires_at) })),
      h("div", { class: "form-actions" }, deny, approve)));
}

async function decide(key, approve, pressed, other) {
  other.disabled = true;
  await busy(pressed, async () => {
    const { status, data } = await call(
      "POST", `/v1/oauth/requests/${encodeURIComponent(requestId)}/decision`, key, { approve });
    if (status === 200) {
      say(approve ? s("approved") : s("denied"), "notice notice-ok");
      location.assign(data.redirect_to);
    } else if (status === 403 && data && data.error && data.error.code === "csrf_failed") {
      say(s("otherBrowser"), "notice notice-error");
    } else if (status === 404) {
      say(s("expired"), "notice notice-warn");
    } else {
      say(failure(data, status), "notice notice-error");
    }
  });
}

function start() {
  applyTheme();
  // The panel's language (its saved choice, else the browser's): the page is part of it.
  setLanguage(loadConfig().language);
  document.title = s("pageTitle");
  // A page that frames this one could trick a click onto Approve (the CSP frame-ancestors
  // directive cannot be set from a <meta> element, and static files carry no headers).
  if (window.top !== window.self) return say(s("framed"), "notice notice-error");
  if (!requestId) return say(s("noRequest"), "notice notice-warn");
  const config = loadConfig();
  // The panel's saved key is for this server only when the panel talks to this server.
  const ownKey = !config.server || config.server.replace(/\/+$/, "") === location.origin;
  if (ownKey && config.apiKey) show(config.apiKey, false);
  else signIn();
}

start();

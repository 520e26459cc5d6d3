// The OAuth consent page: /oauth/authorize sends the browser here with ?request=<id>. The owner
// signs in with the owner key, sees who asks, where the answer goes and what it may do, and
// approves or denies. It talks only to the server that served it: the consent cookie that
// proves this browser began the request belongs to that server.
import { applyTheme, loadConfig, saveConfig } from "./config.js";
import { append, clear, h } from "./dom.js";
import { busy, button, field } from "./ui.js";

// Every string this page shows, in one place.
export const STRINGS = {
  title: "Connect an app",
  signIn: "Sign in with the owner key (CHATBOX_API_KEY) to answer this request.",
  keyLabel: "Owner key",
  remember: "Remember the key in this browser (as the admin panel does)",
  next: "Continue",
  wrongKey: "That key cannot approve apps: use the owner key (CHATBOX_API_KEY).",
  framed: "For your safety this page does not work inside another page. Open it in its own tab.",
  noRequest: "There is no request to answer here. Start again from the app you want to connect.",
  expired: "This request expired or was already answered. Start again from the app.",
  otherBrowser: "This request was started in another browser (or another site tried to answer it). Start again from the app.",
  failed: "Something went wrong: ",
  asks: (name) => `${name} wants to use your memory`,
  verified: (host) => `Identified by ${host}.`,
  unverified: "The app named itself; nothing confirms the name. Check the address below.",
  redirect: "After you answer, your browser goes to",
  scopesTitle: "It will be able to",
  scopes: {
    "memory:read": "search, recall and read your memories, diary, glossary and plans",
    "memory:write": "write, update, archive and delete memories, and add to your glossary, plans and todos",
  },
  until: (when) => `This request expires at ${when}.`,
  approve: "Approve",
  deny: "Deny",
  approved: "Approved. Returning to the app…",
  denied: "Denied. Returning to the app…",
};

const root = document.getElementById("consent");
const requestId = new URLSearchParams(location.search).get("request");

function say(text, kind = "notice") {
  append(clear(root), h("h1", {}, STRINGS.title), h("p", { class: kind, role: "status", id: "consent-status" }, text));
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
  const next = button(STRINGS.next, { kind: "primary", type: "submit" });
  const form = h("form", {
    class: "form", id: "sign-in",
    onsubmit: (event) => {
      event.preventDefault();
      busy(next, () => show(key.value.trim(), remember.checked));
    },
  },
  field(STRINGS.keyLabel, key),
  h("label", { class: "check" }, remember, " ", STRINGS.remember),
  h("div", { class: "form-actions" }, next));
  append(clear(root), h("h1", {}, STRINGS.title),
    problem ? h("p", { class: "notice notice-error", role: "alert" }, problem) : h("p", {}, STRINGS.signIn),
    h("section", { class: "card" }, form));
  key.focus();
}

async function show(key, remember) {
  const { status, data } = await call("GET", `/v1/oauth/requests/${encodeURIComponent(requestId)}`, key);
  if (status === 401 || status === 403) return signIn(STRINGS.wrongKey);
  if (status === 404) return say(STRINGS.expired, "notice notice-warn");
  if (status !== 200) return say(STRINGS.failed + ((data && data.error && data.error.message) || status), "notice notice-error");
  if (remember) saveConfig({ apiKey: key });
  const approve = button(STRINGS.approve, { kind: "primary", id: "approve", onclick: () => decide(key, true, approve, deny) });
  const deny = button(STRINGS.deny, { id: "deny", onclick: () => decide(key, false, deny, approve) });
  append(clear(root),
    h("h1", {}, STRINGS.title),
    h("section", { class: "card", id: "consent-card" },
      h("h2", { id: "client-name" }, STRINGS.asks(data.client_name)),
      h("p", { class: "small muted" }, data.verified_host ? STRINGS.verified(data.verified_host) : STRINGS.unverified),
      h("p", {}, STRINGS.redirect),
      h("p", { class: "mono", id: "redirect-uri" }, data.redirect_uri),
      h("p", {}, STRINGS.scopesTitle),
      h("ul", { id: "scopes" }, data.scopes.map((scope) => h("li", {}, STRINGS.scopes[scope] || scope))),
      h("p", { class: "small muted" }, STRINGS.until(new Date(data.expires_at).toLocaleTimeString())),
      h("div", { class: "form-actions" }, deny, approve)));
}

async function decide(key, approve, pressed, other) {
  other.disabled = true;
  await busy(pressed, async () => {
    const { status, data } = await call(
      "POST", `/v1/oauth/requests/${encodeURIComponent(requestId)}/decision`, key, { approve });
    if (status === 200) {
      say(approve ? STRINGS.approved : STRINGS.denied, "notice notice-ok");
      location.assign(data.redirect_to);
    } else if (status === 403 && data && data.error && data.error.code === "csrf_failed") {
      say(STRINGS.otherBrowser, "notice notice-error");
    } else if (status === 404) {
      say(STRINGS.expired, "notice notice-warn");
    } else {
      say(STRINGS.failed + ((data && data.error && data.error.message) || status), "notice notice-error");
    }
  });
}

function start() {
  applyTheme();
  // A page that frames this one could trick a click onto Approve (the CSP frame-ancestors
  // directive cannot be set from a <meta> element, and static files carry no headers).
  if (window.top !== window.self) return say(STRINGS.framed, "notice notice-error");
  if (!requestId) return say(STRINGS.noRequest, "notice notice-warn");
  const config = loadConfig();
  // The panel's saved key is for this server only when the panel talks to this server.
  const ownKey = !config.server || config.server.replace(/\/+$/, "") === location.origin;
  if (ownKey && config.apiKey) show(config.apiKey, false);
  else signIn();
}

start();

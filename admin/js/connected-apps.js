// The apps connected through OAuth (Claude, ChatGPT, mcp-remote…): what each may do, when it
// last used its access, and a button that cuts it off at once. Shown on the Settings page.
import { api } from "./api.js";
import { append, clear, h } from "./dom.js";
import { when } from "./format.js";
import { busy, button, toast } from "./ui.js";

// Every string this section shows, in one place.
export const STRINGS = {
  title: "Connected apps",
  intro: "Apps you approved through OAuth. Each may read and write memories as the MCP key can.",
  none: "No app is connected. Add this server's /mcp address to an OAuth-capable MCP client to connect one.",
  loading: "Loading…",
  failed: "Could not load the connected apps: ",
  lastUsed: (value) => (value ? `Last used ${when(value)}` : "Not used yet"),
  since: (value) => `approved ${when(value)}`,
  returnsTo: (uris) => `Answers go to ${uris.join(", ")}`,
  may: (scopes) => `May: ${scopes.join(", ")}`,
  revoke: "Revoke",
  confirm: (name) => `Disconnect ${name}? Its access stops at once; it must be approved again to come back.`,
  revoked: (name) => `${name} is disconnected.`,
};

export function connectedApps() {
  const list = h("div", { class: "list", id: "connected-apps" }, h("p", { class: "small muted" }, STRINGS.loading));
  load(list);
  return h("section", { class: "card" }, h("h2", {}, STRINGS.title), h("p", { class: "small muted" }, STRINGS.intro), list);
}

async function load(list) {
  let apps;
  try {
    apps = (await api.get("/v1/oauth/apps")).apps;
  } catch (error) {
    append(clear(list), h("p", { class: "notice notice-error" }, STRINGS.failed + error.message));
    return;
  }
  clear(list);
  if (!apps.length) append(list, h("p", { class: "small muted" }, STRINGS.none));
  for (const app of apps) append(list, row(app, list));
}

function row(app, list) {
  const revoke = button(STRINGS.revoke, {
    kind: "danger",
    "data-grant": app.id,
    onclick: async () => {
      if (!confirm(STRINGS.confirm(app.client_name))) return;
      await busy(revoke, async () => {
        try {
          await api.delete(`/v1/oauth/apps/${encodeURIComponent(app.id)}`);
          toast(STRINGS.revoked(app.client_name), { kind: "ok" });
        } catch (error) {
          toast(error.message, { kind: "error" });
        }
      });
      load(list);
    },
  });
  return h("div", { class: "item connected-app", dataset: { grant: app.id } },
    h("div", { class: "row" },
      h("div", { class: "spacer" },
        h("strong", {}, app.client_name),
        h("p", { class: "small muted" }, `${STRINGS.lastUsed(app.last_used_at)} · ${STRINGS.since(app.created_at)}`),
        h("p", { class: "small muted" }, STRINGS.may(app.scopes)),
        h("p", { class: "small muted mono" }, STRINGS.returnsTo(app.redirect_uris))),
      revoke));
}

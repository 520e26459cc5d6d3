// The apps connected through OAuth (Claude, ChatGPT, mcp-remote…): what each may do, when it
// last used its access, and a button that cuts it off at once. Shown on the Settings page.
import { api } from "./api.js";
import { append, clear, h } from "./dom.js";
import { section, when } from "./i18n.js";
import { busy, button, toast } from "./ui.js";

const s = section("connectedApps");

export function connectedApps() {
  const list = h("div", { class: "list", id: "connected-apps" }, h("p", { class: "small muted" }, s("loading")));
  load(list);
  return h("section", { class: "card" }, h("h2", {}, s("title")), h("p", { class: "small muted" }, s("intro")), list);
}

async function load(list) {
  let apps;
  try {
    apps = (await api.get("/v1/oauth/apps")).apps;
  } catch (error) {
    append(clear(list), h("p", { class: "notice notice-error" }, s("failed", { error: error.message })));
    return;
  }
  clear(list);
  if (!apps.length) append(list, h("p", { class: "small muted" }, s("none")));
  for (const app of apps) append(list, row(app, list));
}

function row(app, list) {
  const revoke = button(s("revoke"), {
    kind: "danger",
    "data-grant": app.id,
    onclick: async () => {
      if (!confirm(s("confirm", { name: app.client_name }))) return;
      await busy(revoke, async () => {
        try {
          await api.delete(`/v1/oauth/apps/${encodeURIComponent(app.id)}`);
          toast(s("revoked", { name: app.client_name }), { kind: "ok" });
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
        h("strong", { translate: "no" }, app.client_name),
        h("p", { class: "small muted" }, app.last_used_at
          ? s("lastUsed", { when: when(app.last_used_at), since: when(app.created_at) })
          : s("neverUsed", { since: when(app.created_at) })),
        h("p", { class: "small muted" }, s("may", { scopes: app.scopes.join(", ") })),
        h("p", { class: "small muted mono" }, s("returnsTo", { uris: app.redirect_uris.join(", ") }))),
      revoke));
}

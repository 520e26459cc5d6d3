// The count on the Review tab: pending candidates, proposed shares and proposals about people.
import { api, ns } from "./api.js";
import { num } from "./i18n.js";

export async function refreshPendingBadge() {
  const badge = document.getElementById("pending-badge");
  if (!badge) return;
  try {
    const [{ count, next_cursor: more }, shares, people] = await Promise.all([
      api.get("/v1/candidates", { namespace: ns(), limit: 99 }),
      api.get("/v1/shares", { namespace: ns(), status: "proposed", limit: 99 }),
      api.get("/v1/person_proposals", { namespace: ns(), limit: 99 }),
    ]);
    const waiting = count + shares.count + people.count;
    badge.textContent = more || waiting > 99 ? `${num(99)}+` : num(waiting);
    badge.hidden = waiting === 0;
  } catch {
    badge.hidden = true;
  }
}

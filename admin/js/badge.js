// The count of pending candidates on the Review tab.
import { api, ns } from "./api.js";

export async function refreshPendingBadge() {
  const badge = document.getElementById("pending-badge");
  if (!badge) return;
  try {
    const { count, next_cursor: more } = await api.get("/v1/candidates", { namespace: ns(), limit: 99 });
    badge.textContent = more ? "99+" : String(count);
    badge.hidden = count === 0;
  } catch {
    badge.hidden = true;
  }
}

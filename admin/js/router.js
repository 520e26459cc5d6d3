// Hash routes (#/page/sub?query): they work under /admin/ and /memory-admin/ alike.
export function parseRoute(hash = location.hash, known = () => true) {
  const [path, search = ""] = hash.replace(/^#\/?/, "").split("?");
  const [page, ...rest] = path.split("/").filter(Boolean);
  return { page: page && known(page) ? page : "today", rest, params: new URLSearchParams(search) };
}

export function go(route) {
  if (location.hash === `#/${route}`) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = `#/${route}`;
}

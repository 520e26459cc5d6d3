// The panel's service worker: only an offline page. It never answers an API request (those
// go straight to the network, so every number the panel shows is fresh), and it serves the
// panel's own files from the network first, keeping a copy only of what the offline page needs.
const CACHE = "companion-memory-offline-v1";
const OFFLINE = ["offline.html", "css/app.css", "js/offline.js", "js/i18n.js", "js/config.js", "js/locales/en.js", "js/locales/zh-CN.js", "icons/icon.svg"];
const scope = new URL(self.registration.scope);
const offlineUrls = new Set(OFFLINE.map((file) => new URL(file, scope).href));

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(OFFLINE)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match(new URL("offline.html", scope).href)));
  } else if (offlineUrls.has(request.url.split(/[?#]/)[0])) {
    event.respondWith(fetch(request).catch(() => caches.match(request, { ignoreSearch: true, ignoreVary: true })));
  }
  // Anything else (the API above all) is not touched: the browser fetches it as if there were no worker.
});

// Every call to the server: the key goes in the Authorization header and nowhere else.
import { loadConfig, namespace, serverUrl } from "./config.js";
import { t } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, message, code, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const listeners = new Set();
/** Called with the error whenever the server answers 401 (no key, or a wrong one). */
export function onUnauthorized(listener) {
  listeners.add(listener);
}

function url(path, query) {
  const target = new URL(serverUrl() + path);
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) target.searchParams.append(name, String(one));
  }
  return target.toString();
}

export async function request(method, path, { query, body, keepalive = false } = {}) {
  const { apiKey } = loadConfig();
  if (!apiKey) {
    const error = new ApiError(401, t("api.missingKey"), "missing_key");
    listeners.forEach((l) => l(error));
    throw error;
  }
  const headers = { Authorization: `Bearer ${apiKey}`, Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url(path, query), {
      method, headers, keepalive, credentials: "omit", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (cause) {
    throw new ApiError(0, t("api.unreachable", { server: serverUrl(), reason: cause.message || t("api.networkError") }), "network");
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const detail = data && data.error ? data.error : {};
    const error = new ApiError(response.status, detail.message || `${response.status} ${response.statusText}`, detail.code || "http_error", detail.details);
    if (response.status === 401) listeners.forEach((l) => l(error));
    throw error;
  }
  return data;
}

export const api = {
  get: (path, query) => request("GET", path, { query }),
  post: (path, body, query) => request("POST", path, { body: body === undefined ? {} : body, query }),
  patch: (path, body) => request("PATCH", path, { body }),
  delete: (path, query, options = {}) => request("DELETE", path, { query, ...options }),
};

// The namespace every page reads and writes.
export const ns = () => namespace();

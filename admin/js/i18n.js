// The panel's words and how it writes numbers, dates and times. Every string a person reads
// comes from a catalog (locales/en.js, locales/zh-CN.js: one object per page or part, the
// same keys in both); dates and times are shown in the server's DREAM_TIME_ZONE, so the
// panel's "today" is the dream's.
import en from "./locales/en.js";
import zhCN from "./locales/zh-CN.js";

export const CATALOGS = { "zh-CN": zhCN, en };
export const LANGUAGES = Object.keys(CATALOGS);

let language = "en";
let timeZone;
const cache = new Map();

// What the browser tests read: keys asked for and not found, and every string this module
// produced, so that any other visible text (not marked translate="no" as data) is a string
// that bypassed the catalogs.
const audit = { missing: new Set(), produced: new Set() };
window.__i18n = audit;

const produced = (text) => {
  audit.produced.add(text.trim());
  return text;
};

/** The catalog's language for a choice ("" follows the browser's languages). */
export function pickLanguage(choice, preferred = navigator.languages || [navigator.language]) {
  if (LANGUAGES.includes(choice)) return choice;
  for (const tag of preferred) {
    const lower = String(tag).toLowerCase();
    if (lower.startsWith("zh")) return "zh-CN";
    if (lower.startsWith("en")) return "en";
  }
  return "en";
}

export function setLanguage(choice) {
  language = pickLanguage(choice);
  cache.clear();
  document.documentElement.lang = language;
  return language;
}

export const currentLanguage = () => language;

/** Dates and times from now on are shown in this IANA zone (the server's DREAM_TIME_ZONE). */
function setTimeZone(zone) {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    timeZone = zone;
  } catch {
    timeZone = undefined; // an unknown zone: the device's own
  }
  cache.clear();
}

/** Dates and times from now on in the zone of the server at ``base`` (its DREAM_TIME_ZONE, on
 * /health, which needs no key): the panel's and the consent page's days are the dream's. */
export async function followServerTimeZone(base) {
  try {
    const response = await fetch(`${base}/health`, { credentials: "omit", cache: "no-store" });
    if (response.ok) setTimeZone((await response.json()).time_zone);
  } catch {
    // Unreachable server: the device's zone until it answers; the pages say what failed.
  }
}

export const currentTimeZone = () => timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;

function formatter(kind, options) {
  const id = `${kind}|${JSON.stringify(options)}`;
  if (!cache.has(id)) {
    const make = { number: Intl.NumberFormat, date: Intl.DateTimeFormat, plural: Intl.PluralRules, relative: Intl.RelativeTimeFormat }[kind];
    cache.set(id, new make(language, kind === "date" ? { timeZone, ...options } : options));
  }
  return cache.get(id);
}

function lookup(catalog, key) {
  let value = catalog;
  for (const part of key.split(".")) {
    if (value === null || typeof value !== "object" || !(part in value)) return undefined;
    value = value[part];
  }
  return value;
}

/** The message ``key`` ("page.name") with {placeholders} filled; an entry that is an object
 * of plural forms ({one, other}) is chosen by ``params.count``. Numbers are written the
 * language's way. A missing key shows as the key and is recorded (the tests fail on it). */
export function t(key, params = {}) {
  let message = lookup(CATALOGS[language], key);
  if (message && typeof message === "object") {
    message = message[formatter("plural", {}).select(Number(params.count) || 0)] ?? message.other;
  }
  if (typeof message !== "string") {
    audit.missing.add(`${language}:${key}`);
    return key;
  }
  const text = message.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!(name in params)) return whole;
    const value = params[name];
    return typeof value === "number" ? num(value) : String(value ?? "");
  });
  return produced(text);
}

/** The message ``key`` as text around the given nodes, one per {placeholder}: data inside a
 * sentence (an app's name, a host) keeps an element of its own, marked translate="no". */
export function tWith(key, nodes) {
  return t(key).split(/\{(\w+)\}/).map((part, index) => (index % 2 ? nodes[part] ?? `{${part}}` : part ? produced(part) : null));
}

/** A message about the companion: ``key`` says "she" ("Her todos"), ``key + "Named"`` her
 * name when the owner gave one (COMPANION_NAME, the boot package's ``companion_name``). */
export function aboutHer(name, key, params = {}) {
  return name ? t(`${key}Named`, { ...params, name }) : t(key, params);
}

/** A page's own part of the catalogs: ``const s = section("people"); s("title", { count })``. */
export const section = (name) => (key, params) => t(`${name}.${key}`, params);

/** ``t(key)`` when the catalog has it, else ``fallback`` (for values the server may add to
 * an enumeration later: a new memory type shows under its own name until translated). */
export function tOr(key, fallback) {
  return typeof lookup(CATALOGS[language], key) === "string" ? t(key) : produced(String(fallback));
}

export const num = (value, options = {}) => produced(formatter("number", options).format(Number(value) || 0));
export const percent = (value) => num(Number(value) || 0, { style: "percent", maximumFractionDigits: 0 });

function parse(value) {
  if (!value) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The calendar day (YYYY-MM-DD) ``date`` falls on in the server's time zone. */
export function dayOf(date) {
  const parts = Object.fromEntries(formatter("date", { year: "numeric", month: "2-digit", day: "2-digit" })
    .formatToParts(date).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** A point in time: "3 min ago" within the hour, the time of day today, else date and time. */
export function when(value, now = new Date()) {
  const date = parse(value);
  if (!date) return value ? String(value) : "";
  const seconds = (now.getTime() - date.getTime()) / 1000;
  if (seconds >= 0 && seconds < 3600) return ago(date, now);
  if (dayOf(date) === dayOf(now)) return timeOfDay(date);
  return dateTime(date);
}

/** Date and time in full (for a record's ids and dates, and a title on hover). */
export function dateTime(value) {
  const date = parse(value);
  if (!date) return value ? String(value) : "";
  return produced(formatter("date", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }).format(date));
}

/** The time of day alone, for a list under its day's heading: "09:05". */
export function timeOfDay(value) {
  const date = parse(value);
  if (!date) return value ? String(value) : "";
  return produced(formatter("date", { hour: "2-digit", minute: "2-digit" }).format(date));
}

/** How long ago (or how far ahead): "3 分钟前", "3 min ago", "yesterday". */
export function ago(value, now = new Date()) {
  const date = parse(value);
  if (!date) return "";
  const seconds = (date.getTime() - now.getTime()) / 1000;
  const units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600], ["minute", 60]];
  const rtf = formatter("relative", { numeric: "auto", style: "short" });
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return produced(rtf.format(Math.trunc(seconds / size), unit));
  }
  return produced(rtf.format(0, "second")); // "now", "现在"
}

/** A calendar day (YYYY-MM-DD, already the dream's day) written out in full. */
export function longDate(isoDay) {
  const date = new Date(`${isoDay}T12:00:00Z`);
  if (Number.isNaN(date.getTime())) return isoDay;
  return produced(new Intl.DateTimeFormat(language, { weekday: "long", year: "numeric", month: "long", day: "numeric", timeZone: "UTC" }).format(date));
}

/** A calendar day, short: "12月1日" / "Dec 1". */
export function shortDate(isoDay) {
  const date = new Date(`${isoDay}T12:00:00Z`);
  if (Number.isNaN(date.getTime())) return isoDay;
  return produced(new Intl.DateTimeFormat(language, { month: "short", day: "numeric", timeZone: "UTC" }).format(date));
}

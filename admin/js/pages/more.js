// More: people, precious words, glossary, the diary, her persona, maintenance and importing a
// chat history, one section at a time.
import { append, h } from "../dom.js";
import { t } from "../i18n.js";
import { pageHeader, segmented } from "../ui.js";

const SECTIONS = [
  ["people", () => import("./people.js")],
  ["precious", () => import("./precious.js")],
  ["glossary", () => import("./glossary.js")],
  ["diary", () => import("./diary.js")],
  ["persona", () => import("./persona.js")],
  ["maintenance", () => import("./maintenance.js")],
  ["import", () => import("./imports.js")],
];

export async function render(container, route) {
  const current = SECTIONS.find(([id]) => id === route.rest[0]) || SECTIONS[0];
  const body = h("div", { class: "stack", id: `more-${current[0]}` });
  append(container, 
    pageHeader(t("more.title"), t("more.subtitle")),
    segmented(SECTIONS.map(([id]) => [id, t(`more.sections.${id}`)]), current[0], (id) => (location.hash = `#/more/${id}`), t("more.sectionsLabel")),
    body,
  );
  // On a phone the last sections are past the edge: the chosen one is scrolled into sight.
  container.querySelector('.segment[aria-selected="true"]').scrollIntoView({ block: "nearest", inline: "nearest" });
  const module = await current[1]();
  return module.render(body, route);
}

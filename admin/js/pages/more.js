// More: people, precious words, glossary, the diary, and maintenance, one section at a time.
import { append, h } from "../dom.js";
import { pageHeader, segmented } from "../ui.js";

const SECTIONS = [
  ["people", "People", () => import("./people.js")],
  ["precious", "Precious", () => import("./precious.js")],
  ["glossary", "Glossary", () => import("./glossary.js")],
  ["diary", "Diary", () => import("./diary.js")],
  ["maintenance", "Maintenance", () => import("./maintenance.js")],
];

export async function render(container, route) {
  const current = SECTIONS.find(([id]) => id === route.rest[0]) || SECTIONS[0];
  const body = h("div", { class: "stack", id: `more-${current[0]}` });
  append(container, 
    pageHeader("More", "People, precious words, glossary, diary and maintenance."),
    segmented(SECTIONS.map(([id, label]) => [id, label]), current[0], (id) => (location.hash = `#/more/${id}`), "Sections"),
    body,
  );
  const module = await current[2]();
  return module.render(body, route);
}

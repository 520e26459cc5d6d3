// Her night dreams (梦境): a dream she had after the nightly job, its mood, and the memories
// it was dreamt from (each opens). Dreams, not memories: never recalled.
import { h } from "./dom.js";
import { label, longDate } from "./format.js";
import { aboutHer, num, t } from "./i18n.js";
import { openMemory } from "./memory-view.js";

/** One dream: its night (unless ``night`` is false, under a day that says it), mood, text,
 * who wrote it and its material. */
export function nightDream(dream, { night = true } = {}) {
  return h("article", { class: "night-dream", dataset: { id: dream.id, mood: dream.mood } },
    h("p", { class: "small muted" },
      night ? [t("nightDreams.night", { date: longDate(dream.date) }), " · "] : null,
      t("nightDreams.mood", { mood: label("moods", dream.mood) })),
    h("p", { class: "content", lang: dream.language === "zh" ? "zh-CN" : "en", translate: "no" }, dream.text),
    h("p", { class: "small muted night-dream-material" },
      dream.writer === "template" ? t("nightDreams.template") : t("nightDreams.byModel", { model: dream.writer.replace(/^model:/, "") }),
      " · ", t("nightDreams.material", { count: dream.material_ids.length }), " ",
      dream.material_ids.map((id, index) =>
        h("button", { class: "chip", type: "button", dataset: { memory: id }, "aria-label": t("nightDreams.openMaterial", { n: index + 1 }),
          onclick: () => openMemory(id) }, num(index + 1)))));
}

/** Today's card: last night's dreams (GET /v1/night_dreams?nights=1); none when she had none
 * (night dreams are off by default: the diary's Night dreams view says how to turn them on). */
export function nightDreamsCard(list, name) {
  if (!list.night_dreams.length) return null;
  return h("section", { class: "card", id: "night-dreams" },
    h("div", { class: "card-head" }, h("h2", {}, aboutHer(name, "nightDreams.lastNight")),
      h("a", { class: "small", href: "#/more/diary?period=dreams" }, t("nightDreams.all"))),
    h("div", { class: "stack" }, list.night_dreams.map((dream) => nightDream(dream, { night: false }))));
}

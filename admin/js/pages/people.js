// People: who is who in the owner's life (names, aliases, relation, notes, familiarity),
// and what the dream proposes about them (new people, merges) for her to approve or reject.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { refreshPendingBadge } from "../badge.js";
import { percent, section } from "../i18n.js";
import { button, emptyState, errorBox, field, modal, safely, spinner, toast } from "../ui.js";

const s = section("people");

const names = (text) => text.split(",").map((a) => a.trim()).filter(Boolean);

function personForm(person, done) {
  const name = h("input", { type: "text", name: "personName", value: person?.name || "", required: true, maxlength: 100 });
  const aliases = h("input", { type: "text", name: "personAliases", value: (person?.aliases || []).join(", ") });
  const relation = h("input", { type: "text", name: "personRelation", value: person?.relation || "", maxlength: 100 });
  const notes = h("textarea", { name: "personNotes", rows: 3, value: person?.notes || "" });
  return h("form", {
    class: "form",
    id: "person-form",
    onsubmit: safely(async (event) => {
      event.preventDefault();
      const body = { namespace: ns(), name: name.value.trim(), aliases: names(aliases.value), relation: relation.value.trim(), notes: notes.value.trim() };
      if (!body.name) return;
      if (person) await api.patch(`/v1/people/${encodeURIComponent(person.id)}`, body);
      else await api.post("/v1/people", body);
      toast(s("saved"), { kind: "ok" });
      done();
    }),
  }, field(s("name"), name), field(s("aliases"), aliases, s("aliasesHint")), field(s("relation"), relation, s("relationHint")),
  field(s("notes"), notes), h("div", { class: "form-actions" }, button(s("save"), { kind: "primary", type: "submit" })));
}

function familiarity(person) {
  const bar = h("span", { class: "meter" }, h("span", { class: "meter-fill" }));
  bar.firstChild.style.width = `${Math.round(person.familiarity * 100)}%`;
  return h("span", { class: "familiarity", title: s("familiarity") }, bar, h("span", { class: "familiarity-value" }, percent(person.familiarity)));
}

function personCard(person, edit) {
  return h("article", { class: "item person", dataset: { id: person.id } },
    h("div", { class: "row" }, h("h3", { class: "person-name", translate: "no" }, person.name),
      person.relation ? h("span", { class: "chip chip-relation", translate: "no" }, person.relation) : null,
      ...person.aliases.map((alias) => h("span", { class: "chip chip-alias", translate: "no" }, alias))),
    person.notes ? h("p", { class: "content", translate: "no" }, person.notes) : null,
    h("div", { class: "row meta" }, familiarity(person),
      h("span", { class: "chip" }, s("mentions", { count: person.mentions })),
      h("span", { class: "chip" }, s("memories", { count: person.memory_count })),
      h("span", { class: "spacer" }),
      button(s("edit"), { class: "button button-small", dataset: { personAction: "edit" }, onclick: () => edit(person) })));
}

/** What the dream proposes, in a sentence of the owner's language around the names. */
function proposalTitle(p) {
  const aliases = p.aliases.join(s("aliasJoin"));
  if (p.kind === "merge") return s("merge", { other: p.other?.name || p.other_id, person: p.person?.name || p.person_id });
  if (p.person_id) return s("moreNames", { name: p.person?.name || p.name, aliases });
  const who = p.relation ? s("newOneAs", { name: p.name, relation: p.relation }) : s("newOne", { name: p.name });
  return p.aliases.length ? s("alsoCalled", { who, aliases }) : who;
}

function proposalCard(proposal, reload) {
  const decide = (verb, label, message, kind) => button(label, {
    kind, dataset: { proposalAction: verb },
    onclick: safely(async () => {
      await api.post(`/v1/person_proposals/${encodeURIComponent(proposal.id)}/${verb}`);
      toast(message, { kind: "ok" });
      refreshPendingBadge();
      await reload();
    }),
  });
  return h("article", { class: "item proposal", dataset: { id: proposal.id, kind: proposal.kind } },
    h("p", { class: "content proposal-title" }, proposalTitle(proposal)),
    // The dream's reason and the quotes are the conversation's own words.
    proposal.reason ? h("p", { class: "item-meta", translate: "no" }, proposal.reason) : null,
    ...proposal.evidence.map((quote) => h("blockquote", { class: "quote", translate: "no" }, quote)),
    h("div", { class: "row" }, h("span", { class: "spacer" }),
      decide("reject", s("reject"), s("rejected"), "ghost"), decide("approve", s("approve"), s("approved"), "primary")));
}

/** The proposals waiting for the owner, for the People page and the Review queue: hidden
 * while there are none. ``after`` runs once one is decided (the page reloads its list). */
export function proposalsSection(after = () => {}) {
  const waiting = h("div", { class: "list", id: "people-proposals" });
  const element = h("section", { class: "stack people-waiting", hidden: true }, h("h2", {}, s("waiting")), waiting);
  async function reload() {
    const { proposals } = await api.get("/v1/person_proposals", { namespace: ns() });
    element.hidden = proposals.length === 0;
    append(clear(waiting), ...proposals.map((p) => proposalCard(p, async () => { await reload(); await after(); })));
  }
  return { element, reload };
}

export function render(container) {
  const list = h("div", { class: "list", id: "people-list" });
  const edit = (person) => {
    const sheet = modal(person ? s("editTitle", { name: person.name }) : s("newPerson"));
    append(sheet.body, personForm(person, () => { sheet.close(); load(); }));
  };
  const waiting = proposalsSection(() => load());
  async function load() {
    append(clear(list), spinner());
    try {
      const [{ people }] = await Promise.all([api.get("/v1/people", { namespace: ns() }), waiting.reload()]);
      append(clear(list), ...(people.length ? people.map((p) => personCard(p, edit)) : [emptyState(s("nobody"), s("nobodyHint"))]));
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }
  append(container,
    h("div", { class: "row" }, h("span", { class: "spacer" }), button(s("newPerson"), { kind: "primary", iconName: "plus", id: "new-person", onclick: () => edit(null) })),
    waiting.element,
    h("section", { class: "stack" }, h("h2", {}, s("everyone")), list));
  load();
}

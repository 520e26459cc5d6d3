// People: who is who in the owner's life (names, aliases, relation, notes, familiarity),
// and what the dream proposes about them (new people, merges) for her to approve or reject.
import { api, ns } from "../api.js";
import { append, clear, h } from "../dom.js";
import { refreshPendingBadge } from "../badge.js";
import { button, emptyState, errorBox, field, modal, safely, spinner, toast } from "../ui.js";

// Every string the page shows, in one place (they move to a message catalog later).
const TEXT = {
  newPerson: "New person",
  edit: "Edit",
  editTitle: (name) => `Edit “${name}”`,
  save: "Save",
  saved: "Saved.",
  name: "Name",
  aliases: "Aliases",
  aliasesHint: "comma, separated: “my sister, 安娜”",
  relation: "Relation",
  relationHint: "who she is to you: sister, friend, colleague…",
  notes: "Notes",
  familiarity: "familiarity",
  mentions: (n) => `${n} mention${n === 1 ? "" : "s"}`,
  memories: (n) => `${n} memor${n === 1 ? "y" : "ies"}`,
  waiting: "Waiting for you",
  everyone: "People",
  nobody: "No one yet",
  nobodyHint: "Add someone, or let the nightly dream find them (“my sister Ana”, “我姐姐安娜”).",
  newOne: (p) => `New: ${p.name}${p.relation ? ` (${p.relation})` : ""}${p.aliases.length ? `, also “${p.aliases.join("”, “")}”` : ""}`,
  moreNames: (p) => `More names for ${p.person?.name || p.name}: “${p.aliases.join("”, “")}”`,
  merge: (p) => `“${p.other?.name || p.other_id}” is “${p.person?.name || p.person_id}”`,
  approve: "Approve",
  reject: "Reject",
  approved: "Approved.",
  rejected: "Rejected: both stay as they are.",
  said: "said",
};

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
      toast(TEXT.saved, { kind: "ok" });
      done();
    }),
  }, field(TEXT.name, name), field(TEXT.aliases, aliases, TEXT.aliasesHint), field(TEXT.relation, relation, TEXT.relationHint),
  field(TEXT.notes, notes), h("div", { class: "form-actions" }, button(TEXT.save, { kind: "primary", type: "submit" })));
}

function familiarity(person) {
  const percent = Math.round(person.familiarity * 100);
  const bar = h("span", { class: "meter" }, h("span", { class: "meter-fill" }));
  bar.firstChild.style.width = `${percent}%`;
  return h("span", { class: "familiarity", title: TEXT.familiarity }, bar, h("span", { class: "familiarity-value" }, `${percent}%`));
}

function personCard(person, edit) {
  return h("article", { class: "item person", dataset: { id: person.id } },
    h("div", { class: "row" }, h("h3", { class: "person-name" }, person.name),
      person.relation ? h("span", { class: "chip chip-relation" }, person.relation) : null,
      ...person.aliases.map((alias) => h("span", { class: "chip chip-alias" }, alias))),
    person.notes ? h("p", { class: "content" }, person.notes) : null,
    h("div", { class: "row meta" }, familiarity(person),
      h("span", { class: "chip" }, TEXT.mentions(person.mentions)),
      h("span", { class: "chip" }, TEXT.memories(person.memory_count)),
      h("span", { class: "spacer" }),
      button(TEXT.edit, { class: "button button-small", dataset: { personAction: "edit" }, onclick: () => edit(person) })));
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
  const title = proposal.kind === "merge" ? TEXT.merge(proposal) : proposal.person_id ? TEXT.moreNames(proposal) : TEXT.newOne(proposal);
  return h("article", { class: "item proposal", dataset: { id: proposal.id, kind: proposal.kind } },
    h("p", { class: "content proposal-title" }, title),
    proposal.reason ? h("p", { class: "item-meta" }, proposal.reason) : null,
    ...proposal.evidence.map((quote) => h("blockquote", { class: "quote" }, quote)),
    h("div", { class: "row" }, h("span", { class: "spacer" }),
      decide("reject", TEXT.reject, TEXT.rejected, "ghost"), decide("approve", TEXT.approve, TEXT.approved, "primary")));
}

/** The proposals waiting for the owner, for the People page and the Review queue: hidden
 * while there are none. ``after`` runs once one is decided (the page reloads its list). */
export function proposalsSection(after = () => {}) {
  const waiting = h("div", { class: "list", id: "people-proposals" });
  const element = h("section", { class: "stack people-waiting", hidden: true }, h("h2", {}, TEXT.waiting), waiting);
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
    const sheet = modal(person ? TEXT.editTitle(person.name) : TEXT.newPerson);
    append(sheet.body, personForm(person, () => { sheet.close(); load(); }));
  };
  const waiting = proposalsSection(() => load());
  async function load() {
    append(clear(list), spinner());
    try {
      const [{ people }] = await Promise.all([api.get("/v1/people", { namespace: ns() }), waiting.reload()]);
      append(clear(list), ...(people.length ? people.map((p) => personCard(p, edit)) : [emptyState(TEXT.nobody, TEXT.nobodyHint)]));
    } catch (error) {
      if (error.status !== 401) append(clear(list), errorBox(error, load));
    }
  }
  append(container,
    h("div", { class: "row" }, h("span", { class: "spacer" }), button(TEXT.newPerson, { kind: "primary", iconName: "plus", onclick: () => edit(null) })),
    waiting.element,
    h("section", { class: "stack" }, h("h2", {}, TEXT.everyone), list));
  load();
}

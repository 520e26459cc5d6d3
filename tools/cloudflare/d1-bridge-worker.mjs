// The Worker behind d1-bridge.mjs: one request is one call of env.DB (see there).
const decode = (value) => {
  if (Array.isArray(value)) return value.map(decode);
  if (value === null || typeof value !== "object") return value;
  if ("$blob" in value) return Uint8Array.from(atob(value.$blob), (c) => c.charCodeAt(0));
  if ("$bigint" in value) return BigInt(value.$bigint);
  if ("$undefined" in value) return undefined;
  if ("$number" in value) return Number(value.$number);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
};
const encode = (value) => {
  if (value instanceof ArrayBuffer) value = new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return { $blob: btoa(String.fromCharCode(...new Uint8Array(value.buffer, value.byteOffset, value.byteLength))) };
  if (typeof value === "bigint") return { $bigint: String(value) };
  if (value === undefined) return { $undefined: true };
  if (typeof value === "number" && !Number.isFinite(value)) return { $number: String(value) };
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
  return value;
};
const statement = (db, s) => {
  const prepared = db.prepare(s.sql);
  return s.params === null ? prepared : prepared.bind(...decode(s.params));
};
async function reset(db, setup) {
  // Dropping a virtual table drops its shadow tables, hence IF EXISTS and views/triggers first.
  const { results } = await db.prepare(
    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND type IN ('table', 'view', 'trigger')"
  ).all();
  const rank = (o) => (o.type === "table" ? (/^CREATE VIRTUAL/i.test(o.sql || "") ? 1 : 2) : 0);
  results.sort((a, b) => rank(a) - rank(b));
  const drops = results.map((o) => db.prepare("DROP " + o.type.toUpperCase() + " IF EXISTS \"" + o.name.replaceAll('"', '""') + "\""));
  const statements = [...drops, ...setup.map((s) => statement(db, s))];
  if (statements.length) await db.batch([db.prepare("PRAGMA defer_foreign_keys = on"), ...statements]);
}
// The migrated schema's fingerprint and how to empty it without DDL (which costs workerd's D1
// ten times more than a DELETE): DELETE from each table but the migrator's bookkeeping, and
// 'delete-all' for full-text indexes over external content. null: no fast way (seed rows).
let baseline = null;
const objects = async (db) =>
  (await db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name").all()).results;
async function clearing(db, schema) {
  const quote = (name) => '"' + name.replaceAll('"', '""') + '"';
  const virtual = schema.filter((o) => o.type === "table" && /^CREATE VIRTUAL/i.test(o.sql));
  const shadow = (name) => virtual.some((v) => name.startsWith(v.name + "_") && !/^CREATE VIRTUAL/i.test(schema.find((o) => o.name === name).sql));
  const tables = schema.filter((o) => o.type === "table" && !/^CREATE VIRTUAL/i.test(o.sql) && !shadow(o.name) && o.name !== "d1_migrations");
  for (const table of tables) {
    const row = await db.prepare("SELECT count(*) AS n FROM " + quote(table.name)).first();
    if (row.n) return null;
  }
  const indexes = virtual.filter((v) => /USING\s+fts5\s*\(/i.test(v.sql));
  return [
    "PRAGMA defer_foreign_keys = on",
    ...tables.map((t) => "DELETE FROM " + quote(t.name)),
    ...indexes.map((v) => (/content\s*=/i.test(v.sql) ? `INSERT INTO ${quote(v.name)}(${quote(v.name)}) VALUES ('delete-all')` : "DELETE FROM " + quote(v.name))),
    "DELETE FROM sqlite_sequence WHERE name <> 'd1_migrations'",
  ];
}
async function fresh(db, setup) {
  const key = JSON.stringify(setup);
  if (baseline && baseline.key === key && baseline.clear && baseline.signature === JSON.stringify(await objects(db))) {
    await db.batch(baseline.clear.map((sql) => db.prepare(sql)));
    return;
  }
  await reset(db, setup);
  const schema = await objects(db);
  baseline = { key, signature: JSON.stringify(schema), clear: await clearing(db, schema) };
}
export default {
  async fetch(request, env) {
    const db = env.DB;
    try {
      const call = await request.json();
      const path = new URL(request.url).pathname;
      if (path === "/reset" || path === "/fresh") {
        await (path === "/reset" ? reset : fresh)(db, call.statements);
        return Response.json({ value: null });
      }
      let value;
      if (call.op === "batch") value = await db.batch(call.statements.map((s) => statement(db, s)));
      else if (call.op === "exec") value = await db.exec(call.sql);
      else {
        const s = statement(db, call.statements[0]);
        if (call.op === "first") value = call.colName === null ? await s.first() : await s.first(call.colName);
        else if (call.op === "raw") value = await s.raw(decode(call.options));
        else value = await s[call.op]();
      }
      return Response.json({ value: encode(value) });
    } catch (error) {
      return Response.json({ error: { name: error.name, message: error.message } });
    }
  },
};

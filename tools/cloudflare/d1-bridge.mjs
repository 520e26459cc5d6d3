// Serves Miniflare's real D1 binding (workerd's D1 on SQLite) over loopback HTTP, for the
// Python tests' drop-in of the fake D1 (tests/fakes/d1_real.py). Prints {"url", "pid"} as its
// first line of stdout once ready; stops on SIGTERM or when stdin closes (its parent died).
//
// One request is one call of the binding API: POST / {"op", "statements": [{"sql", "params"}],
// "colName"?, "options"?, "sql"?}. Values that JSON cannot carry are tagged on the way in and
// out: {"$blob": base64}, {"$bigint": "123"}, {"$undefined": true}, {"$number": "NaN"}.
// POST /reset {"statements"} drops every table, view and trigger and runs the statements, in
// one batch: each test starts from an empty (or freshly migrated) database in one round trip.
// POST /fresh {"statements"} does the same, or, when the schema is still the one those
// statements built, only deletes the rows written since.
import { Miniflare, convertV4MiniflareOptions } from "miniflare";

// Miniflare 5 takes a new options shape; the converter keeps the documented v4 one.
const mf = new Miniflare(
  convertV4MiniflareOptions({
    modules: true,
    scriptPath: new URL("./d1-bridge-worker.mjs", import.meta.url).pathname,
    compatibilityDate: process.env.COMPATIBILITY_DATE,
    d1Databases: ["DB"],
    host: "127.0.0.1",
    port: 0,
    // The Worker's own socket: a request skips Miniflare's entry Worker, one hop of workerd's
    // less per D1 call (with kept-alive connections, a third off each call's time, measured).
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  })
);
await mf.ready;
const url = await mf.unsafeGetDirectURL();
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await mf.dispose();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
process.stdout.write(JSON.stringify({ url: url.href, pid: process.pid }) + "\n");

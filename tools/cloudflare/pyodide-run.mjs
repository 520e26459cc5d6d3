// Runs a Python program inside Pyodide (the npm package's core: nothing is fetched) against
// Miniflare's real bindings, handed to Python as the module `cf_env`: DB (D1) and TASKS (a
// Queue producer; its consumer, a JS Worker, stores each message body in DB's table
// queue_received, so Python can see what arrived). The program defines `async def main()`,
// which runs on Pyodide's event loop; $PROGRAM_CONFIG is handed over as cf_env.CONFIG.
//
// node pyodide-run.mjs REPO PROGRAM [PACKAGE_DIR ...]
//   REPO is mounted at /repo (sys.path gets /repo/src and /repo); each PACKAGE_DIR (a pure-Python
//   package the core imports, from the local install) is mounted under /site, on sys.path.
// Exits 0 when main() returns, 1 with the Python traceback when it raises.
import { basename } from "node:path";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { loadPyodide } from "pyodide";

const [repo, program, ...packages] = process.argv.slice(2);

const CONSUMER = `
export default {
  async fetch() { return new Response("consumer"); },
  async queue(batch, env) {
    await env.DB.prepare("CREATE TABLE IF NOT EXISTS queue_received (body TEXT, attempts INTEGER)").run();
    for (const message of batch.messages) {
      await env.DB.prepare("INSERT INTO queue_received (body, attempts) VALUES (?, ?)")
        .bind(JSON.stringify(message.body), message.attempts).run();
      message.ack();
    }
  },
};`;

const mf = new Miniflare(
  convertV4MiniflareOptions({
    modules: true,
    script: CONSUMER,
    compatibilityDate: process.env.COMPATIBILITY_DATE,
    d1Databases: ["DB"],
    queueProducers: { TASKS: "companion-memory" },
    queueConsumers: { "companion-memory": { maxBatchSize: 10, maxBatchTimeout: 1 } },
  })
);
let status = 1;
try {
  await mf.ready;
  const env = { DB: await mf.getD1Database("DB"), TASKS: await mf.getQueueProducer("TASKS") };
  const pyodide = await loadPyodide({ packages: [] });
  const { FS } = pyodide;
  const mount = (host, guest) => {
    FS.mkdirTree(guest);
    FS.mount(FS.filesystems.NODEFS, { root: host }, guest);
  };
  mount(repo, "/repo");
  for (const dir of packages) mount(dir, `/site/${basename(dir)}`);
  // CONFIG: what the program needs from the host, as JSON (settings it cannot build without pydantic).
  pyodide.registerJsModule("cf_env", { ...env, CONFIG: process.env.PROGRAM_CONFIG ?? "{}" });
  const source = FS.readFile(`/repo/${program}`, { encoding: "utf8" });
  await pyodide.runPythonAsync(`import sys\nsys.path[:0] = ["/repo/src", "/repo", "/site"]`);
  await pyodide.runPythonAsync(`${source}\nawait main()`, { filename: program });
  status = 0;
} catch (error) {
  // A PythonError's message is the traceback; print nothing of Pyodide's own source.
  console.error(error?.message ?? String(error));
} finally {
  await mf.dispose();
}
process.exit(status);

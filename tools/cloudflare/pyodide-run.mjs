// Runs a Python program inside Pyodide (the npm package's core: nothing is fetched) against
// Miniflare's real bindings, handed to Python as the module `cf_env`: DB (D1) and TASKS (a
// Queue producer). The program defines `async def main()`, which runs on Pyodide's event loop;
// $PROGRAM_CONFIG is handed over as cf_env.CONFIG, $QUEUE_CONSUMER as cf_env.QUEUE_CONSUMER.
//
// Queues: Miniflare's broker delivers the queue's batches (and the dead-letter queue's) to a
// JS consumer Worker in workerd, which relays each batch to the Python handler the program
// registered with cf_env.on_queue(handler): the handler gets a MessageBatch of {queue,
// messages: [{id, timestamp, body, attempts, ack(), retry({delaySeconds}?)}]}, as a Python
// Worker would; the Worker then settles the real messages as the handler did (the first call
// on a message wins, as in Queues) and throws when the handler raised. $QUEUE_CONSUMER (JSON:
// maxBatchSize, maxBatchTimeout, maxRetries, deadLetterQueue) configures the consumer.
//
// node pyodide-run.mjs REPO PROGRAM [PACKAGE_DIR ...]
//   REPO is mounted at /repo (sys.path gets /repo/src and /repo); each PACKAGE_DIR (a pure-Python
//   package the core imports, from the local install) is mounted under /site, on sys.path.
// Exits 0 when main() returns, 1 with the Python traceback when it raises.
import { basename } from "node:path";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { loadPyodide } from "pyodide";

const [repo, program, ...packages] = process.argv.slice(2);
const QUEUE = "companion-memory";
const consumerOptions = JSON.parse(process.env.QUEUE_CONSUMER ?? "{}");

const CONSUMER = `
export default {
  async fetch() { return new Response("consumer"); },
  async queue(batch, env) {
    const messages = batch.messages.map((m) => ({ id: m.id, timestamp: m.timestamp.getTime(), body: m.body, attempts: m.attempts }));
    const answer = await env.HOST.fetch("http://host/queue", { method: "POST", body: JSON.stringify({ queue: batch.queue, messages }) });
    const { settled, error } = await answer.json();
    for (const message of batch.messages) {
      const outcome = settled[message.id];
      if (outcome?.ack) message.ack();
      else if (outcome) outcome.delaySeconds === undefined ? message.retry() : message.retry({ delaySeconds: outcome.delaySeconds });
    }
    if (error !== null) throw new Error(error);
  },
};`;

let handler = null;
// The HOST service binding runs here, in Node: one call is one batch for the Python handler.
async function host(request) {
  const { queue, messages } = await request.json();
  const settled = {};
  const settle = (id, outcome) => {
    settled[id] ??= outcome;
  };
  const batch = {
    queue,
    messages: messages.map((m) => ({
      ...m,
      ack: () => settle(m.id, { ack: true }),
      retry: (options) => settle(m.id, { delaySeconds: options?.delaySeconds }),
    })),
  };
  let error = null;
  try {
    if (handler === null) throw new Error("no queue handler registered");
    await handler(batch);
  } catch (thrown) {
    error = thrown?.message ?? String(thrown);
  }
  return Response.json({ settled, error });
}

const mf = new Miniflare(
  convertV4MiniflareOptions({
    modules: true,
    script: CONSUMER,
    compatibilityDate: process.env.COMPATIBILITY_DATE,
    d1Databases: ["DB"],
    serviceBindings: { HOST: host },
    queueProducers: { TASKS: QUEUE },
    queueConsumers: { [QUEUE]: consumerOptions, ...(consumerOptions.deadLetterQueue ? { [consumerOptions.deadLetterQueue]: { maxBatchTimeout: 0 } } : {}) },
  })
);
let status = 1;
try {
  // Both take a few seconds: workerd starting, Pyodide compiling its WebAssembly.
  const [pyodide] = await Promise.all([loadPyodide({ packages: [] }), mf.ready]);
  const env = { DB: await mf.getD1Database("DB"), TASKS: await mf.getQueueProducer("TASKS") };
  const { FS } = pyodide;
  const mount = (host, guest) => {
    FS.mkdirTree(guest);
    FS.mount(FS.filesystems.NODEFS, { root: host }, guest);
  };
  mount(repo, "/repo");
  for (const dir of packages) mount(dir, `/site/${basename(dir)}`);
  // CONFIG: what the program needs from the host, as JSON (settings it cannot build without pydantic).
  pyodide.registerJsModule("cf_env", {
    ...env,
    CONFIG: process.env.PROGRAM_CONFIG ?? "{}",
    QUEUE_CONSUMER: JSON.stringify(consumerOptions),
    on_queue: (python) => {
      handler = python;
    },
  });
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

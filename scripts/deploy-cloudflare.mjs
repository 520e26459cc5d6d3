#!/usr/bin/env node
// Provision everything the Worker needs on Cloudflare, then deploy it. Safe to run again:
// each step looks before it creates, so a second run creates nothing.
//
//   npm run deploy:cloudflare [-- --config path/to/wrangler.toml] [-- --deploy-with wrangler]
//
// 1. the account (`wrangler whoami`; CLOUDFLARE_ACCOUNT_ID picks one when there are several)
// 2. the D1 database (created if missing; its id is written into the config's database_id)
// 3. the D1 migrations, applied remotely (`wrangler d1 migrations apply <db> --remote`)
// 4. the Vectorize index (cosine; dimensions of EMBEDDING_MODEL / EMBEDDING_DIMENSIONS)
// 5. its metadata indexes: the properties the Worker filters on
// 6. the Queue
// 7. the deploy, with --keep-vars so variables set in the dashboard survive.
//
// Python Workers are deployed with pywrangler (package `workers-py`), which vendors
// [project].dependencies of pyproject.toml into the upload and then runs `wrangler deploy`.
// It is used from PATH, else through uv (`uv tool run --from workers-py pywrangler`).
// `--deploy-with wrangler` deploys with plain wrangler instead (only right when the
// packages were vendored already, e.g. by `pywrangler sync`).
//
// wrangler itself is taken from PATH, else `npx --yes wrangler`. Node 20, no dependencies.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync, accessSync, constants } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";

// What the Worker stores on each vector and filters on (memory/vector_mirror.py
// `vector_metadata`, memory/recall.py, VectorMirror.near_duplicate). Vectorize filters only
// on properties that have a metadata index, and only for vectors written after it exists.
export const METADATA_INDEXES = [
	["namespace", "string"],
	["status", "string"],
	["type", "string"],
	["kind", "string"],
	["pinned", "boolean"],
];

// Output widths of the Workers AI embedding models (adapters/cloudflare/workers_ai.py).
const KNOWN_DIMENSIONS = {
	"@cf/baai/bge-m3": 1024,
	"@cf/baai/bge-small-en-v1.5": 384,
	"@cf/baai/bge-base-en-v1.5": 768,
	"@cf/baai/bge-large-en-v1.5": 1024,
};
const DEFAULT_EMBEDDING_MODEL = "workers-ai/@cf/baai/bge-m3";
const DEFAULT_DIMENSIONS = 1024;
const METRIC = "cosine";

class DeployError extends Error {}

// -- output ----------------------------------------------------------------------------

let stepNumber = 0;
const TOTAL_STEPS = 7;
function step(title) {
	stepNumber += 1;
	console.log(`\n==> [${stepNumber}/${TOTAL_STEPS}] ${title}`);
}
function info(message) {
	console.log(`    ${message}`);
}
function warn(message) {
	console.log(`    ! ${message}`);
}

// -- arguments ---------------------------------------------------------------------------

function parseArgs(argv) {
	const options = { config: "wrangler.toml", deployWith: process.env.DEPLOY_WITH || "auto" };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
		const value = () => {
			if (inline !== undefined) return inline;
			if (i + 1 >= argv.length) throw new DeployError(`${flag} needs a value`);
			return argv[++i];
		};
		if (flag === "--config" || flag === "-c") options.config = value();
		else if (flag === "--deploy-with") options.deployWith = value();
		else if (flag === "--help" || flag === "-h") options.help = true;
		else throw new DeployError(`unknown option ${arg} (see --help)`);
	}
	if (!["auto", "pywrangler", "wrangler"].includes(options.deployWith)) {
		throw new DeployError(`--deploy-with must be auto, pywrangler or wrangler, not ${options.deployWith}`);
	}
	return options;
}

const USAGE = `usage: node scripts/deploy-cloudflare.mjs [--config wrangler.toml] [--deploy-with auto|pywrangler|wrangler]

Provisions D1 (and its migrations), Vectorize (and its metadata indexes) and the Queue
named in the config, writes the D1 database_id into the config, and deploys the Worker
with --keep-vars. The project directory is the config's directory.`;

// -- a small reader for the parts of wrangler.toml we use ---------------------------------

function parseValue(raw, where) {
	const text = raw.trim();
	if (text.startsWith('"')) {
		const match = /^"((?:[^"\\]|\\.)*)"/.exec(text);
		if (!match) throw new DeployError(`${where}: cannot read ${text}`);
		return JSON.parse(`"${match[1]}"`);
	}
	if (text.startsWith("'")) {
		const end = text.indexOf("'", 1);
		return text.slice(1, end);
	}
	if (text.startsWith("[")) {
		const inner = text.slice(1, text.lastIndexOf("]"));
		return inner
			.split(",")
			.map((item) => item.trim())
			.filter(Boolean)
			.map((item) => parseValue(item, where));
	}
	const bare = text.split("#")[0].trim();
	if (bare === "true" || bare === "false") return bare === "true";
	const number = Number(bare);
	if (bare !== "" && !Number.isNaN(number)) return number;
	throw new DeployError(`${where}: cannot read ${text}`);
}

// Tables and arrays of tables with one-line key = value pairs: what wrangler.toml here uses.
export function parseWranglerToml(text, file = "wrangler.toml") {
	const root = {};
	let current = root;
	text.split(/\r?\n/).forEach((line, index) => {
		const where = `${file}:${index + 1}`;
		const stripped = line.trim();
		if (!stripped || stripped.startsWith("#")) return;
		let match;
		if ((match = /^\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]/.exec(stripped))) {
			const path = match[1].split(".");
			let parent = root;
			for (const key of path.slice(0, -1)) parent = parent[key] ??= {};
			const list = (parent[path.at(-1)] ??= []);
			current = {};
			list.push(current);
		} else if ((match = /^\[\s*([A-Za-z0-9_.-]+)\s*\]/.exec(stripped))) {
			current = root;
			for (const key of match[1].split(".")) current = current[key] ??= {};
		} else if ((match = /^([A-Za-z0-9_-]+|"[^"]+")\s*=\s*(.*)$/.exec(stripped))) {
			const key = match[1].replace(/^"|"$/g, "");
			current[key] = parseValue(match[2], where);
		} else {
			throw new DeployError(`${where}: this script reads simple TOML only; cannot read: ${stripped}`);
		}
	});
	return root;
}

// Replace (or add) database_id in the [[d1_databases]] block of `databaseName`, leaving the
// rest of the file byte for byte as it was.
export function withDatabaseId(text, databaseName, databaseId) {
	const lines = text.split("\n");
	let start = -1;
	for (let i = 0; i < lines.length; i++) {
		if (/^\s*\[\[\s*d1_databases\s*\]\]/.test(lines[i])) {
			let end = i + 1;
			while (end < lines.length && !/^\s*\[/.test(lines[end])) end++;
			const block = lines.slice(i + 1, end);
			if (block.some((line) => new RegExp(`^\\s*database_name\\s*=\\s*["']${escapeRegExp(databaseName)}["']`).test(line))) {
				start = i;
				const idLine = block.findIndex((line) => /^\s*database_id\s*=/.test(line));
				if (idLine >= 0) {
					lines[i + 1 + idLine] = lines[i + 1 + idLine].replace(/=\s*(".*?"|'.*?')/, `= "${databaseId}"`);
				} else {
					const nameLine = block.findIndex((line) => /^\s*database_name\s*=/.test(line));
					lines.splice(i + 2 + nameLine, 0, `database_id = "${databaseId}"`);
				}
				break;
			}
		}
	}
	if (start < 0) throw new DeployError(`no [[d1_databases]] block with database_name = "${databaseName}"`);
	return lines.join("\n");
}

function escapeRegExp(text) {
	return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// -- running wrangler -------------------------------------------------------------------

function onPath(command) {
	for (const dir of (process.env.PATH || "").split(delimiter)) {
		if (!dir) continue;
		for (const name of process.platform === "win32" ? [`${command}.cmd`, `${command}.exe`, command] : [command]) {
			const candidate = join(dir, name);
			try {
				accessSync(candidate, constants.X_OK);
				return candidate;
			} catch {
				// not here
			}
		}
	}
	return null;
}

function wranglerCommand() {
	const local = onPath("wrangler");
	if (local) return [local];
	return [onPath("npx") || "npx", "--yes", "wrangler"];
}

// Run a command; stdout and stderr are captured (and echoed when `echo` is set). stdin is
// closed, so wrangler never waits on a prompt: in a non-interactive session it takes the
// documented defaults (e.g. `d1 migrations apply` applies without asking).
function run(argv, { cwd, env, echo = false } = {}) {
	return new Promise((resolvePromise, reject) => {
		const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (chunk) => {
			stdout += chunk;
			if (echo) process.stdout.write(indent(chunk.toString()));
		});
		child.stderr.on("data", (chunk) => {
			stderr += chunk;
			if (echo) process.stdout.write(indent(chunk.toString()));
		});
		child.on("error", (error) => reject(new DeployError(`cannot run ${argv[0]}: ${error.message}`)));
		child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
	});
}

function indent(text) {
	return text.replace(/^(?=.)/gm, "      ");
}

// wrangler prints a line or two (a banner, "📋 Listing ...") before the JSON of some
// `--json` commands, and a warning instead of `[]` when a list is empty.
export function parseJsonOutput(stdout) {
	const text = stdout.trim();
	if (!text) return null;
	try {
		return JSON.parse(text);
	} catch {
		// fall through: find where the JSON starts
	}
	const lines = text.split("\n");
	for (let i = 0; i < lines.length; i++) {
		if (/^\s*[[{]/.test(lines[i])) {
			try {
				return JSON.parse(lines.slice(i).join("\n"));
			} catch {
				// keep looking
			}
		}
	}
	return null;
}

// Rows of a cli-table3 table (what `wrangler queues list` prints), as arrays of cells.
export function tableRows(stdout) {
	return stdout
		.split("\n")
		.filter((line) => line.includes("│"))
		.map((line) => line.split("│").slice(1, -1).map((cell) => cell.trim()));
}

class Wrangler {
	constructor(configPath, projectDir) {
		this.base = wranglerCommand();
		this.configPath = configPath;
		this.projectDir = projectDir;
		this.env = { ...process.env };
	}

	argv(args) {
		return [...this.base, ...args, "--config", this.configPath];
	}

	async call(args, { echo = false, allowFailure = false } = {}) {
		const result = await run(this.argv(args), { cwd: this.projectDir, env: this.env, echo });
		if (result.code !== 0 && !allowFailure) {
			if (!echo) process.stdout.write(indent(`${result.stdout}${result.stderr}`.trim() + "\n"));
			throw new DeployError(`\`wrangler ${args.join(" ")}\` failed (exit ${result.code})`);
		}
		return result;
	}

	async json(args) {
		const result = await this.call(args);
		return parseJsonOutput(result.stdout);
	}
}

// -- the steps ---------------------------------------------------------------------------

async function findAccount(wrangler) {
	step("Cloudflare account");
	let accounts = null;
	const asJson = await wrangler.call(["whoami", "--json"], { allowFailure: true });
	const parsed = parseJsonOutput(asJson.stdout);
	if (parsed && typeof parsed === "object" && "loggedIn" in parsed) {
		if (!parsed.loggedIn) throw notLoggedIn();
		accounts = (parsed.accounts || []).map((a) => ({ name: a.name, id: a.id }));
	} else {
		// wrangler without `whoami --json`: read the human output.
		const plain = await wrangler.call(["whoami"], { allowFailure: true });
		const text = `${plain.stdout}\n${plain.stderr}`;
		if (plain.code !== 0 || /not authenticated|not logged in/i.test(text)) throw notLoggedIn();
		accounts = tableRows(plain.stdout)
			.filter((cells) => cells.length >= 2 && /^[0-9a-f]{32}$/.test(cells[1]))
			.map(([name, id]) => ({ name, id }));
	}

	const chosen = process.env.CLOUDFLARE_ACCOUNT_ID;
	if (chosen) {
		const match = accounts.find((a) => a.id === chosen);
		if (match) info(`account ${match.name} (${match.id}), from CLOUDFLARE_ACCOUNT_ID`);
		else if (accounts.length) {
			throw new DeployError(
				`CLOUDFLARE_ACCOUNT_ID=${chosen} is not one of the accounts this login can use: ` +
					accounts.map((a) => `${a.name} (${a.id})`).join(", "),
			);
		} else info(`account ${chosen}, from CLOUDFLARE_ACCOUNT_ID`);
		return chosen;
	}
	if (accounts.length === 1) {
		info(`account ${accounts[0].name} (${accounts[0].id})`);
		wrangler.env.CLOUDFLARE_ACCOUNT_ID = accounts[0].id;
		return accounts[0].id;
	}
	if (accounts.length === 0) {
		throw new DeployError("this login sees no Cloudflare account; set CLOUDFLARE_ACCOUNT_ID (an account API token does not list its account)");
	}
	throw new DeployError(
		"this login can use several accounts; choose one with CLOUDFLARE_ACCOUNT_ID:\n" +
			accounts.map((a) => `      ${a.id}  ${a.name}`).join("\n"),
	);
}

function notLoggedIn() {
	return new DeployError(
		"not logged in to Cloudflare. Run `npx wrangler login`, or set CLOUDFLARE_API_TOKEN " +
			"(and CLOUDFLARE_ACCOUNT_ID) in the environment, then run this again.",
	);
}

async function ensureDatabase(wrangler, configPath, database) {
	step(`D1 database ${database.database_name}`);
	const name = database.database_name;
	const find = async () => ((await wrangler.json(["d1", "list", "--json"])) || []).find((db) => db.name === name);
	let found = await find();
	if (found) {
		info(`exists (${found.uuid})`);
	} else {
		info("not found: creating it");
		await wrangler.call(["d1", "create", name]);
		found = await find();
		if (!found) throw new DeployError(`created D1 database ${name}, but \`wrangler d1 list\` does not show it`);
		info(`created (${found.uuid})`);
	}
	if (database.database_id === found.uuid) {
		info(`database_id in ${configPath} is up to date`);
	} else {
		const text = readFileSync(configPath, "utf8");
		writeFileSync(configPath, withDatabaseId(text, name, found.uuid));
		info(
			database.database_id
				? `database_id in ${configPath} was ${database.database_id}; now ${found.uuid}`
				: `wrote database_id = "${found.uuid}" into ${configPath}`,
		);
	}
	return found.uuid;
}

async function applyMigrations(wrangler, database) {
	step(`D1 migrations (${database.migrations_dir || "migrations"}/), remote`);
	await wrangler.call(["d1", "migrations", "apply", database.database_name, "--remote"], { echo: true });
}

// What the Worker will embed with. The deploy sends wrangler.toml [vars], which override
// the dashboard's values of the same name, so [vars] decide; the environment counts only for
// a name [vars] leaves out (set in the dashboard, kept by --keep-vars) and must not contradict it.
function setting(name, vars, env) {
	const declared = vars[name] === undefined || vars[name] === "" ? undefined : String(vars[name]);
	const given = env[name] === undefined || env[name] === "" ? undefined : String(env[name]);
	if (declared !== undefined && given !== undefined && declared !== given) {
		throw new DeployError(
			`${name} is ${given} in the environment but ${declared} in wrangler.toml [vars], and the deploy sends [vars]; ` +
				`change it in wrangler.toml`,
		);
	}
	return declared ?? given;
}

export function embeddingDimensions(vars, env = process.env) {
	const model = setting("EMBEDDING_MODEL", vars, env) || DEFAULT_EMBEDDING_MODEL;
	const configured = setting("EMBEDDING_DIMENSIONS", vars, env);
	const known = KNOWN_DIMENSIONS[model.trim().replace(/^workers-ai\//, "")];
	if (configured !== undefined) {
		const dimensions = Number(configured);
		if (!Number.isInteger(dimensions) || dimensions < 1) throw new DeployError(`EMBEDDING_DIMENSIONS=${configured} is not a positive integer`);
		if (known && known !== dimensions) {
			throw new DeployError(`${model} makes ${known}-d vectors but EMBEDDING_DIMENSIONS is ${dimensions}; make them agree`);
		}
		return { model, dimensions };
	}
	return { model, dimensions: known || DEFAULT_DIMENSIONS };
}

// Looked at before anything is created, so a mismatch stops the run with nothing changed.
async function inspectVectorIndex(wrangler, indexName, { model, dimensions }) {
	const indexes = (await wrangler.json(["vectorize", "list", "--json"])) || [];
	const found = indexes.find((index) => index.name === indexName);
	if (!found) return { action: "create" };
	const have = found.config?.dimensions;
	const metric = found.config?.metric;
	if (have === dimensions && metric === METRIC) return { action: "keep", have, metric };
	const details = (await wrangler.json(["vectorize", "info", indexName, "--json"])) || {};
	const count = Number(details.vectorCount ?? details.vectorsCount ?? 0);
	if (count > 0) {
		throw new DeployError(
			`the Vectorize index ${indexName} has ${have} dimensions (${metric}) and holds ${count} vectors, ` +
				`but ${model} needs ${dimensions} (${METRIC}). Nothing was created or changed, and nothing was deployed.\n` +
				`      Either set EMBEDDING_MODEL / EMBEDDING_DIMENSIONS in wrangler.toml [vars] back to what the index ` +
				`was built with, or delete the index (npx wrangler vectorize delete ${indexName}) and run this again: ` +
				`the index is a mirror of D1, and POST /v1/debug/vector_reindex rebuilds it from the database.`,
		);
	}
	return { action: "recreate", have, metric };
}

async function ensureVectorIndex(wrangler, indexName, { model, dimensions }, plan) {
	step(`Vectorize index ${indexName} (${dimensions} dimensions, ${METRIC}, for ${model})`);
	if (plan.action === "keep") {
		info(`exists (${plan.have} dimensions, ${plan.metric})`);
		return { created: false };
	}
	if (plan.action === "recreate") {
		warn(`exists with ${plan.have} dimensions (${plan.metric}) but is empty: recreating it with ${dimensions} (${METRIC})`);
		await wrangler.call(["vectorize", "delete", indexName, "--force"]);
	} else {
		info("not found: creating it");
	}
	await wrangler.call(["vectorize", "create", indexName, `--dimensions=${dimensions}`, `--metric=${METRIC}`]);
	info("created");
	return { created: true };
}

async function ensureMetadataIndexes(wrangler, indexName, { created }) {
	step(`Vectorize metadata indexes on ${indexName}`);
	const existing = created ? [] : (await wrangler.json(["vectorize", "list-metadata-index", indexName, "--json"])) || [];
	const byName = new Map(existing.map((entry) => [entry.propertyName, entry.indexType]));
	let added = 0;
	for (const [property, type] of METADATA_INDEXES) {
		const have = byName.get(property);
		if (have === type) {
			info(`${property} (${type}) exists`);
		} else if (have) {
			warn(
				`${property} is indexed as ${have}, the Worker stores ${type}: filters on it will not match. Fix with ` +
					`\`npx wrangler vectorize delete-metadata-index ${indexName} --propertyName=${property}\` and run this again.`,
			);
		} else {
			await wrangler.call(["vectorize", "create-metadata-index", indexName, `--propertyName=${property}`, `--type=${type}`]);
			info(`${property} (${type}) created`);
			added += 1;
		}
	}
	if (added && !created) {
		warn("vectors written before a metadata index existed are not filtered by it; after the deploy, rebuild with POST /v1/debug/vector_reindex");
	}
}

async function ensureQueues(wrangler, queues) {
	step(`Queue ${queues.join(", ")}`);
	const listed = await wrangler.call(["queues", "list"]);
	const names = new Set(tableRows(listed.stdout).flat());
	for (const queue of queues) {
		if (names.has(queue)) {
			info(`${queue} exists`);
			continue;
		}
		const created = await wrangler.call(["queues", "create", queue], { allowFailure: true });
		if (created.code === 0) info(`${queue} created`);
		else if (/already (exists|taken)/i.test(created.stdout + created.stderr)) info(`${queue} exists`);
		else {
			process.stdout.write(indent(`${created.stdout}${created.stderr}`.trim() + "\n"));
			throw new DeployError(`\`wrangler queues create ${queue}\` failed (exit ${created.code})`);
		}
	}
}

function deployer(mode, projectDir) {
	if (mode === "wrangler") return { argv: null, label: "wrangler" };
	const pywrangler = onPath("pywrangler");
	if (pywrangler) return { argv: [pywrangler], label: "pywrangler" };
	const uv = onPath("uv");
	if (uv) return { argv: [uv, "tool", "run", "--from", "workers-py", "pywrangler"], label: "pywrangler (uv tool run --from workers-py)" };
	const python = onPath("python3") || onPath("python");
	if (python && spawnSync(python, ["-m", "uv", "--version"], { stdio: "ignore" }).status === 0) {
		return { argv: [python, "-m", "uv", "tool", "run", "--from", "workers-py", "pywrangler"], label: "pywrangler (python -m uv)" };
	}
	if (mode === "pywrangler") throw new DeployError("pywrangler was asked for, but neither pywrangler nor uv is installed");
	if (existsSync(join(projectDir, "python_modules"))) {
		warn("pywrangler not found: deploying with wrangler and the packages already vendored in python_modules/");
		return { argv: null, label: "wrangler" };
	}
	throw new DeployError(
		"Python Workers are deployed with pywrangler, which bundles the packages in pyproject.toml; " +
			"neither `pywrangler` nor `uv` is on PATH. Install uv (https://docs.astral.sh/uv/, or `pip install uv`) " +
			"or workers-py (`pip install workers-py`), or pass --deploy-with wrangler if python_modules/ is already vendored.",
	);
}

async function deploy(wrangler, chosen) {
	step("Deploy the Worker (--keep-vars keeps the variables set in the dashboard)");
	info(`with ${chosen.label}`);
	const args = ["deploy", "--keep-vars"];
	if (chosen.argv === null) {
		await wrangler.call(args, { echo: true });
		return;
	}
	const argv = [...chosen.argv, ...args, "--config", wrangler.configPath];
	const result = await run(argv, { cwd: wrangler.projectDir, env: wrangler.env, echo: true });
	if (result.code !== 0) throw new DeployError(`\`${chosen.label} deploy\` failed (exit ${result.code})`);
}

// -- main ----------------------------------------------------------------------------------

export async function main(argv) {
	const options = parseArgs(argv);
	if (options.help) {
		console.log(USAGE);
		return 0;
	}
	const configPath = resolve(options.config);
	if (!existsSync(configPath)) throw new DeployError(`no Wrangler config at ${configPath} (use --config)`);
	const projectDir = dirname(configPath);
	const config = parseWranglerToml(readFileSync(configPath, "utf8"), configPath);

	const database = (config.d1_databases || []).find((db) => db.binding === "DB") || (config.d1_databases || [])[0];
	const vectorIndex = (config.vectorize || []).find((v) => v.binding === "VECTORIZE") || (config.vectorize || [])[0];
	const queues = [
		...new Set([...(config.queues?.producers || []), ...(config.queues?.consumers || [])].map((q) => q.queue).filter(Boolean)),
	];
	if (!database?.database_name) throw new DeployError(`${configPath} declares no [[d1_databases]] with a database_name`);
	if (!vectorIndex?.index_name) throw new DeployError(`${configPath} declares no [[vectorize]] with an index_name`);
	const embedding = embeddingDimensions(config.vars || {});

	console.log(`Deploying ${config.name || "the Worker"} from ${configPath}`);
	// Known before anything is created, so a missing tool stops the run at the start.
	const chosenDeployer = deployer(options.deployWith, projectDir);
	const wrangler = new Wrangler(configPath, projectDir);
	await findAccount(wrangler);
	const indexPlan = await inspectVectorIndex(wrangler, vectorIndex.index_name, embedding);
	await ensureDatabase(wrangler, configPath, database);
	await applyMigrations(wrangler, database);
	const index = await ensureVectorIndex(wrangler, vectorIndex.index_name, embedding, indexPlan);
	await ensureMetadataIndexes(wrangler, vectorIndex.index_name, index);
	if (queues.length) await ensureQueues(wrangler, queues);
	else {
		step("Queue");
		info("none declared");
	}
	await deploy(wrangler, chosenDeployer);
	console.log("\nDone. Secrets are set apart from deploys: see SECRETS.md (`npx wrangler secret put CHATBOX_API_KEY`).");
	return 0;
}

const invokedDirectly = process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (invokedDirectly) {
	main(process.argv.slice(2)).then(
		(code) => process.exit(code),
		(error) => {
			if (error instanceof DeployError) {
				console.error(`\nerror: ${error.message}`);
				process.exit(1);
			}
			console.error(error);
			process.exit(2);
		},
	);
}

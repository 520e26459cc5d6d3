// The official MCP TypeScript SDK's OAuth client against our server (tests/oauth/test_oauth.py runs
// it): it discovers from the 401, registers, sends the "browser" to the authorization
// endpoint, where this script plays the owner through the consent page's own HTTP calls,
// exchanges the code, lists and calls tools, then refreshes.
//
//   node tests/oauth_ts_client.mjs <server url> <owner key>
//
// Prints one JSON object: what the client saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [server, ownerKey] = process.argv.slice(2);
const endpoint = new URL(server + "/mcp");
const REDIRECT = "http://localhost:3031/callback";

class MemoryProvider {
  constructor() {
    this.saved = {};
    this.sentTo = null;
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: "TypeScript app", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state() { return "ts-state"; }
  clientInformation() { return this.saved.client; }
  saveClientInformation(client) { this.saved.client = client; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  redirectToAuthorization(url) { this.sentTo = url; }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  codeVerifier() { return this.saved.verifier; }
}

/** The browser and the owner: follow the link, read the request, approve with the cookie. */
async function approve(url) {
  const owner = { Authorization: `Bearer ${ownerKey}` };
  const started = await fetch(url, { redirect: "manual" });
  if (started.status !== 303) throw new Error(`authorize answered ${started.status}: ${await started.text()}`);
  const requestId = new URL(started.headers.get("location")).searchParams.get("request");
  const cookie = started.headers.get("set-cookie").split(";")[0];
  const shown = await (await fetch(`${server}/v1/oauth/requests/${requestId}`, { headers: owner })).json();
  const decided = await fetch(`${server}/v1/oauth/requests/${requestId}/decision`, {
    method: "POST",
    headers: { ...owner, Cookie: cookie, Origin: server, "Content-Type": "application/json" },
    body: JSON.stringify({ approve: true }),
  });
  const back = new URL((await decided.json()).redirect_to);
  if (back.searchParams.get("state") !== "ts-state") throw new Error("state was not passed through");
  return { code: back.searchParams.get("code"), shown };
}

async function connected(provider) {
  const client = new Client({ name: "ts-oauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
  return client;
}

const provider = new MemoryProvider();
const seen = {};
try {
  await connected(provider);
  throw new Error("connected without authorization");
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
}
const { code, shown } = await approve(provider.sentTo);
seen.shown = shown;
const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
await transport.finishAuth(code);
let client = await connected(provider);
seen.tools = (await client.listTools()).tools.map((tool) => tool.name);
const written = await client.callTool({ name: "memory_upsert", arguments: { fact_key: "ts.tea", content: "The owner likes jasmine tea." } });
seen.wrote = !written.isError;
await client.close();
const before = provider.saved.tokens;
seen.refreshed = (await auth(provider, { serverUrl: endpoint })) === "AUTHORIZED";
seen.rotated = provider.saved.tokens.refresh_token !== before.refresh_token && provider.saved.tokens.access_token !== before.access_token;
client = await connected(provider);
const listed = await client.callTool({ name: "memory_list", arguments: { limit: 5 } });
seen.found = JSON.stringify(listed.structuredContent).includes("jasmine tea");
await client.close();
console.log(JSON.stringify(seen));

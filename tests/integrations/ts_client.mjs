// A host's client: the official TypeScript SDK (@modelcontextprotocol/sdk), as Claude Desktop,
// Claude Code, Cursor and VS Code embed it. Run by tests/integrations/test_mcp_typescript.py:
//   node ts_client.mjs SDK_FOLDER SCENARIO PATCHTX ROOT CHECK
// prints one JSON line: what the calls returned or threw, and the progress seen.
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const [sdk, scenario, patchtx, root, check] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdk}/node_modules/@modelcontextprotocol/sdk/dist/esm/${path}`).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const transport = new StdioClientTransport({
  command: patchtx, args: ["mcp", "--root", root, "--verify", check],
  env: { ...process.env }, stderr: "ignore",
});
const client = new Client({ name: "ts-host", version: "1.0.0" });
await client.connect(transport);
const patch = readFileSync(`${root}/../patch.txt`, "utf8");
const fence = "*** Begin Patch\n*** Add File: fence.txt\n+fence\n*** End Patch\n";
const out = { progress: [] };
const onprogress = (p) => out.progress.push([p.progress, p.message ?? null]);
const call = async (args, options) => {
  try {
    const result = await client.callTool({ name: "apply_patch", arguments: args }, undefined, options);
    return { isError: Boolean(result.isError), summary: result.structuredContent?.summary ?? null };
  } catch (error) {
    return { code: error.code ?? null, message: String(error.message) };
  }
};
if (scenario === "timeout") {
  // The host's time limit runs out while the check runs: the SDK gives up (-32001) and cancels.
  out.first = await call({ patch }, { timeout: 3000 });
} else {
  // The same limit, reset by each progress notification: the call outlives it and is answered.
  out.first = await call({ patch }, { timeout: 3000, resetTimeoutOnProgress: true, onprogress });
}
out.fence = await call({ patch: fence }, { timeout: 60000 });  // (waits for the workspace lock)
const log = await client.callTool({ name: "log", arguments: {} });
out.log = log.structuredContent.transactions.map((entry) => entry.paths.length);
console.log(JSON.stringify(out));
await client.close();

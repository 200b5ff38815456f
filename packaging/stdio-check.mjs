// Starts agent-mcp as an MCP host would, over stdio, sends initialize and
// checks the answer: the server's name and version. Then it closes stdin,
// as a host does to stop a stdio server, and expects a clean exit.
//
//   node packaging/stdio-check.mjs VERSION -- COMMAND [ARG...]
//   node packaging/stdio-check.mjs VERSION --mcpb DIR WORKSPACE
//
// With --mcpb, the command and its arguments are the ones Claude Desktop
// would run for the unpacked bundle in DIR with the working directory set to
// WORKSPACE and the other settings at their defaults: resolved from
// DIR/manifest.json by the bundle format's own library (@anthropic-ai/mcpb).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [version, mode, ...rest] = process.argv.slice(2);
const fail = (msg) => {
	console.error(`stdio-check: FAIL: ${msg}`);
	process.exit(1);
};
if (!version || (mode !== "--" && mode !== "--mcpb") || rest.length === 0) {
	console.error("usage: node packaging/stdio-check.mjs VERSION -- COMMAND [ARG...] | VERSION --mcpb DIR WORKSPACE");
	process.exit(2);
}

let command, args;
if (mode === "--mcpb") {
	const [dir, workspace] = rest;
	const require = createRequire(import.meta.url);
	const mcpb = await import(pathToFileURL(require.resolve("@anthropic-ai/mcpb")).href);
	const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
	const config = await mcpb.getMcpConfigForManifest({
		manifest,
		extensionPath: path.resolve(dir),
		systemDirs: { HOME: process.env.HOME || "", DESKTOP: "", DOCUMENTS: "", DOWNLOADS: "" },
		userConfig: { workspace },
		pathSeparator: path.sep,
	});
	if (!config) fail("the manifest gives no command for this platform with the working directory set");
	({ command, args } = config);
	const unresolved = [command, ...args].filter((a) => a.includes("${"));
	if (unresolved.length > 0) fail(`unresolved variables in ${JSON.stringify(unresolved)}`);
} else {
	[command, ...args] = rest;
}
console.log(`stdio-check: ${command} ${args.join(" ")}`);

const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const timer = setTimeout(() => {
	child.kill("SIGKILL");
	fail("no answer to initialize within 60 s");
}, 60_000);
child.on("error", (err) => fail(`cannot start ${command}: ${err.message}`));

let buffered = "";
let answered = false;
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
	buffered += chunk;
	let nl;
	while (!answered && (nl = buffered.indexOf("\n")) >= 0) {
		const line = buffered.slice(0, nl);
		buffered = buffered.slice(nl + 1);
		let msg;
		try {
			msg = JSON.parse(line);
		} catch {
			fail(`stdout carried a line that is not JSON-RPC: ${line.slice(0, 200)}`);
		}
		if (msg.id !== 1) continue;
		answered = true;
		const info = msg.result?.serverInfo;
		if (!info) fail(`initialize failed: ${line.slice(0, 400)}`);
		if (info.name !== "agent-mcp" || info.version !== version) {
			fail(`serverInfo is ${JSON.stringify(info)}, want agent-mcp ${version}`);
		}
		console.log(`stdio-check: initialize answered: ${info.name} ${info.version}, protocol ${msg.result.protocolVersion}`);
		child.stdin.end();
	}
});
child.on("exit", (code, signal) => {
	clearTimeout(timer);
	if (!answered) fail(`exited (${signal || code}) before answering initialize`);
	if (code !== 0) fail(`exited with ${signal || code} after stdin closed, want 0`);
	console.log("stdio-check: exited 0 when stdin closed");
});
child.stdin.write(
	JSON.stringify({
		jsonrpc: "2.0",
		id: 1,
		method: "initialize",
		params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "stdio-check", version: "1" } },
	}) + "\n",
);

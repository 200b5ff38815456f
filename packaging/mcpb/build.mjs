// Builds Claude Desktop's bundle (.mcpb) from a GoReleaser dist folder:
// manifest.json (this folder's, with the release's version) and the binaries
// it names, server/darwin/agent-mcp (the universal macOS binary),
// server/linux/agent-mcp and server/win32/agent-mcp.exe (amd64; Windows on
// Arm runs it under emulation), then validates and packs it with the
// format's own CLI.
//
//   node packaging/mcpb/build.mjs DIST OUT MCPB
//
// MCPB is the mcpb command (from the npm package @anthropic-ai/mcpb). OUT
// receives the staged folder OUT/bundle and OUT/agent-mcp-VERSION.mcpb.
// Platforms whose binary is not in DIST (a one-target snapshot) are left out
// of the manifest and named on stderr.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [dist, out, mcpb] = process.argv.slice(2);
if (!dist || !out || !mcpb) {
	console.error("usage: node packaging/mcpb/build.mjs DIST OUT MCPB");
	process.exit(2);
}

const readJSON = (file) => JSON.parse(fs.readFileSync(file, "utf8"));
const version = readJSON(path.join(dist, "metadata.json")).version;
const artifacts = readJSON(path.join(dist, "artifacts.json")).filter((a) => a.type === "Binary");
const pick = (goos, goarch) => artifacts.find((a) => a.goos === goos && a.goarch === goarch);

// Each of the manifest's platforms, the binary it runs, where that goes.
const platforms = [
	{ platform: "darwin", from: pick("darwin", "all"), to: "server/darwin/agent-mcp" },
	{ platform: "linux", from: pick("linux", "amd64"), to: "server/linux/agent-mcp" },
	{ platform: "win32", from: pick("windows", "amd64"), to: "server/win32/agent-mcp.exe" },
];

const manifest = readJSON(path.join(here, "manifest.json"));
manifest.version = version;
const config = manifest.server.mcp_config;
const present = platforms.filter((p) => p.from);
const missing = platforms.filter((p) => !p.from).map((p) => p.platform);
if (present.length === 0) throw new Error(`${dist}/artifacts.json has none of the bundle's binaries`);
if (missing.length > 0) console.error(`mcpb/build.mjs: not in ${dist}, left out of the bundle: ${missing.join(", ")}`);
for (const p of platforms) {
	const command = "${__dirname}/" + p.to;
	if (p.platform === "darwin") {
		if (config.command !== command) throw new Error(`manifest.json: the base command must be ${command}`);
	} else if (config.platform_overrides[p.platform]?.command !== command) {
		throw new Error(`manifest.json: platform_overrides.${p.platform}.command must be ${command}`);
	}
}
// The base command is the first platform present; the others are overrides.
config.command = "${__dirname}/" + present[0].to;
manifest.server.entry_point = present[0].to;
config.platform_overrides = Object.fromEntries(present.slice(1).map((p) => [p.platform, { command: "${__dirname}/" + p.to }]));
manifest.compatibility.platforms = present.map((p) => p.platform);

fs.rmSync(out, { recursive: true, force: true });
const bundle = path.join(out, "bundle");
for (const p of present) {
	fs.mkdirSync(path.dirname(path.join(bundle, p.to)), { recursive: true });
	fs.copyFileSync(p.from.path, path.join(bundle, p.to));
	fs.chmodSync(path.join(bundle, p.to), 0o755);
}
fs.writeFileSync(path.join(bundle, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");

const run = (...args) => execFileSync(mcpb, args, { stdio: "inherit" });
run("validate", path.join(bundle, "manifest.json"));
const file = path.join(out, `agent-mcp-${version}.mcpb`);
run("pack", bundle, file);
console.log(`packed ${file}`);

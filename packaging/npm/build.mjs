// Builds the npm packages from a GoReleaser dist folder (a snapshot or a
// release): the wrapper package agent-mcp, whose bin is agent-mcp.js, and one
// package per target, @agent-mcp/<os>-<cpu>, carrying that target's binary
// with os and cpu fields so npm installs only the one matching the machine.
// No package has an install script. Each is packed with `npm pack`.
//
//   node packaging/npm/build.mjs DIST OUT
//
// DIST holds GoReleaser's metadata.json and artifacts.json; OUT receives a
// folder per package and the tarballs under OUT/tarballs. Targets missing
// from DIST (a one-target snapshot) are left out of the optional dependencies
// and named on stderr.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [dist, out] = process.argv.slice(2);
if (!dist || !out) {
	console.error("usage: node packaging/npm/build.mjs DIST OUT");
	process.exit(2);
}

// GoReleaser's GOOS/GOARCH to Node's process.platform/process.arch.
const OS = { darwin: "darwin", linux: "linux", windows: "win32" };
const CPU = { amd64: "x64", arm64: "arm64" };
const OS_TITLE = { darwin: "macOS", linux: "Linux", win32: "Windows" };
const REPOSITORY = { type: "git", url: "git+https://github.com/agent-mcp/agent-mcp.git" };

function readJSON(file) {
	try {
		return JSON.parse(fs.readFileSync(file, "utf8"));
	} catch (err) {
		throw new Error(`${file}: ${err.message} (is ${dist} a GoReleaser dist folder?)`);
	}
}

const metadata = readJSON(path.join(dist, "metadata.json"));
const version = metadata.version;
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version || "")) {
	throw new Error(`metadata.json: version ${JSON.stringify(version)} is not semver, which npm requires`);
}

const binaries = readJSON(path.join(dist, "artifacts.json")).filter(
	(a) => a.type === "Binary" && OS[a.goos] && CPU[a.goarch],
);

fs.rmSync(out, { recursive: true, force: true });
const tarballs = path.join(out, "tarballs");
fs.mkdirSync(tarballs, { recursive: true });

function pack(dir) {
	const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", path.resolve(tarballs)], {
		cwd: dir,
		encoding: "utf8",
	}).trim();
	console.log(`packed ${path.join(tarballs, name.split("\n").pop())}`);
}

function writePackage(dir, manifest) {
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
}

const optional = {};
for (const a of binaries) {
	const os = OS[a.goos];
	const cpu = CPU[a.goarch];
	const name = `@agent-mcp/${os}-${cpu}`;
	if (optional[name]) throw new Error(`artifacts.json: two binaries for ${a.goos}/${a.goarch}`);
	const dir = path.join(out, `${os}-${cpu}`);
	const exe = os === "win32" ? "agent-mcp.exe" : "agent-mcp";
	fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
	fs.copyFileSync(path.join(a.path), path.join(dir, "bin", exe));
	fs.chmodSync(path.join(dir, "bin", exe), 0o755);
	writePackage(dir, {
		name,
		version,
		description: `The agent-mcp binary for ${OS_TITLE[os]} on ${cpu}; install the agent-mcp package, which runs it.`,
		repository: REPOSITORY,
		os: [os],
		cpu: [cpu],
		files: ["bin/"],
		preferUnplugged: true,
	});
	fs.writeFileSync(
		path.join(dir, "README.md"),
		`# ${name}\n\nThe agent-mcp ${version} binary for ${OS_TITLE[os]} on ${cpu}. ` +
			"It is an optional dependency of the `agent-mcp` package, which picks the one for the machine: " +
			"install or run that (`npx -y agent-mcp serve`).\n",
	);
	pack(dir);
	optional[name] = version;
}
if (Object.keys(optional).length === 0) throw new Error(`artifacts.json in ${dist} lists no binaries`);
const all = Object.values(OS).flatMap((os) => Object.values(CPU).map((cpu) => `@agent-mcp/${os}-${cpu}`));
const missing = all.filter((n) => !optional[n]);
if (missing.length > 0) console.error(`build.mjs: not in ${dist}, left out: ${missing.join(", ")}`);

const main = path.join(out, "agent-mcp");
fs.mkdirSync(path.join(main, "bin"), { recursive: true });
fs.copyFileSync(path.join(here, "agent-mcp.js"), path.join(main, "bin", "agent-mcp.js"));
fs.chmodSync(path.join(main, "bin", "agent-mcp.js"), 0o755);
fs.copyFileSync(path.join(here, "README.md"), path.join(main, "README.md"));
writePackage(main, {
	name: "agent-mcp",
	version,
	// The official MCP registry checks that the package names the server.
	mcpName: "io.github.agent-mcp/agent-mcp",
	description: "Claude Code's tool suite over MCP, with permission rules and a kernel sandbox for Bash: one native binary.",
	keywords: ["mcp", "model-context-protocol", "mcp-server", "claude", "coding-agent"],
	repository: REPOSITORY,
	bin: { "agent-mcp": "bin/agent-mcp.js" },
	files: ["bin/"],
	engines: { node: ">=18" },
	optionalDependencies: Object.fromEntries(Object.entries(optional).sort()),
});
pack(main);

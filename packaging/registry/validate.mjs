// Checks a server.json as the official MCP registry would before fetching
// anything: against the registry's published schema (testdata/
// server.schema.json, see testdata/SOURCE), then the registry's own rules
// for each package type, and against what this repository ships: the npm
// package's mcpName, the image's server-name label and the bundle's SHA-256.
//
//   node packaging/registry/validate.mjs SERVER_JSON [--npm PACKAGE_JSON] [--mcpb FILE] [--containerfile FILE]
//
// Needs ajv and ajv-formats (npm) on NODE_PATH or beside it.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const Ajv = require("ajv").default;
const addFormats = require("ajv-formats").default;

const args = process.argv.slice(2);
const file = args.shift();
const opts = {};
while (args.length > 0) {
	const flag = args.shift();
	if (!["--npm", "--mcpb", "--containerfile"].includes(flag) || args.length === 0) {
		console.error(`validate.mjs: unknown or incomplete flag ${flag}`);
		process.exit(2);
	}
	opts[flag.slice(2)] = args.shift();
}
if (!file) {
	console.error("usage: node packaging/registry/validate.mjs SERVER_JSON [--npm PACKAGE_JSON] [--mcpb FILE] [--containerfile FILE]");
	process.exit(2);
}

const problems = [];
const schema = JSON.parse(fs.readFileSync(path.join(here, "testdata", "server.schema.json"), "utf8"));
const server = JSON.parse(fs.readFileSync(file, "utf8"));
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(schema);
if (!validate(server)) {
	for (const e of validate.errors) problems.push(`schema: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
}
if (server.$schema !== schema.$id) problems.push(`$schema is ${server.$schema}, the vendored schema is ${schema.$id}`);

// The registry's rules beyond the schema (its internal/validators).
const nameRE = /^[a-zA-Z0-9][a-zA-Z0-9.-]*[a-zA-Z0-9]\/[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$/;
if (!nameRE.test(server.name || "")) problems.push(`name ${server.name}: must be namespace/name, each starting and ending alphanumeric`);
const looksLikeRange = (v) => /^[\^~<>=*]|\s|\|\||(^|\.)[xX*](\.|$)/.test(v);
if (looksLikeRange(server.version || "")) problems.push(`version ${server.version} looks like a range`);
const stamp = (i, msg) => problems.push(`packages[${i}]: ${msg}`);
(server.packages || []).forEach((pkg, i) => {
	if (/\s/.test(pkg.identifier)) stamp(i, "identifier has spaces");
	if (pkg.version !== undefined && (pkg.version === "latest" || looksLikeRange(pkg.version))) stamp(i, `version ${pkg.version} is not one version`);
	if (pkg.version !== undefined && pkg.version !== server.version) stamp(i, `version ${pkg.version} differs from the server's ${server.version}`);
	for (const field of ["runtimeArguments", "packageArguments"]) {
		(pkg[field] || []).forEach((arg, j) => {
			const where = `${field}[${j}]`;
			if (arg.type === "positional" && !arg.value && !arg.valueHint) stamp(i, `${where}: a positional argument needs value or valueHint`);
			if (arg.type === "named") {
				if (!arg.name || /[<> $]/.test(arg.name)) stamp(i, `${where}: bad name ${JSON.stringify(arg.name)}`);
				if (arg.value && arg.value.startsWith(arg.name)) stamp(i, `${where}: value starts with the argument's name`);
			}
		});
	}
	switch (pkg.registryType) {
		case "npm": {
			if (pkg.fileSha256) stamp(i, "npm packages must not have fileSha256");
			if (pkg.registryBaseUrl && pkg.registryBaseUrl !== "https://registry.npmjs.org") stamp(i, `registryBaseUrl ${pkg.registryBaseUrl} is not npm's`);
			if (opts.npm) {
				const manifest = JSON.parse(fs.readFileSync(opts.npm, "utf8"));
				if (manifest.name !== pkg.identifier) stamp(i, `identifier ${pkg.identifier} but the npm package is ${manifest.name}`);
				if (manifest.version !== pkg.version) stamp(i, `version ${pkg.version} but the npm package is ${manifest.version}`);
				if (manifest.mcpName !== server.name) stamp(i, `the npm package's mcpName is ${manifest.mcpName}, the registry requires ${server.name}`);
			}
			break;
		}
		case "mcpb": {
			if (pkg.registryBaseUrl) stamp(i, "mcpb packages must not have registryBaseUrl");
			let url;
			try {
				url = new URL(pkg.identifier);
			} catch {
				stamp(i, `identifier ${pkg.identifier} is not a URL`);
				break;
			}
			if (url.protocol !== "https:") stamp(i, "the bundle's URL must use https");
			if (!pkg.identifier.toLowerCase().includes("mcp")) stamp(i, "the bundle's URL must contain 'mcp'");
			if (!/^[a-f0-9]{64}$/.test(pkg.fileSha256 || "")) stamp(i, "mcpb packages need fileSha256");
			if (opts.mcpb) {
				const sum = crypto.createHash("sha256").update(fs.readFileSync(opts.mcpb)).digest("hex");
				if (sum !== pkg.fileSha256) stamp(i, `fileSha256 ${pkg.fileSha256} but ${opts.mcpb} has ${sum}`);
			}
			break;
		}
		case "oci": {
			if (pkg.registryBaseUrl) stamp(i, "oci packages must not have registryBaseUrl");
			if (pkg.version !== undefined) stamp(i, "oci packages must not have version: the tag carries it");
			if (pkg.fileSha256) stamp(i, "oci packages must not have fileSha256");
			const m = /^([^/]+)\/(.+?)(?::([\w][\w.-]*))?(?:@sha256:[a-f0-9]{64})?$/.exec(pkg.identifier);
			if (!m || !["docker.io", "ghcr.io"].includes(m[1])) stamp(i, `identifier ${pkg.identifier}: the registry takes docker.io or ghcr.io images`);
			else if (!m[3] && !pkg.identifier.includes("@sha256:")) stamp(i, `identifier ${pkg.identifier} needs a tag or digest`);
			else if (m[3] !== server.version) stamp(i, `the image's tag ${m[3]} differs from the server's version ${server.version}`);
			if (opts.containerfile) {
				const text = fs.readFileSync(opts.containerfile, "utf8");
				const label = /LABEL\s+io\.modelcontextprotocol\.server\.name="([^"]+)"/.exec(text);
				if (!label || label[1] !== server.name) {
					stamp(i, `${opts.containerfile} must carry LABEL io.modelcontextprotocol.server.name="${server.name}" (the registry reads it from the image)`);
				}
			}
			break;
		}
		default:
			stamp(i, `registryType ${pkg.registryType} is not one this repository ships`);
	}
});

if (problems.length > 0) {
	console.error(`${file}: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
	process.exit(1);
}
console.log(`${file}: valid (schema ${schema.$id} and the registry's package rules)`);

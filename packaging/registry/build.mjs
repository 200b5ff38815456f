// Writes the server.json a release submits to the official MCP registry:
// this folder's server.json with the release's version in every package and
// the bundle's SHA-256, then checks it (validate.mjs).
//
//   node packaging/registry/build.mjs VERSION MCPB OUT
//
// VERSION is the release's (GoReleaser's metadata.json), MCPB the .mcpb file
// the release uploads, OUT the server.json to write.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [version, mcpb, out] = process.argv.slice(2);
if (!version || !mcpb || !out) {
	console.error("usage: node packaging/registry/build.mjs VERSION MCPB OUT");
	process.exit(2);
}

const server = JSON.parse(fs.readFileSync(path.join(here, "server.json"), "utf8"));
const template = server.version;
server.version = version;
for (const pkg of server.packages) {
	if ("version" in pkg) pkg.version = version;
	pkg.identifier = pkg.identifier.replaceAll(template, version);
	if (pkg.registryType === "mcpb") {
		if (path.basename(new URL(pkg.identifier).pathname) !== path.basename(mcpb)) {
			throw new Error(`server.json: the bundle's URL ${pkg.identifier} does not name ${path.basename(mcpb)}`);
		}
		pkg.fileSha256 = crypto.createHash("sha256").update(fs.readFileSync(mcpb)).digest("hex");
	}
}
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify(server, null, 2) + "\n");
console.log(`wrote ${out}`);

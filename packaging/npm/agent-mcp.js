#!/usr/bin/env node
// The agent-mcp command of the npm package: finds the native binary that the
// platform's optional dependency carries (@agent-mcp/<os>-<cpu>) and runs it
// with this process's arguments, stdin, stdout and stderr, forwarding the
// signals a host sends and exiting as the binary did. There is no install
// script: npm installs only the optional dependency whose os and cpu fields
// match this machine.
"use strict";

const { spawn } = require("child_process");

// The targets the release builds, by Node's process.platform and process.arch.
const PACKAGES = {
	"darwin arm64": "@agent-mcp/darwin-arm64",
	"darwin x64": "@agent-mcp/darwin-x64",
	"linux arm64": "@agent-mcp/linux-arm64",
	"linux x64": "@agent-mcp/linux-x64",
	"win32 arm64": "@agent-mcp/win32-arm64",
	"win32 x64": "@agent-mcp/win32-x64",
};

function fail(message) {
	process.stderr.write(`agent-mcp (npm): ${message}\n`);
	process.exit(1);
}

function binaryPath() {
	const key = `${process.platform} ${process.arch}`;
	const pkg = PACKAGES[key];
	if (!pkg) {
		fail(
			`no binary is published for ${process.platform}/${process.arch}; ` +
				`the npm package covers ${Object.keys(PACKAGES).join(", ")}. ` +
				"The release archives and `go install` cover the rest.",
		);
	}
	const exe = process.platform === "win32" ? "agent-mcp.exe" : "agent-mcp";
	try {
		return require.resolve(`${pkg}/bin/${exe}`);
	} catch (err) {
		fail(
			`the package ${pkg}, which carries the binary for this platform, is not installed ` +
				"(was it installed with --omit=optional or --no-optional?). " +
				`Reinstall agent-mcp with optional dependencies. (${err.code || err.message})`,
		);
	}
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// A host stops a stdio server by closing its stdin and then signalling the
// process it started, which is this one: pass each signal on, once the
// binary runs, and let the binary decide when to exit.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"].filter(
	(s) => process.platform !== "win32" || s === "SIGINT" || s === "SIGTERM",
);
for (const signal of forwarded) {
	process.on(signal, () => {
		if (child.exitCode === null && child.signalCode === null) child.kill(signal);
	});
}

child.on("error", (err) => fail(`cannot run ${child.spawnfile}: ${err.message}`));
child.on("exit", (code, signal) => {
	if (signal) {
		// End the same way, so the host sees the signal and not a made-up code.
		for (const s of forwarded) process.removeAllListeners(s);
		process.kill(process.pid, signal);
		// Reached only where this process ignores the signal.
		setImmediate(() => process.exit(128 + (require("os").constants.signals[signal] || 0)));
		return;
	}
	process.exit(code === null ? 1 : code);
});

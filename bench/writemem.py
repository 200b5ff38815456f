#!/usr/bin/env python3
"""writemem.py: how much a large Write raises agent-mcp's peak memory, over stdio or HTTP.

Usage: writemem.py [--http=session|--http=sessionless] AGENT_MCP [SIZE_BYTES] [ROUNDS] [EXTRA_SERVE_FLAGS...]
Each round starts `agent-mcp serve` in a fresh directory (bypassPermissions, a hermetic HOME),
initializes, makes a small Write to warm up, then Writes SIZE_BYTES (default 10,000,000) of
ordinary text lines and reads the server's peak RSS (VmHWM in /proc) before and after. It
prints, per round and as the median, the rise of the peak as a multiple of the content, and
the largest heap the Go runtime reached (heap size at the start of a collection, from
GODEBUG=gctrace=1). Without --http the session is over stdio; --http=session serves
`serve --http` on 127.0.0.1 and talks protocol 2025-11-25 (an MCP session, responses as SSE),
--http=sessionless protocol 2026-07-28 (no session; state per bearer token). Linux only. See
"File tools" in docs/tools.md for the results.
"""
import http.client, json, os, re, statistics, subprocess, sys, tempfile, threading, urllib.parse

args = sys.argv[1:]
mode = "stdio"
if args and args[0].startswith("--http"):
    mode = args.pop(0).partition("=")[2] or "session"
    if mode not in ("session", "sessionless"):
        sys.exit("--http= takes session or sessionless")
binary = args[0]
size = int(args[1]) if len(args) > 1 else 10_000_000
rounds = int(args[2]) if len(args) > 2 else 5
extra = args[3:]
LINE = "an ordinary line of generated content for the big write\n"
TOKEN = "writemem-token-0123456789"


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key + " not found")


class Stdio:
    """One stdio session with the server p."""

    def __init__(self, p):
        self.p = p
        self.call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "writemem", "version": "1"}})
        p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def call(self, i, method, params):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == i:
                return m

    def close(self):
        self.p.stdin.close()


class HTTP:
    """Requests to `serve --http` at url, in an MCP session (2025-11-25) or none (2026-07-28)."""

    def __init__(self, url, sessionless):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        self.path = u.path
        self.sessionless = sessionless
        self.sid = None
        if sessionless:
            return
        self.call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "writemem", "version": "1"}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})

    def post(self, msg, headers):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "Authorization": "Bearer " + TOKEN, **headers}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        self.conn.request("POST", self.path, body=json.dumps(msg).encode(), headers=h)
        resp = self.conn.getresponse()
        body = resp.read().decode()
        if resp.status >= 300:
            sys.exit(f"HTTP {resp.status}: {body[:500]}")
        self.sid = self.sid or resp.getheader("Mcp-Session-Id")
        return body

    def call(self, i, method, params):
        headers = {}
        if self.sessionless:
            params = dict(params, _meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                         "io.modelcontextprotocol/clientInfo": {"name": "writemem", "version": "1"},
                                         "io.modelcontextprotocol/clientCapabilities": {}})
            headers = {"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
            if method == "tools/call":
                headers["Mcp-Name"] = params["name"]
        elif method != "initialize":
            headers = {"Mcp-Protocol-Version": "2025-11-25"}
        body = self.post({"jsonrpc": "2.0", "id": i, "method": method, "params": params}, headers)
        for line in body.splitlines():  # an SSE stream, or one JSON object
            line = line.removeprefix("data:").strip()
            if line.startswith("{"):
                m = json.loads(line)
                if m.get("id") == i:
                    return m
        sys.exit("no response in " + body[:500])

    def close(self):
        self.conn.close()


def one_round():
    ws, home = tempfile.mkdtemp(), tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENT_MCP_", "CLAUDE"))}
    env.update(HOME=home, GODEBUG="gctrace=1")
    cmd = [binary, "serve", "--permission-mode", "bypassPermissions"]
    if mode != "stdio":
        cmd += ["--http", "--addr", "127.0.0.1:0", "--token", TOKEN]
    p = subprocess.Popen(cmd + extra, cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    gclog, url = [], threading.Event()

    def read_stderr():
        for line in p.stderr:
            line = line.decode(errors="replace")
            gclog.append(line)
            if line.startswith("agent-mcp serving MCP at "):
                url.address = line.split()[-1]
                url.set()
    threading.Thread(target=read_stderr, daemon=True).start()
    if mode == "stdio":
        c = Stdio(p)
    else:
        if not url.wait(60):
            sys.exit("the server did not print its URL")
        c = HTTP(url.address, mode == "sessionless")
    c.call(1, "tools/call", {"name": "Write", "arguments": {"file_path": os.path.join(ws, "small.txt"), "content": "x"}})
    before = vm(p.pid, "VmHWM")
    content = (LINE * (size // len(LINE) + 1))[:size]
    res = c.call(2, "tools/call", {"name": "Write", "arguments": {"file_path": os.path.join(ws, "big.txt"), "content": content}})
    after = vm(p.pid, "VmHWM")
    c.close()
    if mode == "stdio":
        p.stdin.close()
    else:
        p.terminate()
    p.wait()
    if res.get("result", {}).get("isError") or "error" in res:
        sys.exit("the Write failed: " + json.dumps(res)[:500])
    if os.path.getsize(os.path.join(ws, "big.txt")) != size:
        sys.exit("the file does not hold the content")
    heap = max((int(m.group(1)) for m in re.finditer(r"(\d+)->\d+->\d+ MB", "".join(gclog))), default=0)
    return (after - before) / size, heap


results = []
for r in range(rounds):
    rise, heap = one_round()
    results.append(rise)
    print(f"round {r + 1}: peak RSS rose {rise:.1f}x the content; largest heap {heap} MB")
print(f"median over {rounds} rounds ({mode}): peak RSS rose {statistics.median(results):.1f}x the content ({size:,} bytes)")

#!/usr/bin/env python3
"""writemem.py: how much a large Write raises agent-mcp's peak memory, over stdio.

Usage: writemem.py AGENT_MCP [SIZE_BYTES] [ROUNDS] [EXTRA_SERVE_FLAGS...]
Each round starts `agent-mcp serve` in a fresh directory (bypassPermissions, a hermetic HOME),
initializes, makes a small Write to warm up, then Writes SIZE_BYTES (default 10,000,000) of
ordinary text lines and reads the server's peak RSS (VmHWM in /proc) before and after. It
prints, per round and as the median, the rise of the peak as a multiple of the content, and
the largest heap the Go runtime reached (heap size at the start of a collection, from
GODEBUG=gctrace=1). Linux only. See the README's Write section for the results.
"""
import json, os, re, statistics, subprocess, sys, tempfile

binary = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
extra = sys.argv[4:]
LINE = "an ordinary line of generated content for the big write\n"


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key + " not found")


def one_round():
    ws, home = tempfile.mkdtemp(), tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENT_MCP_", "CLAUDE"))}
    env.update(HOME=home, GODEBUG="gctrace=1")
    gclog = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen([binary, "serve", "--permission-mode", "bypassPermissions"] + extra, cwd=ws, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=gclog)

    def call(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i:
                return m

    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "writemem", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    call(1, "tools/call", {"name": "Write", "arguments": {"file_path": os.path.join(ws, "small.txt"), "content": "x"}})
    before = vm(p.pid, "VmHWM")
    content = (LINE * (size // len(LINE) + 1))[:size]
    res = call(2, "tools/call", {"name": "Write", "arguments": {"file_path": os.path.join(ws, "big.txt"), "content": content}})
    after = vm(p.pid, "VmHWM")
    p.stdin.close()
    p.wait()
    if res.get("result", {}).get("isError") or "error" in res:
        sys.exit("the Write failed: " + json.dumps(res)[:500])
    if os.path.getsize(os.path.join(ws, "big.txt")) != size:
        sys.exit("the file does not hold the content")
    gclog.seek(0)
    heap = max((int(m.group(1)) for m in re.finditer(r"(\d+)->\d+->\d+ MB", gclog.read())), default=0)
    return (after - before) / size, heap


results = []
for r in range(rounds):
    rise, heap = one_round()
    results.append(rise)
    print(f"round {r + 1}: peak RSS rose {rise:.1f}x the content; largest heap {heap} MB")
print(f"median over {rounds} rounds: peak RSS rose {statistics.median(results):.1f}x the content ({size:,} bytes)")

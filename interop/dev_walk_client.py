"""The host of interop/dev-walk.sh: one stdio connection to `switchboard dev -- cargo run`, held
while the test edits the server's source, speaking raw JSON-RPC (2025-11-25) so that nothing
between the test and the front is ours.

    python3 interop/dev_walk_client.py SWITCHBOARD PROJECT_DIR

Runs `SWITCHBOARD dev -- cargo run --offline` in PROJECT_DIR (its `src/main.rs` the server with
one tool, `add`), then on that one connection:
  1. initialize: the answer names the user's server (serverInfo, instructions), not the gateway;
  2. tools/list is [add]; add answers;
  3. src/main.rs gains a second tool, `mul`: dev rebuilds with cargo and restarts the server in
     place; the connection receives notifications/tools/list_changed, tools/list is [add, mul],
     mul answers (the new build), and nothing asked it to initialize again;
  4. src/main.rs stops compiling: dev's stderr shows the build failure with rustc's error, and
     the previous build keeps serving (tools/list [add, mul], mul answers);
  5. stdin closed: dev exits.
Every wait is bounded and waits for its event. Prints PASS/FAIL lines and the measured times;
exits 0 only if nothing failed.
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time

SERVER_NAME = "walk-server"
INSTRUCTIONS = "Arithmetic on integers, for the dev walk."

ONE_TOOL = '''use switchboard::server::Server;
use switchboard::transport::StdioTransport;
use switchboard::types::lifecycle::Implementation;

/// Add two integers.
#[switchboard::tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}
%(more)s
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder(Implementation::new("%(name)s", "0.1.0"))
        .instructions("%(instructions)s")
        .register(add)%(register)s
        .build()?;
    server.serve(StdioTransport::stdio())?.closed().await;
    Ok(())
}
'''

MUL = '''
/// Multiply two integers.
#[switchboard::tool]
async fn mul(a: i64, b: i64) -> String {
    (a * b).to_string()
}
'''


def source(with_mul, broken=False):
    more = MUL if with_mul else ""
    if broken:
        more += "\nfn broken() -> i64 { not_a_function_of_the_walk() }\n"
    return ONE_TOOL % {
        "more": more,
        "name": SERVER_NAME,
        "instructions": INSTRUCTIONS,
        "register": "\n        .register(mul)" if with_mul else "",
    }


passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {what}", flush=True)
    else:
        failed += 1
        print(f"FAIL {what}: {detail}", flush=True)
    return ok


class Dev:
    def __init__(self, switchboard, project):
        self.err_lines = []
        self.err_cv = threading.Condition()
        self.inbox = queue.Queue()
        self.notifications = []
        self.next_id = 0
        self.proc = subprocess.Popen(
            [switchboard, "dev", "--", "cargo", "run", "--offline", "--quiet"],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
            text=True,
            bufsize=1,
        )
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for line in self.proc.stdout:
            self.inbox.put(line)
        self.inbox.put(None)

    def _read_err(self):
        for line in self.proc.stderr:
            with self.err_cv:
                self.err_lines.append(line.rstrip("\n"))
                self.err_cv.notify_all()
        with self.err_cv:
            self.err_lines.append("<stderr closed>")
            self.err_cv.notify_all()

    def stderr_has(self, *needles, after=0):
        return all(any(n in l for l in self.err_lines[after:]) for n in needles)

    def wait_stderr(self, *needles, timeout, after=0):
        deadline = time.monotonic() + timeout
        with self.err_cv:
            while not self.stderr_has(*needles, after=after):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    return self.stderr_has(*needles, after=after)
                self.err_cv.wait(left)
            return True

    def _frame(self, timeout):
        """The next frame from dev's stdout, or None at its end or past the timeout."""
        try:
            line = self.inbox.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if line is None:
            return None
        msg = json.loads(line)
        return msg

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params=None, timeout=60):
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        deadline = time.monotonic() + timeout
        while True:
            m = self._frame(deadline - time.monotonic())
            if m is None:
                raise RuntimeError(f"no answer to {method} within {timeout} s")
            if "method" in m and "id" not in m:
                self.notifications.append(m["method"])
            elif "method" in m:
                # A request from the server (none is expected): refuse it.
                self.send({"jsonrpc": "2.0", "id": m["id"],
                           "error": {"code": -32601, "message": "not supported"}})
            elif m.get("id") == rid:
                if "error" in m:
                    raise RuntimeError(f"{method} failed: {m['error']}")
                return m["result"]

    def wait_notification(self, method, timeout):
        deadline = time.monotonic() + timeout
        while method not in self.notifications:
            m = self._frame(deadline - time.monotonic())
            if m is None:
                return False
            if "method" in m and "id" not in m:
                self.notifications.append(m["method"])
        return True


def tool_names(dev):
    return sorted(t["name"] for t in dev.request("tools/list")["tools"])


def call(dev, name, a, b):
    r = dev.request("tools/call", {"name": name, "arguments": {"a": a, "b": b}})
    return None if r.get("isError") else r["content"][0]["text"]


def main():
    switchboard, project = sys.argv[1], sys.argv[2]
    main_rs = os.path.join(project, "src", "main.rs")
    with open(main_rs, "w") as f:
        f.write(source(with_mul=False))
    dev = Dev(switchboard, project)
    try:
        run(dev, main_rs)
    except Exception as e:  # noqa: BLE001 - any failure is reported with dev's stderr
        check(False, "the walk ran to its end", repr(e))
    finally:
        if dev.proc.poll() is None:
            dev.proc.stdin.close()
            try:
                dev.proc.wait(timeout=30)
                check(True, "dev exits when the host closes stdin")
            except subprocess.TimeoutExpired:
                check(False, "dev exits when the host closes stdin", "still running after 30 s")
                dev.proc.kill()
                dev.proc.wait()
        if failed:
            print("--- dev's stderr (last 80 lines):", file=sys.stderr)
            print("\n".join(dev.err_lines[-80:]), file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and passed > 0 else 1)


def run(dev, main_rs):
    # 1. One connection; the first build is already made, so dev starts at once.
    t0 = time.monotonic()
    init = dev.request("initialize", {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "dev-walk-host", "version": "1"},
    }, timeout=180)
    dev.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    print(f"time: dev answered initialize in {time.monotonic() - t0:.1f} s", flush=True)
    info = init.get("serverInfo", {})
    check(info.get("name") == SERVER_NAME and info.get("version") == "0.1.0",
          "the host sees the user's server, not the gateway (serverInfo)", json.dumps(info))
    check(init.get("instructions") == INSTRUCTIONS,
          "the host gets the user's server's instructions", json.dumps(init.get("instructions")))
    check(init.get("capabilities", {}).get("tools", {}).get("listChanged") is True,
          "the front offers tools.listChanged", json.dumps(init.get("capabilities")))
    check(tool_names(dev) == ["add"], "tools/list is [add]", tool_names(dev))
    check(call(dev, "add", 2, 3) == "5", "add answers 5")

    # 2. The source gains a tool: cargo rebuilds, dev restarts the server in place.
    seen = len(dev.err_lines)
    t0 = time.monotonic()
    with open(main_rs, "w") as f:
        f.write(source(with_mul=True))
    told = dev.wait_notification("notifications/tools/list_changed", timeout=600)
    check(told, "the same connection receives notifications/tools/list_changed after the rebuild",
          "none within 600 s")
    print(f"time: edit to list_changed (cargo build and restart) {time.monotonic() - t0:.1f} s",
          flush=True)
    check(dev.wait_stderr("dev: building: cargo build --offline --quiet", "dev: restarted",
                          timeout=60, after=seen),
          "dev built with cargo and restarted the server", "\n".join(dev.err_lines[seen:]))
    names = tool_names(dev)
    check(names == ["add", "mul"], "tools/list on the same connection is [add, mul]", names)
    check(call(dev, "mul", 6, 7) == "42", "the new build's mul answers 42")

    # 3. The source stops compiling: the error on stderr, the previous build serving.
    seen = len(dev.err_lines)
    with open(main_rs, "w") as f:
        f.write(source(with_mul=True, broken=True))
    shown = dev.wait_stderr("dev: build failed", "not_a_function_of_the_walk", timeout=600,
                            after=seen)
    check(shown, "a build error is shown on dev's stderr (rustc's message)",
          "\n".join(dev.err_lines[seen:]))
    check(dev.stderr_has("the previous build keeps serving", after=seen),
          "dev says the previous build keeps serving")
    names = tool_names(dev)
    check(names == ["add", "mul"], "the previous build still lists [add, mul]", names)
    check(call(dev, "mul", 3, 3) == "9", "the previous build's mul still answers")


if __name__ == "__main__":
    main()

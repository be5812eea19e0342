#!/usr/bin/env bash
# Two `switchboard serve --http --store redis://…` nodes behind a real round-robin nginx, with a
# real redis-server, all on 127.0.0.1 (Debian's packages; scripts/install-peers.sh installs them):
#
#   1. the official TypeScript and Python SDK clients (interop/run-clients.sh --http) pass the
#      whole everything contract through the proxy: sampling, elicitation, roots, progress,
#      subscriptions, logging, pagination;
#   2. our own client does too (`switchboard check` through the proxy);
#   3. nginx's log shows that requests of one session alternated between the two nodes;
#   4. DELETE through the proxy ends the session on every node (the next request gets 404),
#      and the session's keys leave Redis;
#   5. the node serving a long tool call with progress is killed (SIGKILL) in the middle: the
#      client (the TypeScript SDK, then ours) resumes through the proxy on the other node,
#      which takes the session over and runs the call again; the client gets every progress
#      notification once, in order, and the result once (the killed node is started again,
#      on the same port, between the two);
#   6. Redis restarted under a live session: the nodes reconnect, requests alternate again, and
#      an event stored before the restart is replayed with Last-Event-ID;
#   7. tasks live in Redis: a finished task's result is served after the node that ran it was
#      killed, and a task whose node was killed mid-work reads `failed`, saying so.
#
#   interop/cluster.sh [SWITCHBOARD_BIN]     (default target/debug/switchboard)
#
# Ends with `cluster: N passed, M failed`. A part that cannot start fails the run; nothing skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$INTEROP_REPO"
BIN="${1:-target/debug/switchboard}"
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
command -v redis-server > /dev/null || interop_die "redis-server is not installed (scripts/install-peers.sh installs Debian's)"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$NGINX" ] || interop_die "nginx is not installed (scripts/install-peers.sh installs Debian's)"

work="$(mktemp -d)"
pids=()
stop_all() {
  local p
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2> /dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  # CLUSTER_KEEP_LOGS=DIR keeps the nodes', nginx's and Redis's logs.
  if [ -n "${CLUSTER_KEEP_LOGS:-}" ]; then mkdir -p "$CLUSTER_KEEP_LOGS" && cp "$work"/*.log "$CLUSTER_KEEP_LOGS/" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap stop_all EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Redis on loopback, its data in the work folder.
redis_port="$(free_port)"
start_redis() {
  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly yes \
    --appendfsync always --dir "$work" --loglevel warning >> "$work/redis.log" 2>&1 &
  redis_pid=$!
  pids+=($redis_pid)
}
start_redis
redis_cmd() {
  python3 - "$redis_port" "$@" << 'EOF'
import socket, sys
port, args = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port), timeout=5)
out = "*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a.encode()), a) for a in args)
s.sendall(out.encode())
f = s.makefile("rb")
def read():
    line = f.readline().decode().rstrip("\r\n")
    t, rest = line[0], line[1:]
    if t in "+-:": return rest
    if t == "$":
        n = int(rest)
        if n < 0: return ""
        data = f.read(n + 2)[:-2].decode()
        return data
    if t == "*":
        return "\n".join(read() for _ in range(max(int(rest), 0)))
print(read())
EOF
}
for _ in $(seq 100); do
  [ "$(redis_cmd PING 2> /dev/null || true)" = PONG ] && break
  sleep 0.1
done
[ "$(redis_cmd PING)" = PONG ] || interop_die "redis-server did not start: $(cat "$work/redis.log")"
store="redis://127.0.0.1:$redis_port/0"
# The deployment secret every node shares (requestState, cursors, relays between nodes).
export SWITCHBOARD_SECRET="interop-cluster-secret-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "== cluster: redis-server on 127.0.0.1:$redis_port"

# Two nodes sharing it. Sets NODE_URL (not a subshell: the node's pid stays in `pids`).
start_node() {
  local name="$1" log="$work/node-$1.log" before
  before="$(grep -c 'listening on' "$log" 2> /dev/null || true)"
  "$BIN" serve --http "127.0.0.1:${2:-0}" --store "$store" --node-id "$name" > /dev/null 2>> "$log" &
  pids+=($!)
  NODE_PID=$!
  NODE_URL=""
  for _ in $(seq 100); do
    if [ "$(grep -c 'listening on' "$log" 2> /dev/null || true)" -gt "${before:-0}" ]; then
      NODE_URL="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*/mcp' "$log" | tail -n 1 | sed 's/^listening on //')"
      break
    fi
    sleep 0.1
  done
  [ -n "$NODE_URL" ] || interop_die "node $name did not start: $(tail -n 20 "$log")"
}
start_node a
url_a="$NODE_URL"
pid_a="$NODE_PID"
start_node b
url_b="$NODE_URL"
pid_b="$NODE_PID"
addr_a="${url_a#http://}"
addr_a="${addr_a%/mcp}"
addr_b="${url_b#http://}"
addr_b="${addr_b%/mcp}"
echo "== cluster: node a at $url_a, node b at $url_b"

# nginx: round robin per request, SSE unbuffered, HTTP/1.1 with keep-alive to the nodes.
proxy_port="$(free_port)"
mkdir -p "$work/nginx-tmp"
cat > "$work/nginx.conf" << EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
daemon off;
events { worker_connections 1024; }
http {
  log_format cluster '\$request_method \$upstream_addr \$status sid=\$http_mcp_session_id';
  access_log $work/access.log cluster;
  client_body_temp_path $work/nginx-tmp/body;
  proxy_temp_path $work/nginx-tmp/proxy;
  fastcgi_temp_path $work/nginx-tmp/fastcgi;
  uwsgi_temp_path $work/nginx-tmp/uwsgi;
  scgi_temp_path $work/nginx-tmp/scgi;
  upstream nodes {
    server $addr_a max_fails=0;
    server $addr_b max_fails=0;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:$proxy_port;
    location / {
      proxy_pass http://nodes;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
      proxy_cache off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout;
    }
  }
}
EOF
"$NGINX" -t -c "$work/nginx.conf" -p "$work" > "$work/nginx-t.log" 2>&1 || interop_die "nginx rejects its configuration: $(cat "$work/nginx-t.log")"
"$NGINX" -c "$work/nginx.conf" -p "$work" > "$work/nginx.log" 2>&1 &
pids+=($!)
proxy="http://127.0.0.1:$proxy_port/mcp"
for _ in $(seq 100); do
  code="$(curl -s -o /dev/null -w '%{http_code}' "$proxy" 2> /dev/null || true)"
  [ -n "$code" ] && [ "$code" != 000 ] && break
  sleep 0.1
done
[ "${code:-000}" != 000 ] || interop_die "nginx did not start: $(cat "$work/nginx-error.log" "$work/nginx.log" 2> /dev/null)"
echo "== cluster: nginx round robin on $proxy"
# CLUSTER_HOLD=1 keeps the cluster up for manual runs (stop it with Ctrl-C).
if [ -n "${CLUSTER_HOLD:-}" ]; then
  echo "== cluster: holding; $proxy"
  while sleep 3600; do :; done
fi

# 1. The official SDK clients through the proxy.
rc=0
./interop/run-clients.sh --http "$proxy" 2>&1 | tee "$work/clients.log" || rc=$?
summary="$(grep -E '^interop: [0-9]+ passed, [0-9]+ failed$' "$work/clients.log" | tail -n 1 || true)"
if [ "$rc" = 0 ] && [ -n "$summary" ] && [[ "$summary" == *", 0 failed" ]]; then
  pass "the official TypeScript and Python SDK clients through round-robin nginx ($summary)"
else
  fail "the official SDK clients through round-robin nginx" "${summary:-no summary} (exit $rc)"
fi

# 2. Our client through the proxy.
rc=0
"$BIN" check --url "$proxy" > "$work/check.log" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
  pass "switchboard check (our client) through round-robin nginx: $(tail -n 1 "$work/check.log")"
else
  fail "switchboard check (our client) through round-robin nginx" "exit $rc: $(tail -n 5 "$work/check.log")"
fi

# 3. Consecutive requests of one session went to both nodes.
alternated="$(python3 - "$work/access.log" << 'EOF'
import sys, collections
seen = collections.defaultdict(set)
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) < 4 or not parts[3].startswith("sid=") or parts[3] == "sid=-":
        continue
    seen[parts[3]].add(parts[1])
print(sum(1 for nodes in seen.values() if len(nodes) >= 2), len(seen))
EOF
)"
both="${alternated%% *}"
sessions="${alternated##* }"
if [ "${both:-0}" -ge 3 ]; then
  pass "requests of one session alternated between the nodes ($both of $sessions sessions reached both)"
else
  fail "requests of one session alternated between the nodes" "$both of $sessions sessions reached both nodes"
fi

# 4. DELETE through the proxy ends the session everywhere.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cluster.sh","version":"1"}}}'
headers="$work/init.headers"
curl -s -D "$headers" -o /dev/null -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' --data "$init" "$proxy"
sid="$(grep -i '^mcp-session-id:' "$headers" | tr -d '\r' | awk '{print $2}')"
post() {
  curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid" \
    -H 'MCP-Protocol-Version: 2025-11-25' --data "$1" "$proxy"
}
post '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null
codes=""
for i in 1 2 3 4; do codes="$codes $(post "{\"jsonrpc\":\"2.0\",\"id\":$((i + 1)),\"method\":\"ping\"}")"; done
keys_before="$(redis_cmd KEYS 'switchboard:s:*' | grep -c . || true)"
del="$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' "$proxy")"
after=""
for i in 1 2 3 4; do after="$after $(post "{\"jsonrpc\":\"2.0\",\"id\":$((i + 10)),\"method\":\"ping\"}")"; done
if [ -n "$sid" ] && [ "$codes" = " 200 200 200 200" ] && [ "$del" = 200 ] && [ "$after" = " 404 404 404 404" ]; then
  pass "DELETE through the proxy ends the session on both nodes (pings$codes, DELETE $del, then$after)"
else
  fail "DELETE through the proxy ends the session on both nodes" "session ${sid:+set}, pings$codes, DELETE $del, then$after"
fi
keys_after="$(redis_cmd KEYS 'switchboard:s:*' | grep -c . || true)"
if [ "$keys_after" -lt "$keys_before" ]; then
  pass "the deleted session's record left Redis ($keys_before -> $keys_after records)"
else
  fail "the deleted session's record left Redis" "$keys_before -> $keys_after records"
fi
if ! redis_cmd KEYS '*' | grep -q "$sid"; then
  pass "no Redis key names a session id"
else
  fail "no Redis key names a session id" "$(redis_cmd KEYS '*' | grep "$sid" | head -n 3)"
fi

# 5. Kill the node serving a long call in the middle; the client resumes on the other one.
node_of_session() {
  local h
  h="$(printf '%s' "$1" | sha256sum | cut -c1-32)"
  redis_cmd HGET "switchboard:s:$h" node
}
kill_owner_after_progress() { # LOG PATTERN: waits for 5 progress lines, kills the session's node
  local log="$1" sid="" node="" n
  for _ in $(seq 200); do
    n="$(grep -c '^PROGRESS \|^progress ' "$log" 2> /dev/null || true)"
    [ "${n:-0}" -ge 5 ] && break
    sleep 0.05
  done
  sid="$(sed -n 's/^SESSION //p' "$log" | head -n 1)"
  if [ -n "$sid" ]; then
    node="$(node_of_session "$sid")"
  else
    # Our CLI prints no session id: the session is the one record created since $2.
    node="$(comm -13 <(echo "$2" | sort) <(redis_cmd KEYS 'switchboard:s:*' | sort) | head -n 1)"
    node="${node:+$(redis_cmd HGET "$node" node)}"
  fi
  KILLED="$node"
  case "$node" in
    a) kill -9 "$pid_a" ;;
    b) kill -9 "$pid_b" ;;
    *) return 1 ;;
  esac
}
restart_killed() {
  local port
  case "$KILLED" in
    a) port="${addr_a##*:}"; start_node a "$port"; pid_a="$NODE_PID" ;;
    b) port="${addr_b##*:}"; start_node b "$port"; pid_b="$NODE_PID" ;;
  esac
}

interop_use_node22
node "$INTEROP_DIR/cluster-kill.mjs" "$proxy" 3000 > "$work/kill-ts.log" 2>&1 &
kpid=$!
KILLED=""
kill_owner_after_progress "$work/kill-ts.log" "" || true
rc=0
wait "$kpid" || rc=$?
summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/kill-ts.log" | tail -n 1 || true)"
if [ -n "$KILLED" ] && [ "$rc" = 0 ] && [[ "$summary" == *", 0 failed" ]]; then
  pass "TypeScript SDK: node $KILLED killed mid-call; resumed on the other node, every event and the result once ($summary)"
else
  fail "TypeScript SDK: a node killed mid-call" "killed '${KILLED:-none}', exit $rc: $(grep -E '^(FAIL|PASS)' "$work/kill-ts.log" | tr '\n' ';')"
fi
restart_killed

before="$(redis_cmd KEYS 'switchboard:s:*')"
rc=0
"$BIN" call --url "$proxy" tools/call test_task_slow ms=3000 > "$work/kill-sb.out" 2> "$work/kill-sb.log" &
kpid=$!
KILLED=""
kill_owner_after_progress "$work/kill-sb.log" "$before" || true
wait "$kpid" || rc=$?
got="$(grep -c '^progress ' "$work/kill-sb.log" || true)"
dups="$(grep '^progress ' "$work/kill-sb.log" | sort | uniq -d | wc -l)"
ordered="$(grep '^progress ' "$work/kill-sb.log" | sed 's/^progress //; s/\/.*//' | sort -n -c 2>&1 && echo yes || echo no)"
if [ -n "$KILLED" ] && [ "$rc" = 0 ] && grep -q '"slept 3000 ms"' "$work/kill-sb.out" && [ "$got" = 30 ] && [ "$dups" = 0 ] && [ "$ordered" = yes ]; then
  pass "our client: node $KILLED killed mid-call; resumed on the other node, 30 progress notifications once, in order, and the result"
else
  fail "our client: a node killed mid-call" "killed '${KILLED:-none}', exit $rc, $got progress lines ($dups repeated, in order: $ordered), result: $(tr -d '\n' < "$work/kill-sb.out" | head -c 200); $(grep -v '^progress' "$work/kill-sb.log" | tail -n 3)"
fi
restart_killed

# 6. Redis restarts under a live session.
curl -s -D "$headers" -o /dev/null -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' --data "$init" "$proxy"
sid="$(grep -i '^mcp-session-id:' "$headers" | tr -d '\r' | awk '{print $2}')"
post '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null
sse="$(curl -s -N -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' \
  --data '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}' "$proxy")"
event_id="$(printf '%s\n' "$sse" | grep '^id: ' | tail -n 1 | sed 's/^id: //' | tr -d '\r')"
kill "$redis_pid"
wait "$redis_pid" 2> /dev/null || true
start_redis
for _ in $(seq 100); do
  [ "$(redis_cmd PING 2> /dev/null || true)" = PONG ] && break
  sleep 0.1
done
codes=""
for i in 1 2 3 4 5 6; do
  code="$(post "{\"jsonrpc\":\"2.0\",\"id\":$((i + 20)),\"method\":\"ping\"}")"
  # The first requests may meet a connection still being re-established (503, retried).
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ "$code" = 503 ] || break
    sleep 0.3
    code="$(post "{\"jsonrpc\":\"2.0\",\"id\":$((i + 30)),\"method\":\"ping\"}")"
  done
  codes="$codes $code"
done
stream="${event_id%-*}"
seq="${event_id#*-}"
replayed="$(curl -s -N --max-time 3 -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $sid" \
  -H 'MCP-Protocol-Version: 2025-11-25' -H "Last-Event-ID: $stream-$((seq - 1))" "$proxy" || true)"
if [ -n "$sid" ] && [ "$codes" = " 200 200 200 200 200 200" ]; then
  pass "Redis restarted: the nodes reconnected and serve the session on both (pings$codes)"
else
  fail "Redis restarted: the nodes reconnect" "session ${sid:+set}, pings$codes"
fi
if [ -n "$event_id" ] && printf '%s' "$replayed" | grep -q "id: $event_id" && printf '%s' "$replayed" | grep -q 'This is a simple text response'; then
  pass "Redis restarted: the event stored before ($event_id) is replayed with Last-Event-ID"
else
  fail "Redis restarted: an event stored before is replayed" "event '$event_id', replay: $(printf '%s' "$replayed" | head -c 300)"
fi

# 7. Tasks in Redis outlive the node that ran them.
rpc() { # BODY: the JSON-RPC answer to one POST (JSON or SSE), on stdout
  curl -s -N -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' --data "$1" "$proxy" |
    python3 -c '
import json, sys
text = sys.stdin.read()
if text.lstrip().startswith("{"):
    print(text.strip())
else:
    for line in text.splitlines():
        if line.startswith("data: ") and "\"id\"" in line:
            print(line[6:])
'
}
curl -s -D "$headers" -o /dev/null -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' --data "$init" "$proxy"
sid="$(grep -i '^mcp-session-id:' "$headers" | tr -d '\r' | awk '{print $2}')"
post '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null
task_of() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["result"]["task"]["taskId"])'; }
quick_raw="$(rpc '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"test_task_slow","arguments":{"ms":200},"task":{"ttl":60000}}}')"
long_raw="$(rpc '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"test_task_slow","arguments":{"ms":60000},"task":{"ttl":60000}}}')"
quick="$(printf '%s' "$quick_raw" | task_of 2> /dev/null || true)"
long="$(printf '%s' "$long_raw" | task_of 2> /dev/null || true)"
sleep 1
KILLED="$(node_of_session "$sid")"
case "$KILLED" in a) kill -9 "$pid_a" ;; b) kill -9 "$pid_b" ;; esac
# The announcement of the killed node lapses within its life (10 s); until then the session's
# requests take it over at once (its node refuses connections), and its task reads as lost
# once the announcement is gone.
sleep 11
done_result="$(rpc "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"$quick\"}}")"
lost="$(rpc "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$long\"}}")"
if [ -n "$quick" ] && printf '%s' "$done_result" | grep -q 'slept 200 ms'; then
  pass "tasks in Redis: a finished task's result is served after node $KILLED, which ran it, was killed"
else
  fail "tasks in Redis: a finished task's result after its node was killed" "task '$quick' ($(printf '%s' "$quick_raw" | head -c 200)), killed '$KILLED': $(printf '%s' "$done_result" | head -c 300)"
fi
if [ -n "$long" ] && printf '%s' "$lost" | grep -q '"status":"failed"' && printf '%s' "$lost" | grep -q 'stopped'; then
  pass "tasks in Redis: a task whose node was killed mid-work reads failed, saying so"
else
  fail "tasks in Redis: a task whose node was killed mid-work" "task '$long': $(printf '%s' "$lost" | head -c 300)"
fi
restart_killed

echo "cluster: $passed passed, $failed failed"
[ "$failed" = 0 ]

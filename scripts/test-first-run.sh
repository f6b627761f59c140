#!/usr/bin/env bash
# Tests the first run as a new user meets it: clones the repository (its committed HEAD) into
# a temporary folder, runs ./run.sh there, waits for the demo's summary and checks its "what
# happened" lines (edge-1 received the Policy, edge-2 joined and received it, the hot reload
# and its rollout, the drift repaired), then the demo's state through the CLI —
# Policy/web-allow's status.ruleCount and status.agents, the files on both agents'
# southbounds, the new version of the reactor serving with its rollout done, no component
# failed on the server or the agent — then stops it with SIGINT (as Ctrl-C) and checks that
# run.sh, the server and the agents all exit.
#
# usage: scripts/test-first-run.sh
# The long steps are shared with the checkout it runs from: CARGO_TARGET_DIR (default: this
# checkout's target/) and the tools cache (REACTOR_TOOLS, see scripts/tools.sh). The ports are
# free ones picked at start. FIRST_RUN_TIMEOUT (seconds, default 2400) bounds the wait for
# the demo: a cold build of reactor-host takes most of it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
case "$CARGO_TARGET_DIR" in /*) ;; *) CARGO_TARGET_DIR="$root/$CARGO_TARGET_DIR" ;; esac
timeout="${FIRST_RUN_TIMEOUT:-2400}"

work="$(mktemp -d "${TMPDIR:-/tmp}/reactor-first-run.XXXXXX")"
clone="$work/reactor-host"
out="$work/run.out"
run_pid=""
cleanup() {
    if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
        kill -TERM -- "-$run_pid" 2>/dev/null || true
        sleep 1
        kill -KILL -- "-$run_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "test-first-run: FAIL: $*" >&2
    if [ -f "$out" ]; then
        echo "--- ./run.sh output" >&2
        tail -n 40 "$out" >&2
    fi
    for log in "$clone/demo/logs/server.log" "$clone/demo/logs/agent.log"; do
        [ -s "$log" ] && { echo "--- $log" >&2; tail -n 20 "$log" >&2; }
    done
    exit 1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
server_port="$(free_port)"
agent_port="$(free_port)"
while [ "$agent_port" = "$server_port" ]; do agent_port="$(free_port)"; done

git clone --quiet "$root" "$clone"
started=$SECONDS
# Job control: run.sh gets a process group of its own and takes SIGINT as from a terminal.
set -m
(cd "$clone" && exec ./run.sh --listen "127.0.0.1:$server_port" \
    --agent-listen "127.0.0.1:$agent_port") >"$out" 2>&1 &
run_pid=$!
set +m

until grep -q "Press Ctrl-C" "$out"; do
    kill -0 "$run_pid" 2>/dev/null || fail "./run.sh exited before showing the demo"
    [ $((SECONDS - started)) -lt "$timeout" ] || fail "no demo after ${timeout}s"
    sleep 1
done
echo "test-first-run: the demo is up after $((SECONDS - started))s"
grep -q "Policy/web-allow: reactor policy-rust, ruleCount 2" "$out" ||
    fail "the summary does not show Policy/web-allow's status"
# happened PATTERN WHAT : the summary's "what happened" list has a line matching PATTERN.
happened() {
    sed -n '/^What happened:$/,/^$/p' "$out" | grep -Eq "^  [0-9]\. $1" ||
        fail "the summary does not say $2"
}
happened "edge-1 received Policy/web-allow: its 2 rules" "edge-1 received the Policy"
happened "edge-2 \(role=edge\) joined and received Policy/web-allow too: 2 rules" \
    "edge-2 joined and received the Policy"
happened "hot reload: policy-rust [0-9a-f]{12} -> [0-9a-f]{12} without a restart; its rollout reconciled 1/1 Policy" \
    "the reactor was reloaded and rolled out"
happened "drift repaired: demo/southbound/policy-rule/web-allow/http.json" "the drift was repaired"
grep -q "^Try next" "$out" || fail "the summary has no \"Try next\" list"

# The demo's state, seen through the CLI as a user would, with the client file serve wrote
# (server address, CA, admin token), over TLS.
bin="$CARGO_TARGET_DIR/demo/reactor-host"
unset REACTOR_TOKEN REACTOR_TOKEN_FILE REACTOR_SERVER REACTOR_CA
export REACTOR_KUBECONFIG="$clone/demo/server/kubeconfig" \
    REACTOR_AGENT="https://127.0.0.1:$agent_port"
grep -q "^    server: https://127.0.0.1:$server_port" "$REACTOR_KUBECONFIG" ||
    fail "the client file does not name the server over https"
policy="$("$bin" get Policy web-allow -o json)" || fail "get Policy web-allow failed"
python3 - "$policy" <<'EOF' || fail "Policy/web-allow's status is not what the demo promises"
import json, sys
status = json.loads(sys.argv[1]).get("status") or {}
want = {"reactor": "policy-rust", "ruleCount": 2}
got = {k: status.get(k) for k in want}
assert got == want, f"status {got}, expected {want}"
agents = status.get("agents") or {}
assert agents == {"edge-1": 2, "edge-2": 2}, f"status.agents {agents}, expected edge-1: 2, edge-2: 2"
EOF
for southbound in southbound southbound-2; do
    files="$clone/demo/$southbound/policy-rule/web-allow"
    for rule in http https; do
        [ -f "$files/$rule.json" ] || fail "no $files/$rule.json"
        python3 -c 'import json, sys
rule = json.load(open(sys.argv[1]))
assert rule == {"name": sys.argv[2], "action": "allow"}, rule' "$files/$rule.json" "$rule" ||
            fail "$files/$rule.json is not the rule $rule"
    done
    [ "$(find "$files" -type f | wc -l)" -eq 2 ] || fail "$files holds other files: $(ls "$files")"
done
components="$("$bin" components --json)" || fail "components failed"
built="$(sha256sum "$clone/demo/build/policy-rust.wasm" | cut -d' ' -f1)"
deployed="$(sha256sum "$clone/demo/components/policy-rust.wasm" | cut -d' ' -f1)"
[ "$built" != "$deployed" ] || fail "demo/components holds the first build of policy-rust, not a new one"
python3 - "$components" "$deployed" <<'EOF' || fail "the server's components are not policy-rust alone, ready, its new version rolled out"
import json, sys
listed = json.loads(sys.argv[1])
got = [(c["name"], c["state"].lower(), c.get("error")) for c in listed]
assert got == [("policy-rust", "ready", None)], got
c = listed[0]
assert c.get("sha256") == sys.argv[2], f"serving {c.get('sha256')}, the file is {sys.argv[2]}"
rollout = c.get("rollout") or {}
assert (rollout.get("phase"), rollout.get("rolled"), rollout.get("total")) == ("done", 1, 1), rollout
EOF
descriptors="$("$bin" scheduler descriptors --json)" || fail "scheduler descriptors failed"
python3 - "$descriptors" <<'EOF' || fail "the agent's descriptors are not policy-rule alone, ready"
import json, sys
got = json.loads(sys.argv[1])
text = json.dumps(got).lower()
assert "policy-rule" in text and "failed" not in text, got
EOF

# Ctrl-C: SIGINT to run.sh's process group, as a terminal sends it.
kill -INT -- "-$run_pid"
for _ in $(seq 150); do
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$run_pid" 2>/dev/null && fail "./run.sh still runs 15s after SIGINT"
wait "$run_pid" && code=0 || code=$?
[ "$code" -eq 0 ] || fail "./run.sh exited with $code after SIGINT"
grep -q "demo stopped" "$out" || fail "./run.sh did not say the demo stopped"
# Everything run.sh started is in its process group.
if left="$(pgrep -a -g "$run_pid")"; then
    fail "processes still run after ./run.sh stopped: $left"
fi
run_pid=""
echo "test-first-run: ok (demo checked and stopped, $((SECONDS - started))s in all)"

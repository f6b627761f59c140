#!/usr/bin/env bash
# The first run: installs what the demo needs (scripts/setup-demo.sh), then starts the demo in
# this terminal — a server with one Policy reactor (policy-rust) and an agent with the
# policy-rule descriptor — applies the sample Policy, then shows a second agent joining and
# receiving it, a hot reload of the reactor rolled out, and drift repaired; prints what
# happened and what to try next, and keeps running until Ctrl-C, which stops every process.
# Everything it makes is under demo/ (demo/README.md); a second run starts from what the
# first left there.
#
# usage: ./run.sh [--listen ADDR] [--agent-listen ADDR]
#   --listen        the server's API (default 127.0.0.1:7800, the CLI's default server)
#   --agent-listen  the agent's API (default 127.0.0.1:7801, the `scheduler` commands' default)
set -euo pipefail
cd "$(dirname "$0")"
root="$(pwd)"

listen=127.0.0.1:7800
agent_listen=127.0.0.1:7801
while [ $# -gt 0 ]; do
    case "$1" in
        --listen) listen="${2:?--listen needs an address}"; shift 2 ;;
        --agent-listen) agent_listen="${2:?--agent-listen needs an address}"; shift 2 ;;
        *) echo "usage: $0 [--listen ADDR] [--agent-listen ADDR]" >&2; exit 2 ;;
    esac
done

demo="demo"
policy="examples/policy-rust/policy.yaml"
say() { printf '%s\n' "$*"; }
step() { printf '==> %s\n' "$*"; }

step "setting up the machine for the demo (scripts/setup-demo.sh)"
scripts/setup-demo.sh
step "building the demo's components and reactor-host (minutes the first time, seconds after)"
scripts/build-components.sh "$demo/build" policy-rust policy-rule-descriptor >/dev/null
# The demo's profile (Cargo.toml: less debug information than `dev`), without etcd.
cargo build --profile demo -p reactor-host --no-default-features
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
bin="$target/demo/reactor-host"

# One reactor in the server's folder, one descriptor in the agent's: nothing else is served.
mkdir -p "$demo/components" "$demo/descriptors" "$demo/server" "$demo/agent" \
    "$demo/southbound" "$demo/agent-2" "$demo/southbound-2" "$demo/logs"
install_component() { # FILE DIR : copy FILE into DIR under a temporary name, then rename it.
    cp "$1" "$2/.$(basename "$1").tmp"
    mv "$2/.$(basename "$1").tmp" "$2/$(basename "$1")"
}
install_component "$demo/build/policy-rust.wasm" "$demo/components"
install_component "$demo/build/policy-rule-descriptor.wasm" "$demo/descriptors"

pids=()
names=()
stopping=false
# stop : stops the server and the agents (SIGINT, as Ctrl-C does; then TERM, then KILL).
stop() {
    $stopping && return 0
    stopping=true
    local pid signal i
    for signal in INT TERM KILL; do
        for pid in ${pids[@]+"${pids[@]}"}; do kill "-$signal" "$pid" 2>/dev/null || true; done
        for i in $(seq 50); do
            local alive=false
            for pid in ${pids[@]+"${pids[@]}"}; do kill -0 "$pid" 2>/dev/null && alive=true; done
            $alive || break 2
            sleep 0.1
        done
    done
    for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT
trap 'stop; say ""; say "demo stopped: the server and the agents have exited (state kept in $demo/)"; trap - EXIT; exit 0' INT TERM

# fail MESSAGE : says what went wrong with the end of every log, stops everything.
fail() {
    say "run.sh: $*" >&2
    for log in "$demo/logs/server.log" "$demo/logs/agent.log" "$demo/logs/agent-2.log"; do
        [ -s "$log" ] && { say "--- last lines of $log" >&2; tail -n 15 "$log" >&2; }
    done
    exit 1
}

# await SECONDS WHAT COMMAND... : runs COMMAND every 0.2 s until it succeeds.
await() {
    local deadline=$((SECONDS + $1)) what="$2"
    shift 2
    until "$@" >/dev/null 2>&1; do
        for i in "${!pids[@]}"; do
            kill -0 "${pids[$i]}" 2>/dev/null || fail "the ${names[$i]} exited while waiting for $what"
        done
        [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for $what"
        sleep 0.2
    done
}

step "starting the server on https://$listen (log: $demo/logs/server.log)"
"$bin" serve --data "$demo/server" --components "$demo/components" --listen "$listen" \
    >"$demo/logs/server.log" 2>&1 &
pids+=($!)
names+=(server)
await 60 "the server to listen" grep -q "reactor-host listening on" "$demo/logs/server.log"

# The client commands below read the client file serve wrote (a kubeconfig: the server's
# address, its CA, the admin's token); no credential is ever on a command line.
unset REACTOR_TOKEN REACTOR_TOKEN_FILE REACTOR_SERVER REACTOR_CA
export REACTOR_KUBECONFIG="$root/$demo/server/kubeconfig" REACTOR_AGENT="https://$agent_listen"

# json_field FIELD... : reads JSON on stdin and prints the field at that path ("" if absent).
json_field() {
    python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else json.dumps(v) if not isinstance(v, str) else v)' "$@"
}
component_ready() {
    "$bin" components --json | python3 -c 'import json, sys
ok = [c for c in json.load(sys.stdin) if c["name"] == sys.argv[1] and c["state"].lower() == "ready"]
sys.exit(0 if ok else 1)' "$1"
}
await 120 "policy-rust to load" component_ready policy-rust

step "starting agent edge-1 (label role=edge, API https://$agent_listen, log: $demo/logs/agent.log)"
# The agent joins with a one-time token bound to its id and label (it pins the server's CA),
# and keeps the credential it gets in its data folder; it is never given the admin's token.
join="$("$bin" token create --agent edge-1 --label role=edge 2>/dev/null | tail -n 1)" ||
    fail "token create failed"
REACTOR_JOIN_TOKEN="$join" "$bin" agent --id edge-1 --server "https://$listen" --data "$demo/agent" \
    --descriptors "$demo/descriptors" --southbound "$demo/southbound" --listen "$agent_listen" \
    >"$demo/logs/agent.log" 2>&1 &
pids+=($!)
names+=(agent)
await 60 "the agent's API" "$bin" scheduler descriptors

step "applying $policy"
applied="$("$bin" apply -f "$policy")" || fail "apply -f $policy failed"
policy_applied() {
    local status
    status="$("$bin" get Policy web-allow -o json | json_field status)"
    [ "$(json_field ruleCount <<<"$status")" = 2 ] &&
        [ "$(json_field agents edge-1 <<<"$status")" = 2 ]
}
await 60 "Policy/web-allow to reach edge-1" policy_applied
files="$demo/southbound/policy-rule/web-allow"
happened=("edge-1 received Policy/web-allow: its 2 rules written under $files/")

step "starting agent edge-2 (label role=edge, log: $demo/logs/agent-2.log)"
# A second agent with the same label: the server hands it the Policy as soon as it joins.
join="$("$bin" token create --agent edge-2 --label role=edge 2>/dev/null | tail -n 1)" ||
    fail "token create failed"
REACTOR_JOIN_TOKEN="$join" "$bin" agent --id edge-2 --server "https://$listen" \
    --data "$demo/agent-2" --descriptors "$demo/descriptors" --southbound "$demo/southbound-2" \
    >"$demo/logs/agent-2.log" 2>&1 &
pids+=($!)
names+=("agent edge-2")
reached_edge_2() {
    [ "$("$bin" get Policy web-allow -o json | json_field status agents edge-2)" = 2 ]
}
await 60 "Policy/web-allow to reach edge-2" reached_edge_2
happened+=("edge-2 (role=edge) joined and received Policy/web-allow too: 2 rules under $demo/southbound-2/policy-rule/web-allow/")

step "hot reload: a new build of policy-rust into $demo/components"
# A new version of the reactor, put in place as a deploy would (a copy, then a rename): the
# same code with a build stamp, a custom section the runtime ignores. The server loads it
# without a restart and rolls it out: every Policy is reconciled again by the new version.
version() { sha256sum "$1" | cut -c1-12; }
old_version="$(version "$demo/components/policy-rust.wasm")"
python3 -c 'import sys
name, stamp = b"reactor-demo-build", b"2"
body = bytes([len(name)]) + name + stamp
section = bytes([0, len(body)]) + body  # id 0 (custom), size (< 128: one LEB128 byte)
open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read() + section)' \
    "$demo/build/policy-rust.wasm" "$demo/build/policy-rust-2.wasm"
new_version="$(version "$demo/build/policy-rust-2.wasm")"
cp "$demo/build/policy-rust-2.wasm" "$demo/components/.policy-rust.wasm.tmp"
mv "$demo/components/.policy-rust.wasm.tmp" "$demo/components/policy-rust.wasm"
# rollout VERSION : prints `rolled N/M` once VERSION serves and its rollout is done.
rollout() {
    "$bin" components --json | python3 -c 'import json, sys
c = next(c for c in json.load(sys.stdin) if c["name"] == "policy-rust")
r = c.get("rollout") or {}
if not (c.get("sha256") or "").startswith(sys.argv[1]) or r.get("phase") != "done":
    sys.exit(1)
print("%s/%s" % (r["rolled"], r["total"]))' "$1"
}
await 60 "the rollout of policy-rust $new_version" rollout "$new_version"
happened+=("hot reload: policy-rust $old_version -> $new_version without a restart; its rollout reconciled $(rollout "$new_version") Policy with the new version")

step "drift: deleting $files/http.json behind edge-1's back, then a resync"
rm -f "$files/http.json"
"$bin" scheduler resync >/dev/null || fail "scheduler resync failed"
await 30 "edge-1 to repair $files/http.json" test -f "$files/http.json"
happened+=("drift repaired: $files/http.json, deleted by hand, was written again by edge-1's resync")

status="$("$bin" get Policy web-allow -o json | json_field status)"
say ""
say "reactor-host demo — running until Ctrl-C"
say "  server   https://$listen   reactor $demo/components/policy-rust.wasm"
say "  agents   edge-1 (role=edge)   descriptor $demo/descriptors/policy-rule-descriptor.wasm, API $REACTOR_AGENT"
say "           edge-2 (role=edge)   the same descriptor, southbound $demo/southbound-2"
say "  applied  $applied"
say "  status   Policy/web-allow: reactor $(json_field reactor <<<"$status"), ruleCount $(json_field ruleCount <<<"$status"), agents $(json_field agents <<<"$status")"
say "  files    edge-1 wrote $files/:"
for file in "$files"/*.json; do
    say "             $(basename "$file")  $(python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$file")"
done
say "  logs     $demo/logs/server.log, $demo/logs/agent.log, $demo/logs/agent-2.log"
say ""
say "What happened:"
for i in "${!happened[@]}"; do say "  $((i + 1)). ${happened[$i]}"; done
say ""
say "Try next, in another terminal (in $root):"
say "  export REACTOR_KUBECONFIG=$REACTOR_KUBECONFIG REACTOR_AGENT=$REACTOR_AGENT"
say "  alias rh=$bin"
say "  rh get Policy web-allow -o yaml       # status: ruleCount, agents, propagation"
say "  rh components; rh agents              # the reactor's version and rollout, the agents"
say "  rh events Component policy-rust       # the hot reload: the new version and its rollout"
say "  rh scheduler status                   # the agent's KV scheduler: each rule CONFIGURED"
say "  rm $files/http.json; rh scheduler resync   # drift, repaired"
say "  printf 'kind: Policy\\nname: bad\\nspec: {rules: []}\\n' | rh apply -f -   # refused: policy has no rules"
say "  add a rule to $policy, rh apply -f it, and watch $files/"
say "Press Ctrl-C to stop the server and the agents."

# Until Ctrl-C (the trap above), or until one of them exits. Each exits with 0 when it is
# interrupted: that is a stop (also where SIGINT cannot be trapped here, e.g. under
# nohup); any other status is a failure.
set +e
wait -n -p exited "${pids[@]}"
code=$?
for i in "${!pids[@]}"; do
    [ "${pids[$i]}" = "$exited" ] && name="${names[$i]}"
done
[ "$code" -eq 0 ] || fail "the $name exited with status $code"
stop
say "demo stopped: the $name was stopped, the rest with it (state kept in $demo/)"

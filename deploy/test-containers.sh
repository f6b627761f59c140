#!/usr/bin/env bash
# The deployment of deploy/compose.yaml, run for real with podman: etcd, two `serve` replicas
# and two agents as containers on a network of their own. It applies Policies, kills one
# replica with SIGKILL, changes the Policies through the other, and checks that everything
# converges: every Policy's status (ruleCount, agents), the files each agent's policy-rule
# descriptor wrote, both agents connected. Everything it started is removed at the end, also
# when a check fails or the script is interrupted.
#
# usage: deploy/test-containers.sh       (builds the images first: deploy/build-image.sh)
#
# The replicas share one components folder (policy-rust.wasm only) and the agents one
# descriptors folder (policy-rule-descriptor.wasm only), both mounted read-only from a
# temporary folder. Agents reach the replicas through the network alias `reactor`, which
# names every live replica; an agent whose replica dies reconnects to the other.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
# shellcheck source=deploy/podman.sh
. deploy/podman.sh
started=$SECONDS
say() { printf 'test-containers: %s\n' "$*"; }

deploy/build-image.sh >/dev/null
say "images built ($((SECONDS - started))s)"
build="${CARGO_TARGET_DIR:-$root/target}/deploy-components"
scripts/build-components.sh "$build" policy-rust policy-rule-descriptor >/dev/null

run="reactor-ct-$$"
net="$run"
work="$(mktemp -d "${TMPDIR:-/tmp}/$run.XXXXXX")"
containers=()
cleanup() {
    local code=$?
    if [ ${#containers[@]} -gt 0 ]; then
        pm rm --force --volumes --time 0 "${containers[@]}" >/dev/null 2>&1 || true
    fi
    pm network rm --force "$net" >/dev/null 2>&1 || true
    rm -rf "$work"
    [ "$code" -eq 0 ] || say "FAILED after $((SECONDS - started))s; containers and network removed"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    say "FAIL: $*" >&2
    for c in ${containers[@]+"${containers[@]}"}; do
        echo "--- last lines of $c" >&2
        pm logs --tail 10 "$c" >&2 2>&1 || true
    done
    exit 1
}

# await SECONDS WHAT COMMAND... : runs COMMAND every half second until it succeeds.
await() {
    local seconds="$1" what="$2"
    local deadline=$((SECONDS + seconds))
    shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || {
            "$@" >&2 || true
            fail "timed out after ${seconds}s waiting for $what"
        }
        sleep 0.5
    done
}

mkdir -p "$work/components" "$work/descriptors" "$work/edge-1" "$work/edge-2"
cp "$build/policy-rust.wasm" "$work/components/"
cp "$build/policy-rule-descriptor.wasm" "$work/descriptors/"
chmod -R a+rX "$work"
chown 10001:10001 "$work/edge-1" "$work/edge-2" # the image's user `reactor`

pm network create "$net" >/dev/null
# start NAME ALIAS... -- PODMAN_RUN_ARGS... : starts container $run-NAME on the network.
start() {
    local name="$run-$1" args=()
    shift
    while [ "$1" != "--" ]; do args+=(--network-alias "$1"); shift; done
    shift
    containers+=("$name")
    pm run --detach --name "$name" --network "$net" "${args[@]}" "$@" >/dev/null
}
logs_say() { pm logs "$run-$1" 2>&1 | grep -q "$2"; }

start etcd etcd -- "$ETCD_IMAGE"
await 30 "etcd" logs_say etcd "ready to serve client requests"

# replica NAME : a `serve` replica on etcd; both answer to the alias `reactor`.
replica() {
    start "replica-$1" "replica-$1" reactor -- -v "$work/components:/components:ro" "$HOST_IMAGE" \
        serve --listen 0.0.0.0:7800 --data /var/lib/reactor --components /components \
        --store etcd://etcd:2379 --replica-id "$1" --lease-ttl 5s --tls-san reactor
    await 60 "replica $1 to listen" logs_say "replica-$1" "reactor-host listening on https://"
}
# TLS: the first replica makes the cluster's CA and stores it in etcd, the second adopts it;
# each issues its own server certificate, valid for its alias and for `reactor`.
replica a
replica b

# cli REPLICA ARGS... : the CLI inside a replica's container, as the admin, with the client
# file (a kubeconfig: https://127.0.0.1:7800, the CA, the admin token) that replica wrote.
cli() {
    local replica="$1"
    shift
    pm exec -i -e REACTOR_KUBECONFIG=/var/lib/reactor/kubeconfig "$run-replica-$replica" \
        reactor-host "$@"
}
# Both replicas present the one CA that etcd holds.
[ "$(pm exec "$run-replica-a" cat /var/lib/reactor/ca.crt)" = \
    "$(pm exec "$run-replica-b" cat /var/lib/reactor/ca.crt)" ] ||
    fail "the replicas serve certificates from different CAs"
component_ready() {
    cli "$1" components --json | python3 -c 'import json, sys
got = [(c["name"], c["state"].lower()) for c in json.load(sys.stdin)]
sys.exit(0 if got == [("policy-rust", "ready")] else 1)'
}
await 120 "policy-rust on replica a" component_ready a
await 120 "policy-rust on replica b" component_ready b

# agent ID LABEL... : an agent with the policy-rule descriptor, reaching a replica by `reactor`.
# It is handed only a join token for its id and labels (made by the admin on replica a, taken
# by replica b as well: tokens live in etcd), by environment; it exchanges the token for a
# credential of its own, which it keeps in its data folder, and pins the CA the token names.
agent() {
    local id="$1" labels=() token
    shift
    for label in "$@"; do labels+=(--label "$label"); done
    token="$(cli a token create --agent "$id" "${labels[@]}" --ttl 10m | tail -n 1)" ||
        fail "token create for $id"
    REACTOR_JOIN_TOKEN="$token" start "$id" "$id" -- -e REACTOR_JOIN_TOKEN \
        -v "$work/descriptors:/descriptors:ro" -v "$work/$id:/var/lib/reactor" "$HOST_IMAGE" \
        agent --id "$id" "${labels[@]}" --server https://reactor:7800 --data /var/lib/reactor \
        --descriptors /descriptors --southbound /var/lib/reactor/southbound \
        --listen 0.0.0.0:7801 --heartbeat 1s
}
agent edge-1 role=edge
agent edge-2 role=edge zone=b
say "etcd, 2 replicas, 2 agents up ($((SECONDS - started))s)"
# No agent container holds an admin credential: each joined and holds only its own, with
# which the server refuses anything but the agent's part.
agent_refused() {
    local token out
    token="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["token"])' \
        "$work/$1/credential.json")" || return 1
    # By environment, never on a command line.
    out="$(REACTOR_TOKEN="$token" pm exec -e REACTOR_TOKEN "$run-replica-b" reactor-host \
        --server https://127.0.0.1:7800 --ca /var/lib/reactor/ca.crt get Policy 2>&1)" && return 1
    [[ "$out" == *"agent $1 may only register"* ]] || { echo "$out" >&2; return 1; }
}
for id in edge-1 edge-2; do
    ! pm inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$run-$id" |
        grep -q '^REACTOR_TOKEN=' || fail "agent $id was handed REACTOR_TOKEN"
    await 30 "agent $id to join" test -s "$work/$id/credential.json"
    agent_refused "$id" || fail "agent $id's credential was not refused an object list"
done
say "agents joined with their own credentials, refused beyond their part"

# converged EXPECTED_JSON : whether every Policy's status and every agent's files are as
# EXPECTED_JSON says: {"policies": {name: {"rules": n, "agents": {id: n}}},
#                      "files": {agent: ["<policy>/<rule>.json", ...]}}
converged() {
    local policies
    policies="$(cli b get Policy -o json)" || return 1
    python3 - "$1" "$policies" "$work" <<'EOF'
import json, os, sys
want = json.loads(sys.argv[1])
listed = json.loads(sys.argv[2])
items = listed.get("items", listed) if isinstance(listed, dict) else listed
got = {}
for p in items:
    status = p.get("status") or {}
    got[p["name"]] = {"rules": status.get("ruleCount"), "agents": status.get("agents") or {}}
problems = []
if got != want["policies"]:
    problems.append(f"policies: got {got}, expected {want['policies']}")
for agent, files in want["files"].items():
    base = os.path.join(sys.argv[3], agent, "southbound", "policy-rule")
    found = sorted(
        os.path.relpath(os.path.join(d, f), base)
        for d, _, fs in os.walk(base) for f in fs
    )
    if found != sorted(files):
        problems.append(f"{agent} files: got {found}, expected {sorted(files)}")
    for f in files:
        path = os.path.join(base, f)
        if os.path.exists(path):
            rule = json.load(open(path))
            if rule.get("name") != os.path.basename(f)[:-5]:
                problems.append(f"{agent} {f}: {rule}")
for line in problems:
    print(line)
sys.exit(1 if problems else 0)
EOF
}

policies_before='
kind: Policy
name: web-allow
spec: {selector: {role: edge}, rules: [{name: http, action: allow}, {name: https, action: allow}]}
---
kind: Policy
name: zone-b-deny
spec: {selector: {zone: b}, rules: [{name: all, action: deny}]}
'
cli a apply -f - <<<"$policies_before" >/dev/null || fail "apply through replica a"
await 90 "the first Policies to converge" converged '{
  "policies": {
    "web-allow": {"rules": 2, "agents": {"edge-1": 2, "edge-2": 2}},
    "zone-b-deny": {"rules": 1, "agents": {"edge-2": 1}}},
  "files": {
    "edge-1": ["web-allow/http.json", "web-allow/https.json"],
    "edge-2": ["web-allow/http.json", "web-allow/https.json", "zone-b-deny/all.json"]}}'
say "Policies applied and converged on both agents ($((SECONDS - started))s)"

pm kill --signal KILL "$run-replica-a" >/dev/null
say "replica a killed"
# Through the survivor: a rule added, a Policy deleted, new Policies (spread over the shards,
# so that some are on those replica a owned until its lease expires).
policies_after='
kind: Policy
name: web-allow
spec: {selector: {role: edge}, rules: [{name: http, action: allow}, {name: https, action: allow}, {name: ssh, action: deny}]}
'
for i in 1 2 3 4 5 6; do
    policies_after+="---
kind: Policy
name: batch-$i
spec: {selector: {zone: b}, rules: [{name: rule-$i, action: allow}]}
"
done
cli b apply -f - <<<"$policies_after" >/dev/null || fail "apply through replica b"
cli b delete Policy zone-b-deny >/dev/null || fail "delete through replica b"
expected_policies='"web-allow": {"rules": 3, "agents": {"edge-1": 3, "edge-2": 3}}'
expected_edge_2='"web-allow/http.json", "web-allow/https.json", "web-allow/ssh.json"'
for i in 1 2 3 4 5 6; do
    expected_policies+=", \"batch-$i\": {\"rules\": 1, \"agents\": {\"edge-2\": 1}}"
    expected_edge_2+=", \"batch-$i/rule-$i.json\""
done
await 120 "everything to converge after replica a died" converged "{
  \"policies\": {$expected_policies},
  \"files\": {
    \"edge-1\": [\"web-allow/http.json\", \"web-allow/https.json\", \"web-allow/ssh.json\"],
    \"edge-2\": [$expected_edge_2]}}"
agents_connected() {
    cli b agents | awk 'NR > 1 && $2 == "yes" { n++ } END { exit !(n == 2) }'
}
await 30 "both agents connected to replica b" agents_connected
say "ok: converged after replica a was killed; $((SECONDS - started))s in all"

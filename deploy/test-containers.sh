#!/usr/bin/env bash
# deploy/compose.yaml run for real by podman-compose (the pinned version scripts/tools.sh
# names): etcd, an OCI registry, two `serve` replicas and two agents. The reactor is signed
# with a key made here and pushed to the registry (over TLS, its certificate made here with
# openssl); the replicas pull it by tag and load it only signed by that key. It applies
# Policies, kills one replica
# with SIGKILL, changes the Policies through the other, and checks that everything
# converges: every Policy's status (ruleCount, agents), the files each agent's policy-rule
# descriptor wrote, both agents connected. Then `stop` sends SIGTERM to the agents and the
# surviving replica, each PID 1 of its container: each must exit 0 (not be killed after the
# grace period). Everything it started is removed at the end (`down --volumes`), also when a
# check fails or the script is interrupted.
#
# usage: deploy/test-containers.sh       (builds the images first: deploy/build-image.sh;
#                                         REACTOR_HOST_BIN=FILE puts that binary in the image)
#
# The replicas share one config (REACTOR_CONFIG: reactor.yaml naming policy-rust by tag, the
# registry's CA, the trusted key) and an empty components folder, the agents one descriptors
# folder (policy-rule-descriptor.wasm only), all mounted read-only from a temporary folder
# (REACTOR_COMPONENTS, REACTOR_DESCRIPTORS); the published ports are free ones picked at
# start (REACTOR_PORT_A, REACTOR_PORT_B, REACTOR_REGISTRY_PORT). Agents reach the replicas
# through the network alias `reactor`, which names every live replica; an agent whose replica
# dies reconnects to the other.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
# shellcheck source=deploy/podman.sh
. deploy/podman.sh
# shellcheck source=scripts/tools.sh
. scripts/tools.sh
started=$SECONDS
say() { printf 'test-containers: %s\n' "$*"; }
[ -x "$PODMAN_COMPOSE" ] || {
    say "podman-compose $PODMAN_COMPOSE_VERSION is missing: run scripts/setup-containers.sh" >&2
    exit 1
}

deploy/build-image.sh >/dev/null
say "images built ($((SECONDS - started))s)"
build="${CARGO_TARGET_DIR:-$root/target}/deploy-components"
scripts/build-components.sh "$build" policy-rust policy-rule-descriptor >/dev/null

project="reactor-ct-$$"
work="$(mktemp -d "${TMPDIR:-/tmp}/$project.XXXXXX")"
# compose ARGS... : podman-compose on deploy/compose.yaml, as this run's project.
compose() { "$PODMAN_COMPOSE" --no-ansi -p "$project" -f deploy/compose.yaml "$@"; }
upped=false
cleanup() {
    local code=$?
    if $upped; then compose down --volumes --timeout 0 >/dev/null 2>&1 || true; fi
    rm -rf "$work"
    [ "$code" -eq 0 ] || say "FAILED after $((SECONDS - started))s; containers, network and volumes removed"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# container SERVICE : the id of this run's container of SERVICE.
container() {
    pm ps --all --quiet --filter "label=com.docker.compose.project=$project" \
        --filter "label=com.docker.compose.service=$1"
}
services=(etcd registry replica-a replica-b agent-1 agent-2)
fail() {
    say "FAIL: $*" >&2
    for service in "${services[@]}"; do
        local id
        id="$(container "$service" 2>/dev/null)" || continue
        [ -n "$id" ] || continue
        echo "--- last lines of $service, then its last warnings and errors" >&2
        pm logs --tail 10 "$id" >&2 2>&1 || true
        pm logs "$id" 2>&1 | grep -E " (WARN|ERROR) " | tail -n 5 >&2 || true
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

mkdir -p "$work/components" "$work/descriptors" "$work/config" "$work/registry" "$work/keys" \
    "$work/push"
cp "$build/policy-rule-descriptor.wasm" "$work/descriptors/"
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
REACTOR_PORT_A="$(free_port)"
REACTOR_PORT_B="$(free_port)"
while [ "$REACTOR_PORT_B" = "$REACTOR_PORT_A" ]; do REACTOR_PORT_B="$(free_port)"; done
REACTOR_REGISTRY_PORT="$(free_port)"
export REACTOR_COMPONENTS="$work/components" REACTOR_DESCRIPTORS="$work/descriptors" \
    REACTOR_CONFIG="$work/config" REACTOR_REGISTRY="$work/registry" \
    REACTOR_PORT_A REACTOR_PORT_B REACTOR_REGISTRY_PORT
bin="${REACTOR_HOST_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/reactor-host}"

# The registry: a CA and a certificate for `registry` (its name on the network) and
# 127.0.0.1 (its published port), a config serving TLS only.
(
    cd "$work/registry"
    ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -days 1 -subj /CN=reactor-test-registry-ca -keyout ca.key \
        -out "$work/config/registry-ca.crt" -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req "${ec[@]}" -subj /CN=registry -keyout registry.key -out registry.csr 2>/dev/null
    printf '%s\n' subjectAltName=DNS:registry,DNS:localhost,IP:127.0.0.1 basicConstraints=CA:FALSE \
        keyUsage=digitalSignature extendedKeyUsage=serverAuth >registry.ext
    openssl x509 -req -in registry.csr -CA "$work/config/registry-ca.crt" -CAkey ca.key \
        -CAcreateserial -days 1 -extfile registry.ext -out registry.crt 2>/dev/null
    rm -f ca.key registry.csr registry.ext
    cat >config.yml <<EOF
version: 0.1
log: {level: info}
storage: {filesystem: {rootdirectory: /var/lib/registry}}
http:
  addr: 0.0.0.0:5000
  secret: $(python3 -c 'import secrets; print(secrets.token_hex(16))')
  tls: {certificate: /etc/registry/registry.crt, key: /etc/registry/registry.key}
EOF
) || fail "the registry's certificate (openssl)"
# The release key: the replicas trust its public half only.
"$bin" component keygen "$work/keys/release" >/dev/null || fail "component keygen"
cp "$work/keys/release.pub" "$work/config/"
cat >"$work/config/reactor.yaml" <<'EOF'
components:
  policy-rust: {revision: 1, source: "oci://registry:5000/reactors/policy-rust:stable"}
supply:
  interval: 5s
  timeout: 10s
  registries:
    "registry:5000": {ca: /config/registry-ca.crt}
trust:
  keys: [/config/release.pub]
EOF
chmod -R a+rX "$work"
# The agents' join tokens, empty until they are made (the file reads them at `up`).
export EDGE_1_JOIN_TOKEN="" EDGE_2_JOIN_TOKEN=""

logs_say() { pm logs "$(container "$1")" 2>&1 | grep -q "$2"; }
# volume SERVICE : the host folder of SERVICE's volume /var/lib/reactor.
volume() {
    pm inspect --format '{{range .Mounts}}{{if eq .Destination "/var/lib/reactor"}}{{.Source}}{{end}}{{end}}' \
        "$(container "$1")"
}

# The reactor, signed and pushed to the registry with its signature beside it.
upped=true
compose up -d registry >/dev/null || fail "compose up registry"
cp "$build/policy-rust.wasm" "$work/push/"
"$bin" component sign "$work/push/policy-rust.wasm" --key "$work/keys/release.key" >/dev/null ||
    fail "component sign"
push() {
    "$bin" component push "$work/push/policy-rust.wasm" \
        "oci://127.0.0.1:$REACTOR_REGISTRY_PORT/reactors/policy-rust:stable" \
        --ca "$work/config/registry-ca.crt"
}
await 60 "the registry to take the signed reactor" push
say "policy-rust signed and pushed to the registry ($((SECONDS - started))s)"

# TLS: the first replica makes the cluster's CA and stores it in etcd, the second adopts it;
# each issues its own server certificate, valid for its alias and for `reactor`.
compose up -d replica-a >/dev/null || fail "compose up replica-a"
await 60 "replica a to listen" logs_say replica-a "reactor-host listening on https://"
compose up -d replica-b >/dev/null || fail "compose up replica-b"
await 60 "replica b to listen" logs_say replica-b "reactor-host listening on https://"

# cli REPLICA ARGS... : the CLI inside a replica's container, as the admin, with the client
# file (a kubeconfig: https://127.0.0.1:7800, the CA, the admin token) that replica wrote.
cli() {
    local replica="$1"
    shift
    compose exec -T -e REACTOR_KUBECONFIG=/var/lib/reactor/kubeconfig "replica-$replica" \
        reactor-host "$@"
}
# Both replicas present the one CA that etcd holds.
[ "$(cat "$(volume replica-a)/ca.crt")" = "$(cat "$(volume replica-b)/ca.crt")" ] ||
    fail "the replicas serve certificates from different CAs"
component_ready() {
    cli "$1" components --json | python3 -c 'import json, sys
got = [(c["name"], c["state"].lower(), c.get("error")) for c in json.load(sys.stdin)]
if got != [("policy-rust", "ready", None)]:
    sys.exit(f"components: {got}")'
}
await 120 "policy-rust on replica a" component_ready a
await 120 "policy-rust on replica b" component_ready b
# What serves is the signed wasm pushed, pulled from the registry.
pushed="$(sha256sum "$work/push/policy-rust.wasm" | cut -d' ' -f1)"
for replica in a b; do
    serving="$(cli "$replica" components --json | python3 -c 'import json, sys
print([c["sha256"] for c in json.load(sys.stdin) if c["name"] == "policy-rust"][0])')"
    [ "$serving" = "$pushed" ] || fail "replica $replica serves $serving, not the wasm pushed ($pushed)"
done
say "both replicas serve policy-rust pulled from the registry, its signature checked"

# The agents, each with the policy-rule descriptor, reaching a replica by `reactor`. Each is
# handed only a join token for its id and labels (made by the admin on replica a, taken by
# replica b as well: tokens live in etcd), by environment (EDGE_1_JOIN_TOKEN, read by the
# compose file); it exchanges the token for a credential of its own, which it keeps in its
# volume, and pins the CA the token names. $work/<id> is that volume's folder on this host.
token() {
    cli a token create --ttl 10m "$@" | tail -n 1
}
EDGE_1_JOIN_TOKEN="$(token --agent edge-1 --label role=edge)" || fail "token create for edge-1"
EDGE_2_JOIN_TOKEN="$(token --agent edge-2 --label role=edge --label zone=b)" ||
    fail "token create for edge-2"
compose up -d agent-1 agent-2 >/dev/null || fail "compose up agent-1 agent-2"
ln -s "$(volume agent-1)" "$work/edge-1"
ln -s "$(volume agent-2)" "$work/edge-2"
say "etcd, 2 replicas, 2 agents up ($((SECONDS - started))s)"
# No agent container holds an admin credential: each joined and holds only its own, with
# which the server refuses anything but the agent's part.
agent_refused() {
    local token out
    token="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["token"])' \
        "$work/$1/credential.json")" || return 1
    # By environment, never on a command line.
    out="$(REACTOR_TOKEN="$token" compose exec -T -e REACTOR_TOKEN replica-b reactor-host \
        --server https://127.0.0.1:7800 --ca /var/lib/reactor/ca.crt get Policy 2>&1)" && return 1
    [[ "$out" == *"agent $1 may only register"* ]] || { echo "$out" >&2; return 1; }
}
for id in edge-1 edge-2; do
    ! pm inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$(container "agent-${id#edge-}")" |
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

pm kill --signal KILL "$(container replica-a)" >/dev/null
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
say "converged after replica a was killed ($((SECONDS - started))s)"

# SIGTERM, as `podman stop` sends it to each container's PID 1: every one exits 0 within the
# grace period, none is killed when it ends (exit code 137).
compose stop --timeout 60 agent-1 agent-2 replica-b >/dev/null || fail "compose stop"
for service in agent-1 agent-2 replica-b; do
    code="$(pm inspect --format '{{.State.ExitCode}}' "$(container "$service")")"
    [ "$code" = 0 ] || fail "$service exited with $code after SIGTERM"
done
say "ok: the agents and replica b stopped on SIGTERM with status 0; $((SECONDS - started))s in all"

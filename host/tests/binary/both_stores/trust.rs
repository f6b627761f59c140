//! Trust through the real binaries: TLS by default, every route authorized by identity (a
//! matrix of every route of the OpenAPI document × every identity), agents that join and then
//! act only as themselves, revocation, the audit log, and credentials kept out of logs.

use reactor_testkit::{
    Agent, Host, assert_fails_with, cert_names, eventually, http_client, stderr, stdout,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// Who may call each route: `open` (no token), `anyone` (any credential), `view`, `edit`,
/// `admin` (users with at least that role), `agent` (an agent as itself, or an admin). A route
/// the server serves without an entry here fails the matrix test: add it, with its rule.
const EXPECTED: &[(&str, &str, &str)] = &[
    ("get", "/healthz", "open"),
    ("get", "/readyz", "open"),
    ("get", "/v1/openapi.json", "open"),
    ("get", "/v1/ca", "open"),
    ("post", "/v1/join", "open"),
    ("get", "/v1/whoami", "anyone"),
    ("post", "/v1/objects", "edit"),
    ("post", "/v1/dry-run/objects", "edit"),
    ("get", "/v1/objects/{kind}", "view"),
    ("get", "/v1/objects/{kind}/{name}", "view"),
    ("put", "/v1/objects/{kind}/{name}", "edit"),
    ("delete", "/v1/objects/{kind}/{name}", "edit"),
    ("put", "/v1/objects/{kind}/{name}/status", "edit"),
    ("put", "/v1/objects/{kind}/{name}/finalizers", "edit"),
    ("get", "/v1/watch", "view"),
    ("get", "/v1/watch/{kind}", "view"),
    ("get", "/v1/events", "view"),
    ("get", "/metrics", "view"),
    ("get", "/v1/components", "view"),
    ("get", "/v1/components/{name}", "view"),
    ("get", "/v1/components/{name}/logs", "view"),
    ("put", "/v1/components/{name}", "admin"),
    ("delete", "/v1/components/{name}", "admin"),
    ("delete", "/v1/components/{name}/rollback", "admin"),
    ("post", "/v1/components/{name}/approve", "admin"),
    ("get", "/v1/agents", "view"),
    ("put", "/v1/agents/{id}", "agent"),
    ("delete", "/v1/agents/{id}", "admin"),
    ("post", "/v1/agents/{id}/heartbeat", "agent"),
    ("post", "/v1/agents/{id}/revoke", "admin"),
    ("get", "/v1/nimbus/items", "agent"),
    ("post", "/v1/nimbus/watch", "agent"),
    ("post", "/v1/nimbus/status", "agent"),
    ("get", "/v1/users", "admin"),
    ("post", "/v1/users", "admin"),
    ("delete", "/v1/users/{name}", "admin"),
    ("post", "/v1/tokens", "admin"),
    ("get", "/v1/audit", "admin"),
    ("get", "/version", "view"),
    ("get", "/api", "view"),
    ("get", "/apis", "view"),
    ("get", "/apis/{group}", "view"),
    ("get", "/apis/{group}/{version}", "view"),
    ("get", "/openapi/v3", "view"),
    ("get", "/openapi/v3/apis/{group}/{version}", "view"),
    ("get", "/apis/{group}/{version}/{plural}", "view"),
    ("post", "/apis/{group}/{version}/{plural}", "edit"),
    ("delete", "/apis/{group}/{version}/{plural}", "edit"),
    ("get", "/apis/{group}/{version}/{plural}/{name}", "view"),
    ("put", "/apis/{group}/{version}/{plural}/{name}", "edit"),
    ("patch", "/apis/{group}/{version}/{plural}/{name}", "edit"),
    ("delete", "/apis/{group}/{version}/{plural}/{name}", "edit"),
    (
        "get",
        "/apis/{group}/{version}/{plural}/{name}/status",
        "view",
    ),
    (
        "put",
        "/apis/{group}/{version}/{plural}/{name}/status",
        "edit",
    ),
    (
        "patch",
        "/apis/{group}/{version}/{plural}/{name}/status",
        "edit",
    ),
];

struct Call {
    status: u16,
    body: String,
}

/// One request; streams are not read past their status.
async fn call(
    http: &reqwest::Client,
    base: &str,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Call {
    let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
    let mut request = http
        .request(method, format!("{base}{path}"))
        .timeout(Duration::from_secs(20));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    let streamed = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/x-ndjson"));
    let body = if streamed {
        String::new()
    } else {
        response.text().await.unwrap_or_default()
    };
    Call { status, body }
}

/// A request body each route takes, so that a refusal is the policy's and not the body's.
fn body_for(method: &str, route: &str, agent: &str) -> Option<Value> {
    match (method, route) {
        ("post", "/v1/objects") | ("post", "/v1/dry-run/objects") => {
            Some(json!({"objects": [{"kind": "Note", "name": "n", "spec": {}}]}))
        }
        ("put", "/v1/objects/{kind}/{name}") => {
            Some(json!({"kind": "Note", "name": "n", "spec": {}}))
        }
        ("put", "/v1/objects/{kind}/{name}/status") => Some(json!({"status": {}})),
        ("put", "/v1/objects/{kind}/{name}/finalizers") => Some(json!({"finalizers": []})),
        ("put", "/v1/agents/{id}") => Some(json!({})),
        ("post", "/v1/agents/{id}/heartbeat") => Some(json!({"ttlMs": 5000})),
        ("post", "/v1/nimbus/watch") => Some(json!({"agent": agent, "from": 0})),
        ("post", "/v1/nimbus/status") => Some(json!({"agent": agent, "reports": []})),
        ("post", "/v1/users") => Some(json!({"name": "matrix", "role": "view"})),
        ("post", "/v1/tokens") => Some(json!({"agent": "matrix"})),
        ("post", "/v1/join") => Some(json!({"token": "x"})),
        _ => None,
    }
}

fn path_for(route: &str, agent: &str) -> String {
    let path = route
        .replace("{kind}", "Note")
        .replace("{name}", "n")
        .replace("{id}", agent)
        // The Kubernetes API's routes, on a resource nothing serves.
        .replace("{group}", "reactor.dev")
        .replace("{version}", "v1")
        .replace("{plural}", "notes");
    if route == "/v1/nimbus/items" {
        format!("{path}?agent={agent}")
    } else {
        path
    }
}

/// Whether `who` may call a route with `rule`; `own` says the request acts as the agent
/// itself.
fn allowed(rule: &str, who: &str, own: bool) -> bool {
    let rank = |r: &str| ["view", "edit", "admin"].iter().position(|x| *x == r);
    match (rule, who) {
        ("open", _) => true,
        (_, "anonymous" | "forged") => false,
        ("anyone", _) => true,
        ("agent", "agent") => own,
        ("agent", user) => user == "admin",
        (_, "agent") => false,
        (needed, user) => rank(user) >= rank(needed),
    }
}

#[test]
fn every_route_is_authorized_by_identity() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--allow-component-api"]);
    assert!(
        host.url.starts_with("https://"),
        "TLS by default: {}",
        host.url
    );
    let view = host.user("viewer", "view");
    let edit = host.user("editor", "edit");
    // An agent that joined: its own credential from its data folder.
    let agent = Agent::start(&host, tmp.path(), "a1", &["role=edge"]);
    let agent_token = eventually("agent a1 joined", 60, || {
        let text = std::fs::read_to_string(agent.data.join("credential.json")).ok()?;
        let credential: Value = serde_json::from_str(&text).ok()?;
        credential["token"].as_str().map(str::to_owned)
    });
    let admin = host.token();
    let identities: Vec<(&str, Option<&str>)> = vec![
        ("anonymous", None),
        (
            "forged",
            Some(
                "rhu_0123456789abcdef.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            ),
        ),
        ("view", Some(view.as_str())),
        ("edit", Some(edit.as_str())),
        ("admin", Some(admin.as_str())),
        ("agent", Some(agent_token.as_str())),
    ];
    let http = host.http();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let document: Value = http
            .get(format!("{}/v1/openapi.json", host.url))
            .send()
            .await
            .expect("the document")
            .json()
            .await
            .expect("JSON");
        let expected: BTreeMap<(String, String), &str> = EXPECTED
            .iter()
            .map(|(m, r, rule)| ((m.to_string(), r.to_string()), *rule))
            .collect();
        let mut served = Vec::new();
        for (route, methods) in document["paths"].as_object().expect("paths") {
            for method in methods.as_object().expect("methods").keys() {
                served.push((method.clone(), route.clone()));
            }
        }
        let missing: Vec<_> = served
            .iter()
            .filter(|k| !expected.contains_key(*k))
            .collect();
        assert!(
            missing.is_empty(),
            "routes without an expected rule in this test: {missing:?}"
        );
        for (method, route) in &served {
            let rule = expected[&(method.clone(), route.clone())];
            // Destructive admin routes are called on things that do not exist.
            for (who, token) in &identities {
                for (own, target) in [(true, "a1"), (false, "a2")] {
                    if !own && rule != "agent" {
                        continue;
                    }
                    // Revoking or removing is tried on an agent nobody is.
                    let target = if rule == "admin" { "nobody" } else { target };
                    let path = path_for(route, target);
                    let answer = call(
                        &http,
                        &host.url,
                        *token,
                        method,
                        &path,
                        body_for(method, route, target),
                    )
                    .await;
                    if rule == "open" {
                        // Reached without a token (a join with a bad token is refused by its
                        // handler, for what it is).
                        assert!(
                            !answer.body.contains("missing API token"),
                            "{path}: {}",
                            answer.body
                        );
                        continue;
                    }
                    let refused = answer.status == 401 || answer.status == 403;
                    let should = allowed(rule, who, own);
                    assert_eq!(
                        !refused,
                        should,
                        "{who} {} {path}: answered {} {}",
                        method.to_uppercase(),
                        answer.status,
                        answer.body
                    );
                    if refused {
                        let error: Value =
                            serde_json::from_str(&answer.body).expect("a JSON refusal");
                        // `/v1`'s error shape, or the Kubernetes API's `metav1.Status`.
                        let message = error["error"]
                            .as_str()
                            .or(error["message"].as_str())
                            .expect("a message");
                        assert!(!message.contains('\n'), "one line: {message}");
                    }
                }
            }
        }
    });
}

#[test]
fn agents_act_only_as_themselves_and_revocation_ends_their_feed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let agent = Agent::start(&host, tmp.path(), "a1", &["role=edge"]);
    eventually(
        "a1 registered with the labels of its join token",
        60,
        || {
            let out = host.cli(&["agents", "-o", "json"]);
            let agents: Value = serde_json::from_slice(&out.stdout).ok()?;
            let a1 = agents.as_array()?.iter().find(|a| a["id"] == "a1")?.clone();
            (a1["labels"] == json!({"role": "edge"}) && a1["connected"] == true).then_some(())
        },
    );
    let token = std::fs::read_to_string(agent.data.join("credential.json")).expect("kept");
    let token = serde_json::from_str::<Value>(&token).expect("JSON")["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let http = host.http();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let as_agent = |method: &'static str, path: String, body: Option<Value>| {
            let (http, url, token) = (http.clone(), host.url.clone(), token.clone());
            async move { call(&http, &url, Some(&token), method, &path, body).await }
        };
        // Its own labels: only a new join token changes them.
        let relabel = as_agent(
            "put",
            "/v1/agents/a1".into(),
            Some(json!({"labels": {"role": "core"}})),
        )
        .await;
        assert_eq!(relabel.status, 403, "{}", relabel.body);
        assert!(
            relabel.body.contains("may not set its own labels"),
            "{}",
            relabel.body
        );
        for (method, path, body) in [
            ("put", "/v1/agents/a2".to_owned(), Some(json!({}))),
            (
                "post",
                "/v1/nimbus/watch".to_owned(),
                Some(json!({"agent": "a2", "from": 0})),
            ),
            (
                "post",
                "/v1/nimbus/status".to_owned(),
                Some(json!({"agent": "a2", "reports": []})),
            ),
            ("get", "/v1/nimbus/items?agent=a2".to_owned(), None),
            (
                "post",
                "/v1/objects".to_owned(),
                Some(json!({"objects": [{"kind": "Note", "name": "n", "spec": {}}]})),
            ),
            ("delete", "/v1/objects/Policy/p".to_owned(), None),
            ("get", "/v1/objects/Policy".to_owned(), None),
        ] {
            let answer = as_agent(method, path.clone(), body).await;
            assert_eq!(
                answer.status, 403,
                "agent a1 {method} {path}: {}",
                answer.body
            );
        }
        // A feed open as itself ends as soon as it is revoked, and it is refused afterwards.
        let items = as_agent("get", "/v1/nimbus/items?agent=a1".into(), None).await;
        assert_eq!(items.status, 200, "{}", items.body);
        let from = serde_json::from_str::<Value>(&items.body).expect("JSON")["revision"].clone();
        let response = http
            .post(format!("{}/v1/nimbus/watch", host.url))
            .bearer_auth(&token)
            .json(&json!({"agent": "a1", "from": from}))
            .send()
            .await
            .expect("feed");
        assert_eq!(response.status(), 200);
        let mut feed = response.bytes_stream();
        let revoked = host.cli(&["agents", "revoke", "a1"]);
        assert_eq!(stdout(&revoked).trim(), "agent a1 revoked (1 credential)");
        let ended = tokio::time::timeout(Duration::from_secs(10), async {
            use futures::StreamExt;
            while let Some(chunk) = feed.next().await {
                if chunk.is_err() {
                    break;
                }
            }
        })
        .await;
        assert!(ended.is_ok(), "the revoked agent's feed did not end");
        let after = as_agent("get", "/v1/nimbus/items?agent=a1".into(), None).await;
        assert_eq!(after.status, 401, "{}", after.body);
        assert!(
            after.body.contains("of agent:a1 was revoked"),
            "{}",
            after.body
        );
    });
    eventually("the agent process says why it stopped", 60, || {
        std::fs::read_to_string(agent.data.with_extension("log"))
            .ok()?
            .contains("was revoked")
            .then_some(())
    });
}

#[test]
fn tls_join_tokens_users_and_the_audit_log_hold_against_misuse() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let other_ca = tempfile::tempdir().expect("tempdir");
    // Another server's CA, made the same way.
    let other = Host::start(&other_ca.path().join("data"), &[]);
    runtime.block_on(async {
        // Plain HTTP to the TLS port: a one-line answer saying so.
        let plain = host.url.replacen("https://", "http://", 1);
        let answer = reqwest::get(format!("{plain}/v1/whoami"))
            .await
            .expect("answered");
        assert_eq!(answer.status(), 400);
        assert!(answer.text().await.expect("text").contains("use https://"));
        // A client trusting another CA refuses the server's certificate.
        let stranger = http_client(other.ca_pem().as_deref());
        let error = stranger
            .get(format!("{}/healthz", host.url))
            .send()
            .await
            .expect_err("another CA");
        let chain = format!("{error:?}");
        assert!(chain.contains("UnknownIssuer"), "{chain}");
    });
    // The CLI with the other server's client file refuses this server too, in one line.
    let out = reactor_testkit::run_cli(&[
        "get",
        "Policy",
        "--server",
        &host.url,
        "--kubeconfig",
        &other.data.join("kubeconfig").to_string_lossy(),
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("cannot reach the server"),
        "{}",
        stderr(&out)
    );

    // A view user cannot write, an edit user cannot manage users; a revoked user is told so.
    let view = host.user("viewer", "view");
    let edit = host.user("editor", "edit");
    let as_user = |token: &str, args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--server", &host.url, "--ca"]);
        let ca = host.data.join("ca.crt");
        let ca = ca.to_string_lossy().into_owned();
        all.push(&ca);
        reactor_testkit::run_cli_env(&all, &[("REACTOR_TOKEN", token)])
    };
    let out = as_user(&view, &["apply", "-f", "-"]);
    assert!(!out.status.success());
    let out = as_user(&view, &["delete", "Policy", "p"]);
    assert!(
        stderr(&out).contains("has the role view; this needs the role edit"),
        "{}",
        stderr(&out)
    );
    let out = as_user(&edit, &["user", "create", "mallory", "--role", "admin"]);
    assert!(
        stderr(&out).contains("has the role edit; this needs the role admin"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        stdout(&as_user(&view, &["whoami"])).trim(),
        "user:viewer (role view)"
    );
    let revoked = host.cli(&["user", "revoke", "viewer"]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    let out = as_user(&view, &["get", "Policy"]);
    assert!(
        stderr(&out).contains("of user:viewer was revoked"),
        "{}",
        stderr(&out)
    );

    // A join token works once; a malformed one is refused in one line.
    let join = host.join_token("j1", &["zone=a"]);
    let (token, _pin) = join.split_once("::").expect("pinned");
    runtime.block_on(async {
        let client = host.client_with(None);
        let joined = client.join(token).await.expect("the first use");
        // The agent's API certificate names only its id and loopback: an agent cannot
        // choose names (say, the server's) for a certificate from the cluster's CA.
        let names = cert_names(joined.api_cert_pem.as_deref().expect("an API certificate"));
        assert_eq!(names, ["127.0.0.1", "::1", "j1", "localhost"]);
        let again = client.join(token).await.expect_err("the second use");
        assert!(
            again.to_string().contains("unknown or already used"),
            "{again}"
        );
        let forged = client.join("rhj_nonsense").await.expect_err("malformed");
        assert!(
            forged.to_string().contains("malformed join token"),
            "{forged}"
        );
    });
    // A join token used after its time to live: refused, naming when it expired.
    let late = host.cli(&["token", "create", "--agent", "late", "--ttl", "1s"]);
    assert!(late.status.success(), "{}", stderr(&late));
    let token = stdout(&late).lines().last().unwrap_or_default().to_owned();
    let (token, _pin) = token.split_once("::").expect("pinned");
    // (Its expiry against a controlled clock is join.rs' unit test; here the wiring.)
    std::thread::sleep(Duration::from_millis(1100));
    let refused = runtime
        .block_on(host.client_with(None).join(token))
        .expect_err("an expired join token")
        .to_string();
    assert!(
        refused.contains("the join token for agent late expired at "),
        "{refused}"
    );
    // The admin names where an agent's API is reached; a name no certificate can carry is
    // refused in one line.
    let named = host.cli(&[
        "token",
        "create",
        "--agent",
        "j3",
        "--api-name",
        "edge-3.example",
        "--api-name",
        "10.0.0.3",
    ]);
    assert!(named.status.success(), "{}", stderr(&named));
    let token = stdout(&named).lines().last().unwrap_or_default().to_owned();
    let (token, _pin) = token.split_once("::").expect("pinned");
    let joined = runtime
        .block_on(host.client_with(None).join(token))
        .expect("join j3");
    assert_eq!(
        cert_names(joined.api_cert_pem.as_deref().expect("an API certificate")),
        [
            "10.0.0.3",
            "127.0.0.1",
            "::1",
            "edge-3.example",
            "j3",
            "localhost"
        ]
    );
    assert_fails_with(
        &host.cli(&["token", "create", "--agent", "j4", "--api-name", "bad name"]),
        &[r#"apiNames: "bad name" is not a host name or an IP address"#],
    );
    // An agent given a join token that pins another CA (another server's) refuses to join.
    let foreign = other.join_token("j2", &[]);
    let j2_data = tmp.path().join("j2").to_string_lossy().into_owned();
    let out = reactor_testkit::run_cli_env(
        &[
            "agent", "--id", "j2", "--server", &host.url, "--data", &j2_data,
        ],
        &[("REACTOR_JOIN_TOKEN", &foreign)],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not the one the join token pins"),
        "{}",
        stderr(&out)
    );

    // An agent that trusts another CA than the one that signed the server's certificate
    // stops with one line rather than retry for ever.
    let mut agent = std::process::Command::new(reactor_testkit::reactor_host_bin())
        .args(["agent", "--id", "j5", "--server", &host.url, "--data"])
        .arg(tmp.path().join("j5"))
        .arg("--ca")
        .arg(other.data.join("ca.crt"))
        .env("REACTOR_TOKEN", host.token())
        .env_remove("REACTOR_JOIN_TOKEN")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agent runs");
    let stopped = eventually("the untrusting agent stops", 30, || {
        agent.try_wait().ok().flatten()
    });
    assert!(!stopped.success());
    let mut said = String::new();
    std::io::Read::read_to_string(
        &mut agent.stderr.take().expect("stderr is piped"),
        &mut said,
    )
    .expect("stderr");
    assert!(
        said.contains("presents a certificate this agent does not trust") && said.contains("--ca"),
        "{said}"
    );

    // The audit log has the changes and the refusals, with who made them.
    let out = host.cli(&["audit", "-o", "json", "--limit", "1000"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(entries.iter().any(|e| e["identity"] == "user:editor"
        && e["result"] == "refused"
        && e["path"] == "/v1/users"));
    assert!(entries.iter().any(|e| e["identity"] == "user:admin"
        && e["verb"] == "DELETE"
        && e["path"] == "/v1/users/viewer"
        && e["result"] == "ok"));
    assert!(
        entries
            .iter()
            .any(|e| e["identity"] == "anonymous" && e["result"] == "refused")
    );

    // No credential in the server's log, the audit log, or any error printed above.
    let log =
        host.log() + &std::fs::read_to_string(host.data.join("audit.log")).unwrap_or_default();
    for secret in [&host.token(), &view, &edit, &token.to_owned()] {
        let secret_part = secret.rsplit('.').next().unwrap_or(secret);
        assert!(
            !log.contains(secret_part),
            "a credential is in the server's logs"
        );
    }
}

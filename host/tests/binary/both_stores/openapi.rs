//! The OpenAPI document of a real server: served without a token, it names every route the
//! server routes (each documented operation is routed, no other method is, and the route table
//! of docs/src/http-api.md lists the same routes); refusals outside the handlers keep the error shape, and
//! the bodies the schema-driven fuzz found accepted are refused.

use reactor_testkit::Host;
use serde_json::Value;
use std::collections::BTreeSet;

const METHODS: [&str; 5] = ["GET", "PUT", "POST", "DELETE", "PATCH"];

/// `(METHOD, path)` of every route in the "Routes" table of docs/src/http-api.md; `[/{x}]` is
/// optional.
fn readme_routes() -> BTreeSet<(String, String)> {
    let page = include_str!("../../../../docs/src/http-api.md");
    let section = page
        .split("\n## Routes\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/src/http-api.md has a Routes section");
    let mut routes = BTreeSet::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let cell = row
            .split('|')
            .nth(1)
            .expect("a first cell")
            .replace('`', "");
        let (methods, path) = cell.trim().rsplit_once(' ').expect("METHOD path");
        let path = path.split('?').next().expect("a path");
        let paths = match path.split_once('[') {
            Some((base, optional)) => vec![
                base.to_owned(),
                format!("{base}{}", optional.trim_end_matches(']')),
            ],
            None => vec![path.to_owned()],
        };
        for method in methods.split('/') {
            for path in &paths {
                routes.insert((method.to_owned(), path.clone()));
            }
        }
    }
    routes
}

fn documented(document: &Value) -> BTreeSet<(String, String)> {
    let paths = document["paths"].as_object().expect("paths");
    paths
        .iter()
        .flat_map(|(path, item)| {
            METHODS
                .iter()
                .filter(|m| item.get(m.to_lowercase()).is_some())
                .map(move |m| (m.to_string(), path.clone()))
        })
        .collect()
}

fn concrete(path: &str) -> String {
    path.replace("{kind}", "Probe")
        .replace("{name}", "probe")
        .replace("{id}", "probe")
        .replace("{group}", "reactor.dev")
        .replace("{version}", "v1")
        .replace("{plural}", "probes")
}

#[test]
fn the_document_names_every_route_the_server_serves() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let http = host.http();
        let answer = http
            .get(format!("{}/v1/openapi.json", host.url))
            .send()
            .await
            .expect("openapi.json");
        assert_eq!(answer.status(), 200, "served without a token");
        let document: Value = answer.json().await.expect("the document is JSON");
        assert!(
            document["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3.")),
            "{}",
            document["openapi"]
        );
        let routes = documented(&document);
        assert_eq!(
            routes,
            readme_routes(),
            "the document and the route table of docs/src/http-api.md list the same routes"
        );

        let token = host.token();
        let paths: BTreeSet<&String> = routes.iter().map(|(_, path)| path).collect();
        for path in paths {
            for method in METHODS {
                let url = format!("{}{}", host.url, concrete(path));
                let answer = http
                    .request(method.parse().expect("method"), &url)
                    .bearer_auth(&token)
                    .header("content-type", "application/json")
                    .body("{}")
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
                let status = answer.status().as_u16();
                // A stream (watch) answers its headers at once; only its status is read.
                let body = if status == 200 {
                    Value::Null
                } else {
                    answer.json().await.unwrap_or(Value::Null)
                };
                if routes.contains(&(method.to_owned(), path.clone())) {
                    assert_ne!(status, 405, "{method} {path} is documented but not routed");
                    assert_ne!(
                        body["error"], "no such route",
                        "{method} {path} is documented but not routed"
                    );
                } else {
                    assert_eq!(status, 405, "{method} {path} is routed but not documented");
                    // `/v1`'s error shape, or the Kubernetes API's `metav1.Status`.
                    assert!(
                        body["code"] == "invalid" || body["reason"] == "MethodNotAllowed",
                        "{method} {path}: {body}"
                    );
                }
            }
        }
    });
}

#[test]
fn refusals_outside_the_handlers_keep_the_error_shape() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let http = host.http();
        let token = host.token();
        for (method, path, status, says) in [
            (
                "PATCH",
                "/v1/objects/Policy/a",
                405,
                "method PATCH is not allowed",
            ),
            ("POST", "/healthz", 405, "method POST is not allowed"),
            ("GET", "/v1/objects/Policy/%FF", 400, "invalid path"),
            ("GET", "/v1/nothing", 404, "no such route"),
        ] {
            let answer = http
                .request(
                    method.parse().expect("method"),
                    format!("{}{path}", host.url),
                )
                .bearer_auth(&token)
                .send()
                .await
                .expect("request");
            assert_eq!(answer.status().as_u16(), status, "{method} {path}");
            let body: Value = answer.json().await.expect("an error body");
            assert!(
                body["error"].as_str().is_some_and(|e| e.contains(says))
                    && body["code"].is_string(),
                "{method} {path}: {body}"
            );
        }
    });
}

/// What the schema-driven fuzz found accepted against the document, refused now.
#[test]
fn bodies_the_fuzz_found_accepted_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let http = host.http();
        let token = host.token();
        for (path, body, says) in [
            (
                "/v1/nimbus/status",
                r#"{"agent": "", "reports": []}"#,
                "agent id",
            ),
            (
                "/v1/objects",
                r#"{"objects": [{"kind": "A", "name": "a", "meta": []}]}"#,
                "expected a map of meta fields",
            ),
        ] {
            let answer = http
                .post(format!("{}{path}", host.url))
                .bearer_auth(&token)
                .body(body)
                .send()
                .await
                .expect("request");
            assert_eq!(answer.status().as_u16(), 400, "{path} {body}");
            let refused: Value = answer.json().await.expect("an error body");
            assert!(
                refused["error"].as_str().is_some_and(|e| e.contains(says)),
                "{path}: {refused}"
            );
        }
        let listed = http
            .get(format!("{}/v1/objects/A", host.url))
            .bearer_auth(&token)
            .send()
            .await
            .expect("list");
        let listing: Value = listed.json().await.expect("listing");
        assert_eq!(
            listing["items"],
            serde_json::json!([]),
            "nothing was stored"
        );
    });
}

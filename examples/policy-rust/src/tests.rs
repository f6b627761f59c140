//! The Policy reactor against the SDK's fake host: what it publishes, withdraws and reports.

use super::Policy;
use reactor_sdk::store::StoreError;
use reactor_sdk::testing::{FakeHost, object};
use reactor_sdk::{Action, Error, ItemState, ItemStatus, Object, Target};
use serde_json::{Value, json};

fn policy(rules: Value) -> Object {
    let mut obj = object(
        "Policy",
        "web-allow",
        json!({"selector": {"role": "edge"}, "rules": rules}),
    );
    obj.labels = vec![("app".into(), "web".into())];
    obj
}

fn two_rules() -> Value {
    json!([{"name": "http", "action": "allow"}, {"name": "https", "action": "allow"}])
}

fn keys(host: &FakeHost) -> Vec<String> {
    host.items().into_iter().map(|i| i.key).collect()
}

#[test]
fn publishes_one_item_per_rule_to_its_selector_and_counts_them_in_status() {
    let mut host = FakeHost::new("policy-rust");
    assert_eq!(
        host.on_create::<Policy>(policy(two_rules())),
        Ok(Action::Done)
    );
    assert_eq!(
        keys(&host),
        ["policy/web-allow/http", "policy/web-allow/https"]
    );
    let http = host.item("policy/web-allow/http").expect("published");
    assert_eq!(http.value, json!({"name": "http", "action": "allow"}));
    assert_eq!(
        http.to,
        Target::Labels(vec![("role".into(), "edge".into())])
    );
    assert_eq!(
        host.status("Policy", "web-allow"),
        Some(json!({"ruleCount": 2, "reactor": "policy-rust"}))
    );
    let logs: Vec<String> = host.logs().into_iter().map(|l| l.message).collect();
    assert_eq!(logs, ["policy web-allow publishes 2 rules"]);
}

#[test]
fn an_update_withdraws_the_rules_that_went_away() {
    let mut host = FakeHost::new("policy-rust");
    let old = host.put(policy(two_rules()));
    host.on_create::<Policy>(old.clone()).expect("created");
    let new = policy(json!([{"name": "https", "action": "deny"}]));
    assert_eq!(host.on_update::<Policy>(old, new), Ok(Action::Done));
    assert_eq!(keys(&host), ["policy/web-allow/https"]);
    let https = host.item("policy/web-allow/https").expect("published");
    assert_eq!(https.value, json!({"name": "https", "action": "deny"}));
    assert_eq!(
        host.status("Policy", "web-allow")
            .map(|s| s["ruleCount"].clone()),
        Some(json!(1))
    );
}

#[test]
fn validate_refuses_a_policy_without_rules_or_with_a_malformed_spec() {
    let host = FakeHost::new("policy-rust");
    assert_eq!(host.validate::<Policy>(policy(two_rules())), Ok(()));
    assert_eq!(
        host.validate::<Policy>(policy(json!([]))),
        Err("policy has no rules".to_owned())
    );
    let refused = host.validate::<Policy>(policy(json!("http")));
    assert!(
        refused
            .as_ref()
            .is_err_and(|m| m.starts_with("invalid policy spec: ")),
        "{refused:?}"
    );
}

#[test]
fn delete_withdraws_every_item() {
    let mut host = FakeHost::new("policy-rust");
    host.on_create::<Policy>(policy(two_rules()))
        .expect("created");
    let stored = host.get("Policy", "web-allow").expect("stored");
    assert_eq!(host.on_delete::<Policy>(stored), Ok(Action::Done));
    assert!(host.items().is_empty(), "{:?}", host.items());
}

#[test]
fn an_unavailable_store_is_retried_and_publishes_nothing() {
    let mut host = FakeHost::new("policy-rust");
    host.fail_next_store(StoreError::Unavailable("etcd is down".into()));
    let result = host.on_create::<Policy>(policy(two_rules()));
    assert_eq!(result, Err(Error::retry("store unavailable: etcd is down")));
    assert!(host.items().is_empty());
    assert_eq!(host.status("Policy", "web-allow"), None);
}

#[test]
fn a_malformed_spec_is_a_permanent_error() {
    let mut host = FakeHost::new("policy-rust");
    let result = host.on_create::<Policy>(policy(json!({"http": "allow"})));
    assert!(
        matches!(&result, Err(Error::Permanent(m)) if m.starts_with("invalid spec of Policy/web-allow")),
        "{result:?}"
    );
}

#[test]
fn agent_status_counts_the_items_applied_on_each_agent() {
    let mut host = FakeHost::new("policy-rust");
    host.on_create::<Policy>(policy(two_rules()))
        .expect("created");
    let report = |key: &str, agent: &str, state| ItemStatus {
        key: format!("policy/web-allow/{key}"),
        agent: agent.into(),
        state,
        message: None,
        revision: 1,
    };
    host.report(report("http", "edge-1", ItemState::Applied));
    host.report(report("http", "edge-2", ItemState::Failed));
    let owner = host.get("Policy", "web-allow").expect("stored");
    let result =
        host.on_agent_status::<Policy>(owner, report("https", "edge-1", ItemState::Applied));
    assert_eq!(result, Ok(Action::Done));
    assert_eq!(
        host.status("Policy", "web-allow"),
        Some(json!({"ruleCount": 2, "reactor": "policy-rust", "agents": {"edge-1": 2}}))
    );
}

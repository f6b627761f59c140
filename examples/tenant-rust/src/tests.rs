//! The Tenant reactor against the SDK's fake host: its Plan, its children and its items.

use super::Tenant;
use reactor_sdk::store::StoreError;
use reactor_sdk::testing::{FakeHost, object};
use reactor_sdk::{Action, Error, Object};
use serde_json::json;

fn tenant(namespaces: &[&str]) -> Object {
    object(
        "Tenant",
        "acme",
        json!({"plan": "gold", "namespaces": namespaces, "selector": {"role": "edge"}}),
    )
}

fn names(host: &FakeHost, kind: &str) -> Vec<String> {
    host.list(kind).into_iter().map(|o| o.name).collect()
}

#[test]
fn without_its_plan_a_tenant_is_not_ready_and_not_retried() {
    let mut host = FakeHost::new("tenant-rust");
    assert_eq!(host.on_create::<Tenant>(tenant(&["dev"])), Ok(Action::Done));
    let status = host.status("Tenant", "acme").expect("a status");
    assert_eq!(status["ready"], false);
    assert_eq!(status["reason"], "PlanNotFound");
    let ready = &status["conditions"][0];
    assert_eq!(
        (ready["type"].as_str(), ready["status"].as_str()),
        (Some("Ready"), Some("False"))
    );
    assert_eq!(ready["message"], "the Plan gold does not exist");
    assert!(names(&host, "TenantNamespace").is_empty());
    assert!(host.items().is_empty());
}

#[test]
fn with_its_plan_a_tenant_owns_one_namespace_and_one_item_per_namespace() {
    let mut host = FakeHost::new("tenant-rust");
    host.put(object("Plan", "gold", json!({"cpu": 2})));
    assert_eq!(
        host.on_create::<Tenant>(tenant(&["dev", "prod"])),
        Ok(Action::Done)
    );
    assert_eq!(names(&host, "TenantNamespace"), ["acme-dev", "acme-prod"]);
    let dev = host.get("TenantNamespace", "acme-dev").expect("child");
    let owner = dev.owner().expect("owned");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Tenant", "acme")
    );
    assert_eq!(
        dev.spec::<serde_json::Value>(),
        Ok(json!({"tenant": "acme", "namespace": "dev", "cpu": 2}))
    );
    let item = host.item("tenant/acme/prod").expect("published");
    assert_eq!(
        item.value,
        json!({"tenant": "acme", "namespace": "prod", "cpu": 2})
    );
    let status = host.status("Tenant", "acme").expect("a status");
    assert_eq!(
        (&status["ready"], &status["plan"], &status["namespaces"]),
        (&json!(true), &json!("gold"), &json!(2))
    );
    assert!(reactor_sdk::conditions::is_condition_true(&status, "Ready"));
}

#[test]
fn a_namespace_no_longer_listed_loses_its_child_and_its_item() {
    let mut host = FakeHost::new("tenant-rust");
    host.put(object("Plan", "gold", json!({"cpu": 2})));
    let old = host.put(tenant(&["dev", "prod"]));
    host.on_create::<Tenant>(old.clone()).expect("created");
    assert_eq!(
        host.on_update::<Tenant>(old, tenant(&["prod"])),
        Ok(Action::Done)
    );
    assert_eq!(names(&host, "TenantNamespace"), ["acme-prod"]);
    let keys: Vec<String> = host.items().into_iter().map(|i| i.key).collect();
    assert_eq!(keys, ["tenant/acme/prod"]);
}

#[test]
fn a_child_name_taken_by_a_user_object_is_a_permanent_error() {
    let mut host = FakeHost::new("tenant-rust");
    host.put(object("Plan", "gold", json!({"cpu": 2})));
    host.put(object("TenantNamespace", "acme-dev", json!({})));
    let result = host.on_create::<Tenant>(tenant(&["dev"]));
    assert!(
        matches!(&result, Err(Error::Permanent(m)) if m.contains("TenantNamespace/acme-dev")),
        "{result:?}"
    );
    assert!(host.items().is_empty());
}

#[test]
fn validate_refuses_a_tenant_without_a_plan() {
    let host = FakeHost::new("tenant-rust");
    let refused = host.validate::<Tenant>(object("Tenant", "acme", json!({"plan": ""})));
    assert_eq!(refused, Err("spec.plan names no Plan".to_owned()));
    assert_eq!(host.validate::<Tenant>(tenant(&[])), Ok(()));
}

#[test]
fn delete_withdraws_the_items_and_the_children_go_with_the_tenant() {
    let mut host = FakeHost::new("tenant-rust");
    host.put(object("Plan", "gold", json!({"cpu": 2})));
    host.on_create::<Tenant>(tenant(&["dev"])).expect("created");
    let stored = host.get("Tenant", "acme").expect("stored");
    assert_eq!(host.on_delete::<Tenant>(stored), Ok(Action::Done));
    assert!(host.items().is_empty());
    assert!(names(&host, "TenantNamespace").is_empty());
}

#[test]
fn a_conflicting_store_is_retried() {
    let mut host = FakeHost::new("tenant-rust");
    host.put(object("Plan", "gold", json!({"cpu": 2})));
    host.fail_next_store(StoreError::Conflict("Plan/gold changed".into()));
    let result = host.on_create::<Tenant>(tenant(&["dev"]));
    assert_eq!(
        result,
        Err(Error::retry("store conflict: Plan/gold changed"))
    );
    assert!(names(&host, "TenantNamespace").is_empty());
}

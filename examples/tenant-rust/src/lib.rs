//! The Tenant reactor: a Tenant names a Plan (referenced, not owned) and lists namespaces.
//! With its Plan present it owns one `TenantNamespace/<tenant>-<ns>` per namespace (the
//! Plan's cpu copied in), publishes one Nimbus item `tenant/<tenant>/<ns>` per namespace to
//! the agents its selector matches, and reports `ready` and a `Ready` condition (so `kubectl
//! wait --for=condition=Ready` works). The host runs it again when the Plan
//! changes or a child is changed by anyone else, and deletes the children when the Tenant goes.

use reactor_sdk::conditions::{Condition, set_condition};
use reactor_sdk::{Action, Error, Info, Object, Reactor, Target, export_reactor, nimbus, store};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const NAME: &str = "tenant-rust";
const CHILD_KIND: &str = "TenantNamespace";

#[derive(Debug, Deserialize)]
struct TenantSpec {
    plan: String,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default)]
    selector: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct PlanSpec {
    cpu: i64,
}

/// What each child and each item says.
#[derive(Debug, Serialize)]
struct Namespace<'a> {
    tenant: &'a str,
    namespace: &'a str,
    cpu: i64,
}

fn prefix(tenant: &str) -> String {
    format!("tenant/{tenant}/")
}

fn child(tenant: &str, namespace: &Namespace<'_>) -> Result<Object, Error> {
    Ok(Object {
        kind: CHILD_KIND.into(),
        name: format!("{tenant}-{}", namespace.namespace),
        labels: vec![("tenant".into(), tenant.into())],
        spec: serde_json::to_string(namespace).map_err(|e| Error::permanent(e.to_string()))?,
        status: None,
        meta: None,
    })
}

struct Tenant;

impl Reactor for Tenant {
    fn describe() -> Info {
        Info::new(NAME, ["Tenant"])
            .handles_delete()
            .references("Plan", "spec.plan")
            .owns(CHILD_KIND)
    }

    fn validate(obj: Object) -> Result<(), String> {
        let spec: TenantSpec = obj
            .spec()
            .map_err(|e| format!("invalid tenant spec: {e}"))?;
        if spec.plan.is_empty() {
            return Err("spec.plan names no Plan".into());
        }
        Ok(())
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        let spec: TenantSpec = obj.spec()?;
        let Some(plan) = store::get("Plan", &spec.plan)? else {
            // Not a retry: the host runs the Tenant again when the Plan appears.
            let mut status = json!({"ready": false, "reason": "PlanNotFound", "plan": spec.plan});
            let waiting = Condition::new("Ready", "False")
                .reason("PlanNotFound")
                .message(format!("the Plan {} does not exist", spec.plan));
            report(&obj, &mut status, waiting)?;
            return Ok(Action::Done);
        };
        let plan: PlanSpec = plan.spec()?;
        let to = Target::labels(&spec.selector);
        let mut children = Vec::new();
        let mut items = Vec::new();
        for namespace in &spec.namespaces {
            let wanted = Namespace {
                tenant: &obj.name,
                namespace,
                cpu: plan.cpu,
            };
            let applied = store::apply(&child(&obj.name, &wanted)?)?;
            children.push(applied.name);
            let key = format!("{}{namespace}", prefix(&obj.name));
            nimbus::publish(&key, &wanted, &to)?;
            items.push(key);
        }
        // Children and items no longer listed go.
        for old in store::list(CHILD_KIND, &[("tenant", &obj.name)])? {
            let mine = old
                .owner()
                .is_some_and(|o| o.kind == "Tenant" && o.name == obj.name);
            if mine && !children.contains(&old.name) {
                store::delete(CHILD_KIND, &old.name)?;
            }
        }
        for key in nimbus::published(&prefix(&obj.name))? {
            if !items.contains(&key) {
                nimbus::unpublish(&key)?;
            }
        }
        let mut status = json!({
            "ready": true,
            "plan": spec.plan,
            "namespaces": spec.namespaces.len(),
        });
        report(
            &obj,
            &mut status,
            Condition::new("Ready", "True").reason("PlanFound"),
        )?;
        Ok(Action::Done)
    }

    /// Only the items: the host deletes the children (they are owned).
    fn on_delete(obj: Object) -> Result<Action, Error> {
        for key in nimbus::published(&prefix(&obj.name))? {
            nimbus::unpublish(&key)?;
        }
        Ok(Action::Done)
    }
}

/// Writes `status` with `ready` among the conditions the object had, for its generation.
fn report(obj: &Object, status: &mut Value, ready: Condition) -> Result<(), Error> {
    let previous: Option<Value> = obj.status()?;
    let ready = ready.observed_generation(obj.generation());
    set_condition(status, previous.as_ref(), ready);
    store::set_status(&*status)
}

export_reactor!(Tenant);

#[cfg(test)]
mod tests;

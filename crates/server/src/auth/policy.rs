//! Who may call which route: one entry per route of the API, and no entry means no one.

use crate::ApiError;
use axum::http::Method;
use reactor_core::wire::ErrorCode;
use reactor_trust::{Identity, Role};

/// What a route asks of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Any authenticated caller (`whoami`).
    Anyone,
    /// A user with at least this role.
    Role(Role),
    /// An agent acting as itself (the route's `{id}`, or the agent the handler checks in the
    /// query or body), or an admin.
    Agent,
}

/// The policy: `(method, route as the router declares it, rule)`.
const POLICY: &[(Method, &str, Rule)] = &[
    (Method::GET, "/v1/whoami", Rule::Anyone),
    // Objects.
    (Method::POST, "/v1/objects", Rule::Role(Role::Edit)),
    (Method::POST, "/v1/dry-run/objects", Rule::Role(Role::Edit)),
    (Method::GET, "/v1/objects/{kind}", Rule::Role(Role::View)),
    (
        Method::GET,
        "/v1/objects/{kind}/{name}",
        Rule::Role(Role::View),
    ),
    (
        Method::PUT,
        "/v1/objects/{kind}/{name}",
        Rule::Role(Role::Edit),
    ),
    (
        Method::DELETE,
        "/v1/objects/{kind}/{name}",
        Rule::Role(Role::Edit),
    ),
    (
        Method::PUT,
        "/v1/objects/{kind}/{name}/status",
        Rule::Role(Role::Edit),
    ),
    (
        Method::PUT,
        "/v1/objects/{kind}/{name}/finalizers",
        Rule::Role(Role::Edit),
    ),
    (Method::GET, "/v1/watch", Rule::Role(Role::View)),
    (Method::GET, "/v1/watch/{kind}", Rule::Role(Role::View)),
    (Method::GET, "/v1/events", Rule::Role(Role::View)),
    (Method::GET, "/metrics", Rule::Role(Role::View)),
    // Components: reading is viewing; changing what code runs is an admin's act.
    (Method::GET, "/v1/components", Rule::Role(Role::View)),
    (Method::GET, "/v1/components/{name}", Rule::Role(Role::View)),
    (
        Method::GET,
        "/v1/components/{name}/logs",
        Rule::Role(Role::View),
    ),
    (
        Method::PUT,
        "/v1/components/{name}",
        Rule::Role(Role::Admin),
    ),
    (
        Method::DELETE,
        "/v1/components/{name}",
        Rule::Role(Role::Admin),
    ),
    (
        Method::DELETE,
        "/v1/components/{name}/rollback",
        Rule::Role(Role::Admin),
    ),
    (
        Method::POST,
        "/v1/components/{name}/approve",
        Rule::Role(Role::Admin),
    ),
    // Agents: each agent only as itself.
    (Method::GET, "/v1/agents", Rule::Role(Role::View)),
    (Method::PUT, "/v1/agents/{id}", Rule::Agent),
    (Method::DELETE, "/v1/agents/{id}", Rule::Role(Role::Admin)),
    (Method::POST, "/v1/agents/{id}/heartbeat", Rule::Agent),
    (
        Method::POST,
        "/v1/agents/{id}/revoke",
        Rule::Role(Role::Admin),
    ),
    (Method::GET, "/v1/nimbus/items", Rule::Agent),
    (Method::POST, "/v1/nimbus/watch", Rule::Agent),
    (Method::POST, "/v1/nimbus/status", Rule::Agent),
    // Who may do anything: admins only.
    (Method::GET, "/v1/users", Rule::Role(Role::Admin)),
    (Method::POST, "/v1/users", Rule::Role(Role::Admin)),
    (Method::DELETE, "/v1/users/{name}", Rule::Role(Role::Admin)),
    (Method::POST, "/v1/tokens", Rule::Role(Role::Admin)),
    (Method::GET, "/v1/audit", Rule::Role(Role::Admin)),
    // The Kubernetes API: reads are viewing, writes editing, as on `/v1`.
    (Method::GET, "/version", Rule::Role(Role::View)),
    (Method::GET, "/api", Rule::Role(Role::View)),
    (Method::GET, "/apis", Rule::Role(Role::View)),
    (Method::GET, "/apis/{group}", Rule::Role(Role::View)),
    (Method::GET, "/openapi/v3", Rule::Role(Role::View)),
    (
        Method::GET,
        "/openapi/v3/apis/{group}/{version}",
        Rule::Role(Role::View),
    ),
    (
        Method::GET,
        "/apis/{group}/{version}",
        Rule::Role(Role::View),
    ),
    (Method::GET, KUBE_RESOURCES, Rule::Role(Role::View)),
    (Method::POST, KUBE_RESOURCES, Rule::Role(Role::Edit)),
    (Method::DELETE, KUBE_RESOURCES, Rule::Role(Role::Edit)),
    (Method::GET, KUBE_OBJECT, Rule::Role(Role::View)),
    (Method::PUT, KUBE_OBJECT, Rule::Role(Role::Edit)),
    (Method::PATCH, KUBE_OBJECT, Rule::Role(Role::Edit)),
    (Method::DELETE, KUBE_OBJECT, Rule::Role(Role::Edit)),
    (Method::GET, KUBE_STATUS, Rule::Role(Role::View)),
    (Method::PUT, KUBE_STATUS, Rule::Role(Role::Edit)),
    (Method::PATCH, KUBE_STATUS, Rule::Role(Role::Edit)),
];

const KUBE_RESOURCES: &str = "/apis/{group}/{version}/{plural}";
const KUBE_OBJECT: &str = "/apis/{group}/{version}/{plural}/{name}";
const KUBE_STATUS: &str = "/apis/{group}/{version}/{plural}/{name}/status";

/// The rule of `route` for `method`, if the policy has one.
pub fn rule(method: &Method, route: &str) -> Option<Rule> {
    POLICY
        .iter()
        .find(|(m, r, _)| m == method && *r == route)
        .map(|(_, _, rule)| *rule)
}

/// Whether `identity` may call a route with `rule`; `agent` is the route's `{id}`, if any.
pub fn allow(rule: Rule, identity: &Identity, agent: Option<&str>) -> Result<(), ApiError> {
    match (rule, identity) {
        (Rule::Anyone, _) => Ok(()),
        (Rule::Role(needed), Identity::User { name, role }) if *role < needed => Err(forbidden(
            format!("user {name} has the role {role}; this needs the role {needed}"),
        )),
        (Rule::Role(_), Identity::User { .. }) => Ok(()),
        (Rule::Role(_), Identity::Agent { id, .. }) => Err(forbidden(format!(
            "agent {id} may only register, send heartbeats, read its feed and report for itself"
        ))),
        (Rule::Agent, identity) => match agent {
            Some(agent) => act_for_agent(identity, agent),
            None => Ok(()),
        },
    }
}

/// Whether `identity` may act as agent `agent`: the agent itself or an admin.
pub fn act_for_agent(identity: &Identity, agent: &str) -> Result<(), ApiError> {
    match identity {
        Identity::Agent { id, .. } if id == agent => Ok(()),
        Identity::Agent { id, .. } => Err(forbidden(format!(
            "agent {id} may not act as agent {agent}"
        ))),
        Identity::User {
            role: Role::Admin, ..
        } => Ok(()),
        Identity::User { name, role } => Err(forbidden(format!(
            "user {name} has the role {role}; acting as an agent needs an agent's credential or the role admin"
        ))),
    }
}

fn forbidden(message: String) -> ApiError {
    ApiError::new(ErrorCode::Forbidden, message)
}

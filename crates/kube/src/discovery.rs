//! Discovery: `/version`, `/api`, `/apis`, `/apis/{group}[/{version}]`, in the legacy lists
//! and in the aggregated form (`apidiscovery.k8s.io/v2`) kubectl asks for first.

use super::catalog::Catalog;
use super::naming::Resource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
};
use k8s_openapi::apimachinery::pkg::version::Info;
use serde_json::{Value, json};

/// What every resource allows.
pub const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// What a resource's `/status` allows.
pub const STATUS_VERBS: [&str; 3] = ["get", "patch", "update"];

/// The categories every resource is in (`kubectl get all` lists them).
pub const CATEGORIES: [&str; 1] = ["all"];

/// The Kubernetes API version the server speaks the shape of.
pub const KUBERNETES_MINOR: &str = "33";

/// The media type of an aggregated discovery answer.
pub const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Why a discovery document cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error("the server could not find the requested resource: group {0:?} is not served")]
    NoGroup(String),
    #[error("the server could not find the requested resource: {0} is not served")]
    NoVersion(String),
}

/// Whether an `Accept` header asks for aggregated discovery (v2) first of all.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|media| {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// `/version`: the Kubernetes version whose API shape is served, and the host's own.
pub fn version(host_version: &str) -> Info {
    Info {
        major: "1".to_owned(),
        minor: KUBERNETES_MINOR.to_owned(),
        git_version: format!("v1.{KUBERNETES_MINOR}.0+reactor-host-{host_version}"),
        git_commit: String::new(),
        git_tree_state: "clean".to_owned(),
        build_date: String::new(),
        go_version: "none (reactor-host is written in Rust)".to_owned(),
        compiler: "rustc".to_owned(),
        platform: format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
        ..Info::default()
    }
}

/// `/api`: no core group (no Pods, no Namespaces).
pub fn core_versions() -> APIVersions {
    APIVersions {
        server_address_by_client_cidrs: Vec::new(),
        versions: Vec::new(),
    }
}

fn group(name: &str, versions: &[String]) -> APIGroup {
    let versions: Vec<GroupVersionForDiscovery> = versions
        .iter()
        .map(|version| GroupVersionForDiscovery {
            group_version: format!("{name}/{version}"),
            version: version.clone(),
        })
        .collect();
    APIGroup {
        name: name.to_owned(),
        preferred_version: versions.first().cloned(),
        server_address_by_client_cidrs: None,
        versions,
    }
}

/// `/apis`.
pub fn groups(catalog: &Catalog) -> APIGroupList {
    APIGroupList {
        groups: catalog
            .groups()
            .iter()
            .map(|(name, versions)| group(name, versions))
            .collect(),
    }
}

/// `/apis/{group}`.
pub fn one_group(catalog: &Catalog, name: &str) -> Result<APIGroup, DiscoveryError> {
    catalog
        .groups()
        .iter()
        .find(|(g, _)| g == name)
        .map(|(g, versions)| group(g, versions))
        .ok_or_else(|| DiscoveryError::NoGroup(name.to_owned()))
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// `/apis/{group}/{version}`: each resource and its `/status`.
pub fn resources(
    catalog: &Catalog,
    group: &str,
    version: &str,
) -> Result<APIResourceList, DiscoveryError> {
    let served = catalog
        .groups()
        .iter()
        .any(|(g, versions)| g == group && versions.iter().any(|v| v == version));
    if !served {
        return Err(DiscoveryError::NoVersion(format!("{group}/{version}")));
    }
    let mut resources = Vec::new();
    for resource in catalog.in_version(group, version) {
        resources.push(APIResource {
            name: resource.plural.clone(),
            singular_name: resource.singular.clone(),
            namespaced: false,
            kind: resource.kind.clone(),
            verbs: strings(&VERBS),
            short_names: (!resource.short_names.is_empty()).then(|| resource.short_names.clone()),
            categories: Some(strings(&CATEGORIES)),
            ..APIResource::default()
        });
        resources.push(APIResource {
            name: format!("{}/status", resource.plural),
            singular_name: String::new(),
            namespaced: false,
            kind: resource.kind.clone(),
            verbs: strings(&STATUS_VERBS),
            ..APIResource::default()
        });
    }
    Ok(APIResourceList {
        group_version: format!("{group}/{version}"),
        resources,
    })
}

fn discovered(resource: &Resource) -> Value {
    let kind = json!({"group": resource.group, "version": resource.version, "kind": resource.kind});
    let mut shown = json!({
        "resource": resource.plural,
        "responseKind": kind,
        "scope": "Cluster",
        "singularResource": resource.singular,
        "verbs": VERBS,
        "categories": CATEGORIES,
        "subresources": [{
            "subresource": "status",
            "responseKind": kind,
            "verbs": STATUS_VERBS,
        }],
    });
    if !resource.short_names.is_empty() {
        shown["shortNames"] = json!(resource.short_names);
    }
    shown
}

/// The aggregated discovery document of `/apis` (of `/api` with no catalog: empty).
pub fn aggregated(catalog: Option<&Catalog>) -> Value {
    let items: Vec<Value> = catalog
        .map(|catalog| {
            catalog
                .groups()
                .iter()
                .map(|(group, versions)| {
                    let versions: Vec<Value> = versions
                        .iter()
                        .map(|version| {
                            let resources: Vec<Value> =
                                catalog.in_version(group, version).map(discovered).collect();
                            json!({"version": version, "resources": resources, "freshness": "Current"})
                        })
                        .collect();
                    json!({"metadata": {"name": group}, "versions": versions})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_core::object::Object;

    fn catalog() -> Catalog {
        let policy: Object = serde_json::from_value(
            json!({"kind": "Kind", "name": "Policy", "spec": {"shortNames": ["pol"]}}),
        )
        .expect("kind");
        Catalog::new("reactor.dev", &[policy])
    }

    #[test]
    fn legacy_lists() {
        let catalog = catalog();
        let list = serde_json::to_value(groups(&catalog)).expect("json");
        assert_eq!(list["kind"], "APIGroupList");
        assert_eq!(list["groups"][0]["name"], "reactor.dev");
        assert_eq!(
            list["groups"][0]["preferredVersion"]["groupVersion"],
            "reactor.dev/v1"
        );
        let resources =
            serde_json::to_value(resources(&catalog, "reactor.dev", "v1").expect("served"))
                .expect("json");
        assert_eq!(resources["kind"], "APIResourceList");
        let names: Vec<&str> = resources["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(
            names,
            ["kinds", "kinds/status", "policies", "policies/status"]
        );
        assert_eq!(resources["resources"][2]["shortNames"], json!(["pol"]));
        assert_eq!(resources["resources"][2]["namespaced"], false);
        assert!(super::resources(&catalog, "reactor.dev", "v2").is_err());
        assert!(one_group(&catalog, "nope").is_err());
        let api = serde_json::to_value(core_versions()).expect("json");
        assert_eq!(api["kind"], "APIVersions");
        assert_eq!(
            serde_json::to_value(version("0.1.0")).expect("json")["minor"],
            "33"
        );
    }

    #[test]
    fn aggregated_documents() {
        assert!(wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated("application/json"));
        let catalog = catalog();
        let doc = aggregated(Some(&catalog));
        let policies = &doc["items"][0]["versions"][0]["resources"][1];
        assert_eq!(policies["resource"], "policies");
        assert_eq!(policies["scope"], "Cluster");
        assert_eq!(policies["shortNames"], json!(["pol"]));
        assert_eq!(aggregated(None)["items"], json!([]));
    }
}

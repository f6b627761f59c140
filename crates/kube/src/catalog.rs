//! The resources the API serves: one for each Kind object, and one for the Kind objects.

use super::naming::{DEFAULT_VERSION, Resource};
use reactor_core::object::{KIND, KindSpec, Object, is_reserved};

/// Every kind served, found by group, version and plural or by kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    pub group: String,
    pub resources: Vec<Resource>,
}

impl Catalog {
    /// The resources of `kinds` (the Kind objects; those that cannot be served are left out,
    /// as are the host's own kinds), and `kinds.<group>` for the Kind objects themselves.
    pub fn new(default_group: &str, kinds: &[Object]) -> Self {
        let mut resources = vec![Self::kinds(default_group)];
        for object in kinds {
            if is_reserved(&object.name) || object.name == KIND {
                continue;
            }
            let Ok(resource) = Resource::of(object, default_group) else {
                continue;
            };
            // The first kind to claim a plural keeps it.
            let taken = resources.iter().any(|r: &Resource| {
                r.serves(&resource.group, &resource.version, &resource.plural)
                    || r.kind == resource.kind
            });
            if !taken {
                resources.push(resource);
            }
        }
        Self {
            group: default_group.to_owned(),
            resources,
        }
    }

    /// The resource of the Kind objects.
    fn kinds(group: &str) -> Resource {
        let mut resource = Resource::from_spec(KIND, &KindSpec::default(), group);
        resource.version = DEFAULT_VERSION.to_owned();
        resource
    }

    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.serves(group, version, plural))
    }

    pub fn by_kind(&self, kind: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.kind == kind)
    }

    /// The groups served, the default one first, each with its versions in order first seen.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = vec![(self.group.clone(), Vec::new())];
        for resource in &self.resources {
            let at = match groups.iter().position(|(g, _)| *g == resource.group) {
                Some(at) => at,
                None => {
                    groups.push((resource.group.clone(), Vec::new()));
                    groups.len() - 1
                }
            };
            if !groups[at].1.contains(&resource.version) {
                groups[at].1.push(resource.version.clone());
            }
        }
        groups
    }

    /// The resources of one group version.
    pub fn in_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a Resource> + 'a {
        self.resources
            .iter()
            .filter(move |r| r.group == group && r.version == version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(name: &str, spec: serde_json::Value) -> Object {
        serde_json::from_value(json!({"kind": "Kind", "name": name, "spec": spec})).expect("ok")
    }

    #[test]
    fn every_kind_object_is_a_resource_once() {
        let catalog = Catalog::new(
            "reactor.dev",
            &[
                kind("Policy", json!({})),
                kind("Widget", json!({"group": "example.com", "version": "v2"})),
                kind("Other", json!({"plural": "policies"})),
                kind("Agent", json!({})),
                kind("Broken", json!({"columns": 3})),
            ],
        );
        let kinds: Vec<&str> = catalog.resources.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["Kind", "Policy", "Widget"]);
        assert_eq!(
            catalog
                .find("reactor.dev", "v1", "kinds")
                .map(|r| r.kind.as_str()),
            Some("Kind")
        );
        assert!(catalog.find("example.com", "v2", "widgets").is_some());
        assert!(catalog.find("reactor.dev", "v1", "widgets").is_none());
        assert_eq!(
            catalog.groups(),
            vec![
                ("reactor.dev".to_owned(), vec!["v1".to_owned()]),
                ("example.com".to_owned(), vec!["v2".to_owned()])
            ]
        );
    }
}

//! The fake's Nimbus: items published by a callback's primary object, and the agents'
//! reports on them, by the rules of the host's nimbus import (key syntax, one owner per key).

use super::Item;
use super::state::State;
use crate::nimbus::NimbusError;
use crate::{ItemStatus, Target};

fn check_key(key: &str) -> Result<(), NimbusError> {
    let ok = !key.is_empty()
        && key.len() <= 512
        && !key.starts_with('/')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:".contains(c));
    if ok {
        Ok(())
    } else {
        Err(NimbusError::Invalid(format!(
            "item key {key:?} is invalid: use letters, digits and -_./: (at most 512, not starting with /)"
        )))
    }
}

impl State {
    fn nimbus_failure(&mut self) -> Result<(), NimbusError> {
        self.nimbus_failures.pop_front().map_or(Ok(()), Err)
    }

    /// The running callback's primary object, `(kind, name)`.
    fn publisher(&self, what: &str) -> Result<(String, String), NimbusError> {
        self.primary.clone().ok_or_else(|| {
            NimbusError::Denied(format!(
                "{what} needs a callback's primary object: call it from a callback"
            ))
        })
    }

    /// Refuses a key another object published.
    fn check_owner(&self, key: &str, (kind, name): &(String, String)) -> Result<(), NimbusError> {
        match self.world.items.get(key) {
            Some(item) if item.owner.kind != *kind || item.owner.name != *name => {
                Err(NimbusError::Denied(format!(
                    "item {key} belongs to {}/{}",
                    item.owner.kind, item.owner.name
                )))
            }
            _ => Ok(()),
        }
    }

    pub fn publish(&mut self, key: &str, value: &str, to: &Target) -> Result<(), NimbusError> {
        self.nimbus_failure()?;
        let publisher = self.publisher("nimbus::publish")?;
        check_key(key)?;
        let value: serde_json::Value = serde_json::from_str(value)
            .map_err(|e| NimbusError::Invalid(format!("value of item {key} is not JSON: {e}")))?;
        self.check_owner(key, &publisher)?;
        let uid = self
            .world
            .objects
            .get(&publisher)
            .and_then(|o| o.meta.as_ref())
            .map(|m| m.uid.clone())
            .unwrap_or_default();
        let revision = match self.world.items.get(key) {
            Some(old) if old.value == value => old.revision,
            Some(old) => old.revision + 1,
            None => 1,
        };
        let item = Item {
            key: key.to_owned(),
            value,
            to: to.clone(),
            owner: crate::Owner {
                kind: publisher.0,
                name: publisher.1,
                uid,
                component: self.component.clone(),
            },
            revision,
        };
        self.world.items.insert(key.to_owned(), item);
        Ok(())
    }

    pub fn unpublish(&mut self, key: &str) -> Result<(), NimbusError> {
        self.nimbus_failure()?;
        let publisher = self.publisher("nimbus::unpublish")?;
        check_key(key)?;
        self.check_owner(key, &publisher)?;
        self.world.items.remove(key);
        // Withdrawn: no agent's report counts it any more.
        self.world.reports.retain(|(k, _), _| k != key);
        Ok(())
    }

    pub fn published(&mut self, prefix: &str) -> Result<Vec<String>, NimbusError> {
        self.nimbus_failure()?;
        let (kind, name) = self.publisher("nimbus::published")?;
        Ok(self
            .world
            .items
            .values()
            .filter(|i| i.key.starts_with(prefix) && i.owner.kind == kind && i.owner.name == name)
            .map(|i| i.key.clone())
            .collect())
    }

    /// Every agent's reports on the primary's items under `prefix`, or only `agent`'s.
    pub fn statuses(
        &mut self,
        prefix: &str,
        agent: Option<&str>,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        self.nimbus_failure()?;
        let (kind, name) = self.publisher(match agent {
            None => "nimbus::statuses",
            Some(_) => "nimbus::agent_statuses",
        })?;
        let items = &self.world.items;
        Ok(self
            .world
            .reports
            .values()
            .filter(|r| r.key.starts_with(prefix))
            .filter(|r| agent.is_none_or(|agent| r.agent == agent))
            .filter(|r| {
                items
                    .get(&r.key)
                    .is_some_and(|i| i.owner.kind == kind && i.owner.name == name)
            })
            .cloned()
            .collect())
    }
}

//! The fake host applies the host's rules to what a callback does.

use super::{FakeHost, object};
use crate::nimbus::NimbusError;
use crate::store::StoreError;
use crate::{Action, Error, Info, Object, Reactor, Target, config, nimbus, store};
use serde_json::json;

/// Applies `Child/<name>-child`, publishes `own/<name>`, sets status from the config.
struct Parent;

impl Reactor for Parent {
    fn describe() -> Info {
        Info::new("parent", ["Parent"]).owns("Child")
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        let child = object(
            "Child",
            &format!("{}-child", obj.name),
            json!({"of": obj.name}),
        );
        store::apply(&child)?;
        nimbus::publish(&format!("own/{}", obj.name), &json!(1), &Target::all())?;
        let greeting: Option<String> = config::get()?;
        crate::info!("parent {} greets {greeting:?}", obj.name);
        store::set_status(&json!({"greeting": greeting}))?;
        let spec: serde_json::Value = obj.spec()?;
        if spec.get("fail").is_some() {
            return Err(Error::retry("asked to fail"));
        }
        Ok(Action::Done)
    }

    fn on_delete(_obj: Object) -> Result<Action, Error> {
        Ok(Action::Done)
    }
}

/// Writes what its spec says, to see the fake refuse it.
struct Writer;

impl Reactor for Writer {
    fn describe() -> Info {
        Info::new("writer", ["Writer"])
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        let spec: serde_json::Value = obj.spec()?;
        if let Some(key) = spec.get("publish").and_then(|k| k.as_str()) {
            nimbus::publish(key, &json!(true), &Target::all())?;
        }
        if let Some(name) = spec.get("apply").and_then(|k| k.as_str()) {
            store::apply(&object("Child", name, json!({})))?;
        }
        if let Some(name) = spec.get("delete").and_then(|k| k.as_str()) {
            store::delete("Child", name)?;
        }
        Ok(Action::Done)
    }
}

#[test]
fn a_callback_owns_what_it_applies_and_publishes_and_sets_its_status() {
    let mut host = FakeHost::new("parent-component");
    host.set_config("hello");
    assert_eq!(
        host.on_create::<Parent>(object("Parent", "p", json!({}))),
        Ok(Action::Done)
    );
    let child = host.get("Child", "p-child").expect("child applied");
    let owner = child.owner().expect("child owned");
    let parent_uid = host.get("Parent", "p").and_then(|o| o.meta).map(|m| m.uid);
    assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("Parent", "p"));
    assert_eq!(Some(owner.uid.clone()), parent_uid);
    assert_eq!(owner.component, "parent-component");
    let item = host.item("own/p").expect("item published");
    assert_eq!((item.value, item.to), (json!(1), Target::all()));
    assert_eq!(
        host.status("Parent", "p"),
        Some(json!({"greeting": "hello"}))
    );
    let logs: Vec<String> = host.logs().into_iter().map(|l| l.message).collect();
    assert_eq!(logs, vec!["parent p greets Some(\"hello\")".to_owned()]);
}

#[test]
fn a_failed_callback_leaves_none_of_its_writes() {
    let mut host = FakeHost::new("parent");
    let result = host.on_create::<Parent>(object("Parent", "p", json!({"fail": true})));
    assert_eq!(result, Err(Error::retry("asked to fail")));
    assert_eq!(host.get("Child", "p-child"), None);
    assert_eq!(host.item("own/p"), None);
    assert_eq!(host.status("Parent", "p"), None);
    assert!(host.get("Parent", "p").is_some(), "the user's apply stays");
}

#[test]
fn injected_failures_reach_the_next_calls_in_order() {
    let mut host = FakeHost::new("parent");
    host.fail_next_store(StoreError::Conflict("stale".into()));
    let result = host.on_create::<Parent>(object("Parent", "p", json!({})));
    assert_eq!(result, Err(Error::retry("store conflict: stale")));
    host.fail_next_nimbus(NimbusError::Denied("no".into()));
    let result = host.on_create::<Parent>(object("Parent", "p", json!({})));
    assert_eq!(result, Err(Error::permanent("nimbus denied: no")));
    assert_eq!(
        host.on_create::<Parent>(object("Parent", "p", json!({}))),
        Ok(Action::Done)
    );
}

#[test]
fn objects_and_items_of_others_are_refused() {
    let mut host = FakeHost::new("writer");
    host.put(object("Child", "users", json!({})));
    let refused = host.on_create::<Writer>(object("Writer", "a", json!({"apply": "users"})));
    assert!(
        matches!(&refused, Err(Error::Permanent(m)) if m.contains("not created by a reactor")),
        "{refused:?}"
    );
    let refused = host.on_create::<Writer>(object("Writer", "a", json!({"delete": "users"})));
    assert!(matches!(refused, Err(Error::Permanent(_))), "{refused:?}");
    assert!(host.get("Child", "users").is_some());

    assert_eq!(
        host.on_create::<Writer>(object("Writer", "a", json!({"publish": "k"}))),
        Ok(Action::Done)
    );
    let refused = host.on_create::<Writer>(object("Writer", "b", json!({"publish": "k"})));
    assert_eq!(
        refused,
        Err(Error::permanent(
            "nimbus denied: item k belongs to Writer/a"
        ))
    );
    let refused = host.on_create::<Writer>(object("Writer", "b", json!({"publish": "/bad"})));
    assert!(matches!(refused, Err(Error::Permanent(m)) if m.starts_with("invalid item")));
    let refused = host.on_create::<Writer>(object("Writer", "b", json!({"apply": "Bad_Name"})));
    assert!(matches!(refused, Err(Error::Permanent(m)) if m.contains("is invalid")));
}

#[test]
fn a_deleted_object_goes_with_its_children() {
    let mut host = FakeHost::new("parent");
    host.on_create::<Parent>(object("Parent", "p", json!({})))
        .expect("created");
    let stored = host.get("Parent", "p").expect("stored");
    assert_eq!(host.on_delete::<Parent>(stored), Ok(Action::Done));
    assert_eq!(host.get("Parent", "p"), None);
    assert_eq!(host.get("Child", "p-child"), None);
}

#[test]
fn writes_outside_a_callback_are_refused() {
    let host = FakeHost::new("any");
    let result = host.run(|| store::set_status(&json!({})));
    assert!(matches!(result, Err(Error::Permanent(m)) if m.contains("primary object")));
}

#[test]
#[should_panic(expected = "run the callback through reactor_sdk::testing::FakeHost")]
fn a_host_call_without_a_fake_says_how_to_install_one() {
    let _ = store::get("Parent", "p");
}

#[test]
fn each_thread_has_its_own_host() {
    let mut host = FakeHost::new("parent");
    host.on_create::<Parent>(object("Parent", "main", json!({})))
        .expect("created");
    let other = std::thread::spawn(|| {
        let mut host = FakeHost::new("parent");
        host.on_create::<Parent>(object("Parent", "other", json!({})))
            .expect("created");
        host.items().len()
    });
    assert_eq!(other.join().expect("thread"), 1);
    assert_eq!(host.items().len(), 1);
}

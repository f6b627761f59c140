//! The controller world: the [`Reactor`] trait, its adapter to the generated bindings,
//! and helpers on the WIT types.

use crate::JsonError;
use crate::bindings::exports::reactor::host::reactor as wit;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;

pub use crate::bindings::reactor::host::nimbus::Target;
pub use crate::bindings::reactor::host::types::{
    Action, Error, ItemState, ItemStatus, Meta, Object, Owner,
};
pub use wit::{Info, Reference, Selection, Watch};

/// The logic of a controller. Implement [`describe`](Reactor::describe); every callback
/// has a default that does nothing and succeeds, except `on_update`, which calls
/// `on_create` with the new object (level-triggered logic needs nothing else).
pub trait Reactor {
    /// Name, watched kinds, resync period and whether deletes must be seen. Called once per
    /// load; must not call the store or Nimbus.
    fn describe() -> Info;

    /// Admission: refuse an apply with a message for the user. Default: accept.
    fn validate(obj: Object) -> Result<(), String> {
        let _ = obj;
        Ok(())
    }

    /// An object the reactor has not handled yet. Default: done.
    fn on_create(obj: Object) -> Result<Action, Error> {
        let _ = obj;
        Ok(Action::Done)
    }

    /// An object that changed since the reactor last handled it. Default:
    /// `on_create(new)`.
    fn on_update(old: Object, new: Object) -> Result<Action, Error> {
        let _ = old;
        Self::on_create(new)
    }

    /// An object being deleted. Default: done.
    fn on_delete(obj: Object) -> Result<Action, Error> {
        let _ = obj;
        Ok(Action::Done)
    }

    /// An agent reported on an item `owner` published. Default: done.
    fn on_agent_status(owner: Object, status: ItemStatus) -> Result<Action, Error> {
        let _ = (owner, status);
        Ok(Action::Done)
    }
}

/// Connects a [`Reactor`] to the generated export bindings; used by [`export_reactor!`].
#[doc(hidden)]
pub struct Adapter<R>(PhantomData<R>);

impl<R: Reactor> wit::Guest for Adapter<R> {
    fn describe() -> Info {
        R::describe()
    }
    fn validate(obj: Object) -> Result<(), String> {
        R::validate(obj)
    }
    fn on_create(obj: Object) -> Result<Action, Error> {
        R::on_create(obj)
    }
    fn on_update(old: Object, new: Object) -> Result<Action, Error> {
        R::on_update(old, new)
    }
    fn on_delete(obj: Object) -> Result<Action, Error> {
        R::on_delete(obj)
    }
    fn on_agent_status(owner: Object, status: ItemStatus) -> Result<Action, Error> {
        R::on_agent_status(owner, status)
    }
}

/// Exports a [`Reactor`] implementation as the component's `reactor` interface.
///
/// Call it once, at the crate root of a `cdylib` built for `wasm32-wasip2`.
#[macro_export]
macro_rules! export_reactor {
    ($reactor:ty) => {
        #[doc(hidden)]
        type __ReactorSdkExport = $crate::__private::Adapter<$reactor>;
        $crate::bindings::__export_controller!(__ReactorSdkExport with_types_in $crate::bindings);
    };
}

impl Info {
    /// A reactor called `name` watching `kinds`, without resync, not handling deletes.
    pub fn new<K: Into<String>>(
        name: impl Into<String>,
        kinds: impl IntoIterator<Item = K>,
    ) -> Self {
        Info {
            name: name.into(),
            kinds: kinds.into_iter().map(Into::into).collect(),
            resync_period_ms: 0,
            handles_delete: false,
            watches: Vec::new(),
        }
    }

    /// Watches the children of `kind` this reactor applies through the store: a change by
    /// anyone else runs their owner again, and they are deleted when their owner goes.
    pub fn owns(mut self, kind: impl Into<String>) -> Self {
        self.watches.push(Watch::Owns(kind.into()));
        self
    }

    /// Watches objects of `kind` named by the field at `path` (e.g. `spec.plan`) of this
    /// reactor's objects: a change to one runs every object naming it again.
    pub fn references(mut self, kind: impl Into<String>, path: impl Into<String>) -> Self {
        self.watches.push(Watch::References(Reference {
            kind: kind.into(),
            path: path.into(),
        }));
        self
    }

    /// Watches objects of `kind` whose field at `path` (e.g. `spec.selector`) is a label
    /// selector over this reactor's objects: a change runs every matching object again.
    pub fn selects(mut self, kind: impl Into<String>, path: impl Into<String>) -> Self {
        self.watches.push(Watch::Selects(Selection {
            kind: kind.into(),
            path: path.into(),
        }));
        self
    }

    /// Runs every watched object again every `ms` milliseconds.
    pub fn resync_every_ms(mut self, ms: u64) -> Self {
        self.resync_period_ms = ms;
        self
    }

    /// Makes the host hold a finalizer so that `on_delete` is never missed.
    pub fn handles_delete(mut self) -> Self {
        self.handles_delete = true;
        self
    }
}

impl Object {
    /// The spec as a `T`.
    pub fn spec<T: DeserializeOwned>(&self) -> Result<T, JsonError> {
        crate::json::read(format!("spec of {}/{}", self.kind, self.name), &self.spec)
    }

    /// The status as a `T`; `Ok(None)` when the object has none.
    pub fn status<T: DeserializeOwned>(&self) -> Result<Option<T>, JsonError> {
        self.status
            .as_deref()
            .map(|text| crate::json::read(format!("status of {}/{}", self.kind, self.name), text))
            .transpose()
    }

    /// The object that owns this one (the primary object whose callback applied it), if any.
    pub fn owner(&self) -> Option<&Owner> {
        self.meta.as_ref().and_then(|m| m.owner.as_ref())
    }

    /// The value of label `name`, if set.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The object's generation (0 for an object not read from the store).
    pub fn generation(&self) -> u64 {
        self.meta.as_ref().map_or(0, |m| m.generation)
    }
}

impl Action {
    /// Run the object again after `ms` milliseconds.
    pub fn requeue_after_ms(ms: u64) -> Self {
        Action::RequeueAfter(ms)
    }
}

impl Error {
    /// A transient failure; the host retries with backoff.
    pub fn retry(message: impl std::fmt::Display) -> Self {
        Error::Retry(message.to_string())
    }

    /// A failure retrying cannot fix.
    pub fn permanent(message: impl std::fmt::Display) -> Self {
        Error::Permanent(message.to_string())
    }
}

/// An unreadable spec or status is the user's to fix: not worth retrying.
impl From<JsonError> for Error {
    fn from(e: JsonError) -> Self {
        Error::Permanent(e.to_string())
    }
}

impl Target {
    /// The agents whose labels include every pair (empty: every agent).
    pub fn labels<'a, I, K, V>(selector: I) -> Self
    where
        I: IntoIterator<Item = (&'a K, &'a V)>,
        K: AsRef<str> + 'a + ?Sized,
        V: AsRef<str> + 'a + ?Sized,
    {
        Target::Labels(
            selector
                .into_iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
                .collect(),
        )
    }

    /// Every agent.
    pub fn all() -> Self {
        Target::Labels(Vec::new())
    }

    /// These agents, by id.
    pub fn agents<S: Into<String>>(ids: impl IntoIterator<Item = S>) -> Self {
        Target::Agents(ids.into_iter().map(Into::into).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn object(spec: &str, status: Option<&str>) -> Object {
        Object {
            kind: "Policy".into(),
            name: "web".into(),
            labels: vec![("app".into(), "web".into())],
            spec: spec.into(),
            status: status.map(Into::into),
            meta: None,
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Spec {
        rules: Vec<String>,
    }

    #[test]
    fn spec_and_status_read_as_serde_types() {
        let obj = object(r#"{"rules":["a"]}"#, Some(r#"{"rules":[]}"#));
        assert_eq!(
            obj.spec::<Spec>(),
            Ok(Spec {
                rules: vec!["a".into()]
            })
        );
        assert_eq!(obj.status::<Spec>(), Ok(Some(Spec { rules: vec![] })));
        assert_eq!(object("{}", None).status::<Spec>(), Ok(None));
        assert_eq!(obj.label("app"), Some("web"));
        assert_eq!(obj.label("tier"), None);
        assert_eq!(obj.generation(), 0);
    }

    #[test]
    fn an_unreadable_spec_is_a_permanent_error_naming_the_object() {
        let err: Error = object(r#"{"rules":"a"}"#, None)
            .spec::<Spec>()
            .expect_err("bad spec")
            .into();
        match err {
            Error::Permanent(message) => assert!(
                message.starts_with("invalid spec of Policy/web: "),
                "{message}"
            ),
            Error::Retry(message) => panic!("should not be retried: {message}"),
        }
    }

    #[test]
    fn builders_fill_the_wit_records() {
        let info = Info::new("policy-rust", ["Policy"])
            .resync_every_ms(60_000)
            .handles_delete();
        assert_eq!(info.kinds, vec!["Policy".to_owned()]);
        assert_eq!((info.resync_period_ms, info.handles_delete), (60_000, true));
        let selector = std::collections::BTreeMap::from([("app", "web")]);
        assert!(
            matches!(Target::labels(&selector), Target::Labels(l) if l == vec![("app".to_owned(), "web".to_owned())])
        );
        assert!(matches!(Target::all(), Target::Labels(l) if l.is_empty()));
        assert!(matches!(Target::agents(["a1"]), Target::Agents(a) if a == vec!["a1".to_owned()]));
        assert_eq!(Action::requeue_after_ms(5), Action::RequeueAfter(5));
    }

    #[test]
    fn store_and_nimbus_errors_map_to_retry_or_permanent() {
        use crate::nimbus::NimbusError;
        use crate::store::StoreError;
        assert!(matches!(
            Error::from(StoreError::Unavailable("x".into())),
            Error::Retry(_)
        ));
        assert!(matches!(
            Error::from(StoreError::Conflict("x".into())),
            Error::Retry(_)
        ));
        assert!(matches!(
            Error::from(StoreError::Invalid("x".into())),
            Error::Permanent(_)
        ));
        assert!(matches!(
            Error::from(NimbusError::Unavailable("x".into())),
            Error::Retry(_)
        ));
        assert!(matches!(
            Error::from(NimbusError::Denied("x".into())),
            Error::Permanent(_)
        ));
    }
}

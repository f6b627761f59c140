//! The descriptor world: the [`Descriptor`] trait and its adapter to the generated
//! bindings.

use crate::bindings::exports::reactor::host::kv_descriptor as wit;
use std::marker::PhantomData;

pub use wit::{Dependency, DependencyTarget, Info, Kv, Origin, Retrieved};

/// How one family of keys is applied to an agent's southbound. Implement
/// [`describe`](Descriptor::describe), [`create`](Descriptor::create),
/// [`delete`](Descriptor::delete) and usually [`retrieve`](Descriptor::retrieve); the
/// rest have defaults.
pub trait Descriptor {
    /// Name, key prefix and retrieve dependencies. Called once per load.
    fn describe() -> Info;

    /// Refuses an invalid value. Default: accept.
    fn validate(key: String, value: String) -> Result<(), String> {
        let _ = (key, value);
        Ok(())
    }

    /// Applies a new value; returns metadata to keep for the key. Default: nothing
    /// applied, no metadata.
    fn create(key: String, value: String) -> Result<Option<String>, String> {
        let _ = (key, value);
        Ok(None)
    }

    /// Changes an applied value. Default: `create(key, new_value)`.
    fn update(
        key: String,
        old_value: String,
        new_value: String,
        metadata: Option<String>,
    ) -> Result<Option<String>, String> {
        let _ = (old_value, metadata);
        Self::create(key, new_value)
    }

    /// Whether a change needs delete and re-create. Default: no.
    fn update_with_recreate(
        key: String,
        old_value: String,
        new_value: String,
        metadata: Option<String>,
    ) -> bool {
        let _ = (key, old_value, new_value, metadata);
        false
    }

    /// Removes an applied value. Default: nothing to remove.
    fn delete(key: String, value: String, metadata: Option<String>) -> Result<(), String> {
        let _ = (key, value, metadata);
        Ok(())
    }

    /// Reads what is applied in the southbound. Default: trusts the scheduler (returns
    /// `correlate` as configured by it), which disables drift detection.
    fn retrieve(correlate: Vec<Kv>) -> Result<Vec<Retrieved>, String> {
        Ok(correlate
            .into_iter()
            .map(|kv| Retrieved {
                key: kv.key,
                value: kv.value,
                metadata: None,
                origin: Origin::FromNorthbound,
            })
            .collect())
    }

    /// Dependencies of a value. Default: none.
    fn dependencies(key: String, value: String) -> Vec<Dependency> {
        let _ = (key, value);
        Vec::new()
    }

    /// Values derived from a value. Default: none.
    fn derived_values(key: String, value: String) -> Vec<Kv> {
        let _ = (key, value);
        Vec::new()
    }

    /// Whether an error this descriptor returned is worth retrying. Default: yes.
    fn is_retriable(error: String) -> bool {
        let _ = error;
        true
    }
}

/// Connects a [`Descriptor`] to the generated export bindings; used by
/// `export_descriptor!`.
#[doc(hidden)]
pub struct Adapter<D>(PhantomData<D>);

impl<D: Descriptor> wit::Guest for Adapter<D> {
    fn describe() -> Info {
        D::describe()
    }
    fn validate(key: String, value: String) -> Result<(), String> {
        D::validate(key, value)
    }
    fn create(key: String, value: String) -> Result<Option<String>, String> {
        D::create(key, value)
    }
    fn update(
        key: String,
        old_value: String,
        new_value: String,
        metadata: Option<String>,
    ) -> Result<Option<String>, String> {
        D::update(key, old_value, new_value, metadata)
    }
    fn update_with_recreate(
        key: String,
        old_value: String,
        new_value: String,
        metadata: Option<String>,
    ) -> bool {
        D::update_with_recreate(key, old_value, new_value, metadata)
    }
    fn delete(key: String, value: String, metadata: Option<String>) -> Result<(), String> {
        D::delete(key, value, metadata)
    }
    fn retrieve(correlate: Vec<Kv>) -> Result<Vec<Retrieved>, String> {
        D::retrieve(correlate)
    }
    fn dependencies(key: String, value: String) -> Vec<Dependency> {
        D::dependencies(key, value)
    }
    fn derived_values(key: String, value: String) -> Vec<Kv> {
        D::derived_values(key, value)
    }
    fn is_retriable(error: String) -> bool {
        D::is_retriable(error)
    }
}

/// Exports a [`Descriptor`] implementation as the component's `descriptor` interface.
#[macro_export]
macro_rules! export_descriptor {
    ($descriptor:ty) => {
        #[doc(hidden)]
        type __DescriptorSdkExport = $crate::__private::DescriptorAdapter<$descriptor>;
        $crate::bindings::__export_descriptor!(__DescriptorSdkExport with_types_in $crate::bindings);
    };
}

impl Info {
    /// A descriptor called `name` for keys under `key_prefix`.
    pub fn new(name: impl Into<String>, key_prefix: impl Into<String>) -> Self {
        Info {
            name: name.into(),
            key_prefix: key_prefix.into(),
            retrieve_dependencies: Vec::new(),
        }
    }
}

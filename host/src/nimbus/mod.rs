//! Nimbus on the server: items that reactors publish for agents, kept durably in the store as
//! objects of the reserved kind `NimbusItem`, owned by the object whose callback published
//! them, so agents get the current set by list + watch and an owner's delete withdraws them.

mod items;

pub use items::{
    Item, ItemTarget, NimbusError, Owner, items_of, publish, unpublish, unpublish_all,
};

/// The kind under which items are stored.
pub const ITEM_KIND: &str = "NimbusItem";

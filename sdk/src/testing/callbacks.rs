//! A reactor's callbacks run through the [`FakeHost`], as the host would call them: the
//! object is stored first (as a user's apply), becomes the primary object of the call, and
//! the callback's writes stay only when it succeeds.

use super::FakeHost;
use super::current;
use crate::{Action, Error, Info, ItemStatus, Object, Reactor};

impl FakeHost {
    /// What `R` describes.
    pub fn describe<R: Reactor>(&self) -> Info {
        self.run(R::describe)
    }

    /// `R`'s admission of `obj`; nothing is stored.
    pub fn validate<R: Reactor>(&self, obj: Object) -> Result<(), String> {
        self.run(|| R::validate(obj))
    }

    /// Stores `obj` (as a user's apply) and runs `R::on_create` on it.
    pub fn on_create<R: Reactor>(&mut self, obj: Object) -> Result<Action, Error> {
        let stored = self.put(obj);
        self.callback(&stored, || R::on_create(stored.clone()))
    }

    /// Stores `new` (as a user's change of `old`) and runs `R::on_update(old, new)`.
    pub fn on_update<R: Reactor>(&mut self, old: Object, new: Object) -> Result<Action, Error> {
        let stored = self.put(new);
        self.callback(&stored, || R::on_update(old, stored.clone()))
    }

    /// Marks `obj` deleting (storing it first if it is not stored) and runs `R::on_delete`;
    /// when that returns `Done` the object goes, with the children it owns, as the host
    /// removes them.
    pub fn on_delete<R: Reactor>(&mut self, obj: Object) -> Result<Action, Error> {
        let mut stored = match self.get(&obj.kind, &obj.name) {
            Some(stored) => stored,
            None => self.put(obj),
        };
        if let Some(meta) = stored.meta.as_mut() {
            meta.deleting = true;
        }
        self.state
            .borrow_mut()
            .world
            .objects
            .insert((stored.kind.clone(), stored.name.clone()), stored.clone());
        let result = self.callback(&stored, || R::on_delete(stored.clone()));
        if result == Ok(Action::Done) {
            (self.state.borrow_mut().world).remove_with_children(&stored.kind, &stored.name);
        }
        result
    }

    /// Records `status` as the agent's report (see [`report`](FakeHost::report)) and runs
    /// `R::on_agent_status(owner, status)` with `owner` stored as the primary object.
    pub fn on_agent_status<R: Reactor>(
        &mut self,
        owner: Object,
        status: ItemStatus,
    ) -> Result<Action, Error> {
        let stored = self.put(owner);
        self.report(status.clone());
        self.callback(&stored, || R::on_agent_status(stored.clone(), status))
    }

    /// Runs `f` as a callback of `primary`: its writes are kept only when it succeeds.
    fn callback(
        &mut self,
        primary: &Object,
        f: impl FnOnce() -> Result<Action, Error>,
    ) -> Result<Action, Error> {
        let before = {
            let mut state = self.state.borrow_mut();
            state.primary = Some((primary.kind.clone(), primary.name.clone()));
            state.world.clone()
        };
        let result = {
            let _installed = current::install(self.state.clone());
            f()
        };
        let mut state = self.state.borrow_mut();
        state.primary = None;
        if result.is_err() {
            state.world = before;
        }
        result
    }
}

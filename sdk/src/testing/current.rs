//! The fake host installed on this thread while a callback runs through [`super::FakeHost`].

use super::state::State;
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    static CURRENT: RefCell<Option<Rc<RefCell<State>>>> = const { RefCell::new(None) };
}

/// Keeps a fake installed on this thread until dropped, even when the callback panics.
pub(crate) struct Installed {
    previous: Option<Rc<RefCell<State>>>,
}

/// Installs `state` as this thread's host.
pub(crate) fn install(state: Rc<RefCell<State>>) -> Installed {
    let previous = CURRENT.with(|current| current.borrow_mut().replace(state));
    Installed { previous }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|current| *current.borrow_mut() = previous);
    }
}

/// The installed fake, if any.
pub(crate) fn installed() -> Option<Rc<RefCell<State>>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Runs `f` on the installed fake. Outside one a host call has nothing to answer it: the
/// test is told how to install one (a panic, which fails only that test).
pub(crate) fn with<T>(call: &str, f: impl FnOnce(&mut State) -> T) -> T {
    let Some(state) = installed() else {
        panic!(
            "reactor_sdk: {call} called with no host: outside wasm32, run the callback through \
             reactor_sdk::testing::FakeHost (e.g. host.on_create::<MyReactor>(obj))"
        );
    };
    let mut state = state.borrow_mut();
    f(&mut state)
}

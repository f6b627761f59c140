//! Revert mode, as Ligato's: after the first failure (and a refresh of the failed value),
//! every value the transaction requested so far is put back, newest first, to what was
//! wanted before, by real operations from what the southbound holds now.

use super::api::{Key, Value};
use super::executor::Executor;

/// Re-applies the values wanted before a failed revert-mode transaction; the operations
/// are recorded as reverts.
pub async fn revert(executor: &mut Executor<'_>, processed: Vec<(Key, Option<Value>)>) {
    executor.reverting = true;
    for (key, before) in processed.into_iter().rev() {
        executor.set_wanted(key, before, None).await;
    }
}

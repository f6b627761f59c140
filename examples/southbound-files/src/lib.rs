//! The folder logic the example descriptors share: a folder stands for a device, each value is a JSON file in it.
//!
//! A descriptor crate describes its keys as a [`Family`] and exports
//! `reactor_sdk::export_descriptor!(Files<MyFamily>)`; [`Files`] does the rest.
//!
//! # Files
//!
//! The agent preopens `<southbound>/<descriptor-name>/` as the component's `/`, its only
//! capability. The key `<prefix><a>/<b>/…/<z>` is the file `/<a>/<b>/…/<z>.json`: every `/`
//! after the prefix is a folder, so `vpp/interface/address/lender/10.0.0.1/24` is
//! `/lender/10.0.0.1/24.json` in `vpp-address/`. A key part must not be empty, `.` or `..`,
//! start with `.`, end with `.json`, hold a control character or `\`, or be longer than 200
//! bytes; such keys are refused by `validate` (and by create, update and delete).
//!
//! - `create` and `update` write the value, pretty-printed, through a temporary file and a
//!   rename (parent folders created; an existing file is replaced, so a stale one does not
//!   wedge the value). Metadata: the file's path.
//! - `delete` removes the file and the folders it empties; a file already gone is fine.
//! - `retrieve` lists every `*.json` below `/` whose path is a key of the family (names
//!   starting with `.` are skipped), origin from-northbound, or from-southbound for a
//!   family owned by the southbound ([`Owner::Southbound`], whose create, update and delete
//!   refuse). Content that is not JSON is reported as a JSON string, so it differs from
//!   the wanted value and resync rewrites it. A file removed or edited behind the agent's
//!   back is therefore drift that `resync` (retrieve, diff, repair) heals.
//!
//! # Failure injection
//!
//! As a real device that is busy or broken: a file `/.fail/<path of the value file>` (so
//! `<southbound>/vpp-interface/.fail/my-tap.json` for `vpp/interface/my-tap`) holding
//! `[busy|fatal] [COUNT]` makes the next COUNT creates or updates of that value fail
//! (deletes are not affected):
//!
//! | content | the next create/update fails with | retriable |
//! |---|---|---|
//! | empty, `busy`, `1`, `busy 1` | `busy: <key>: injected failure from /.fail/…, 0 more to come` | yes |
//! | `3`, `busy 3` | the same, three times | yes |
//! | `fatal`, `fatal 2` | `fatal: <key>: injected failure from /.fail/…` (once, twice) | no |
//!
//! Each failure decrements the count in the file, and the file is removed when it reaches
//! zero. Other content fails the operation with a `fatal:` error naming the file.
//!
//! # Errors
//!
//! One line, naming the key: `<key>: <what>` from `validate`; from operations, `fatal: <key>:
//! …` when a retry cannot help (a bad key, a refused operation, an injected fatal failure)
//! and otherwise (`busy: …`, an I/O error) retriable: `is-retriable` is false exactly for
//! errors starting with `fatal: `.

mod device;
mod family;
mod key;
pub mod value;

pub use device::{Device, DeviceError, FAIL_DIR, Injected};
pub use family::{FATAL, Family, Files, Owner, any_of, on_key};
pub use key::{Key, Parts, bad_part, check_path};

//! The documentation (README.md and the mdBook site of docs/): its internal links lead
//! somewhere, and the getting-started page's examples run as printed.

mod getting_started;
mod links;
mod markdown;

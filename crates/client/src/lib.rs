//! The HTTP API's client (reqwest), the API token file and the client file (a kubeconfig).

mod client;
pub mod kubeconfig;
mod trust;
pub use trust::fetch_ca_unverified;
pub mod token;

pub use client::*;

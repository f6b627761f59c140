//! The HTTP API's client (reqwest) and the API token file.

mod client;
pub mod token;

pub use client::*;

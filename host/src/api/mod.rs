//! The HTTP API under `/v1`: the server, its client, and the JSON bodies they exchange.

pub mod client;
pub mod server;
pub mod token;
pub mod wire;

pub use client::{Client, ClientError};
pub use server::{ServeError, Server, ServerConfig};

//! The HTTP API under `/v1`: the server, its client, and the JSON bodies they exchange.

pub use reactor_client as client;
pub use reactor_client::token;
pub use reactor_client::{Client, ClientError};
pub use reactor_core::wire;
pub use reactor_server as server;
pub use reactor_server::{ServeError, Server, ServerConfig};

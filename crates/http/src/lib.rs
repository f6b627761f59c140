//! The HTTP plumbing the server and the agent share: the TLS listener, JSON bodies and path
//! parameters read in the API's error shape, and errors answered as HTTP.

mod body;
mod error;
mod listen;
mod path;

pub use body::{JsonBody, parse, refused};
pub use error::{ApiError, code_of};
pub use listen::TlsListener;
pub use path::Path;

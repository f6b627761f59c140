//! Errors of the runtime: loading components, calling them, reading its config.

use std::path::PathBuf;

/// Why the runtime could not load a component, apply its config or serve a call.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RuntimeError {
    /// The wasm file could not be read.
    #[error("read {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The file is a core wasm module, not a component.
    #[error("{path} is a core wasm module, not a component (build it for wasm32-wasip2)")]
    CoreModule {
        /// The file.
        path: PathBuf,
    },
    /// Compilation failed: truncated or invalid wasm.
    #[error("compile {path}: {message}")]
    Compile {
        /// The file.
        path: PathBuf,
        /// What the compiler said.
        message: String,
    },
    /// The component targets another world than the one expected in its folder.
    #[error("{path} is {found}, expected a {expected} component")]
    WrongWorld {
        /// The file.
        path: PathBuf,
        /// What it is, e.g. `a descriptor component` or `a component exporting neither world`.
        found: String,
        /// The expected world.
        expected: crate::World,
    },
    /// The component imports something its world does not offer.
    #[error("link {path}: {message}")]
    Link {
        /// The file.
        path: PathBuf,
        /// What the linker said.
        message: String,
    },
    /// A reactor declared one of the host's own kinds as its own or as watched.
    #[error(
        "{name} declares kind {kind}, which is reserved to the host (reactors reach items and reports through the nimbus import)"
    )]
    ReservedKind {
        /// The component.
        name: String,
        /// The reserved kind.
        kind: String,
    },
    /// `describe()` failed (trap, deadline, memory cap).
    #[error("describe {name}: {source}")]
    Describe {
        /// The component.
        name: String,
        /// How the call failed.
        source: CallError,
    },
    /// A granted folder could not be opened.
    #[error("grant {path} to {name}: {message}")]
    Grant {
        /// The component.
        name: String,
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The config file could not be read or parsed.
    #[error("config {path}: {message}")]
    Config {
        /// The config file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The engine could not be set up.
    #[error("engine: {0}")]
    Engine(String),
    /// The components folder could not be watched or written.
    #[error("watch {path}: {message}")]
    Watch {
        /// The folder.
        path: PathBuf,
        /// The notify or I/O error.
        message: String,
    },
    /// A rollback could not be made.
    #[error("cannot roll {name} back: {message}")]
    RollBack {
        /// The component.
        name: String,
        /// Why.
        message: String,
    },
    /// The file's version was rolled back and no other version can serve instead.
    #[error(
        "version {version} of {name} was rolled back ({reason}) and {why}: nothing serves {name} until another file arrives or the rollback is cleared (reactor-host components clear-rollback {name})"
    )]
    RolledBack {
        /// The component.
        name: String,
        /// The version rolled back, as `components` shows it.
        version: String,
        /// Why it was rolled back.
        reason: String,
        /// Why no other version serves.
        why: String,
    },
    /// The trust policy refused the component's bytes (see [`crate::Admission`]).
    #[error("{name} not loaded: {reason}")]
    Untrusted {
        /// The component.
        name: String,
        /// Why it is not trusted.
        reason: String,
    },
    /// The component's `reactor-permissions` declaration could not be read.
    #[error("{path}: {message}")]
    Declaration {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// `describe()` named a secondary watch its declaration does not.
    #[error(
        "{name} watches kind {kind}, which its reactor-permissions declaration does not list in watches"
    )]
    UndeclaredWatch {
        /// The component.
        name: String,
        /// The watched kind.
        kind: String,
    },
    /// An approval was asked for a component with no version waiting.
    #[error("component {0} has no version waiting for approval")]
    NothingWaiting(String),
    /// A promotion was asked for a component with no version running as a shadow.
    #[error("component {0} has no version running as a shadow")]
    NoShadow(String),
    /// A component name that cannot be a file name.
    #[error("invalid component name {0:?}: use letters, digits, '-' and '_'")]
    InvalidName(String),
}

/// Why a call into a component did not return a value.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CallError {
    /// No component of that name is loaded (or it was detached).
    #[error("component {0} is not loaded")]
    NotLoaded(String),
    /// The component is of the other world.
    #[error("component {name} is a {world} component")]
    WrongWorld {
        /// The component.
        name: String,
        /// Its world.
        world: crate::World,
    },
    /// The call ran past its deadline and was stopped.
    #[error("call stopped at its deadline of {0} ms")]
    Deadline(u64),
    /// The guest tried to grow a memory past its cap and was stopped.
    #[error("guest stopped at its memory cap of {0} bytes")]
    MemoryCap(u64),
    /// The guest trapped (a panic, an unreachable, an out-of-bounds access).
    #[error("guest trapped: {0}")]
    Trap(String),
    /// A fresh instance could not be created.
    #[error("instantiate: {0}")]
    Instantiate(String),
}

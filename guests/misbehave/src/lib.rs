//! A reactor whose `on-create` does what the object's `spec.do` asks: the sandbox tests
//! drive it (see guests/README.md for the contract).

use reactor_sdk::{Action, Error, Info, Object, Reactor, export_reactor, store};
use serde::Deserialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// Calls handled by this instance: 1 again after the host replaced a trapped instance.
static CALLS: AtomicU64 = AtomicU64::new(0);

#[derive(Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
enum Order {
    /// Count the call and report the count.
    Count,
    /// Loop forever.
    Loop,
    /// Allocate 1 MiB blocks forever, touching each.
    Alloc,
    /// Panic (a trap).
    Panic,
    /// Read a file and report its length.
    ReadFile { path: String },
    /// Create a file with some text.
    WriteFile { path: String, text: String },
    /// Open a TCP connection.
    Connect { addr: String },
    /// Print to stdout and stderr.
    Print { text: String },
    /// Sleep (a WASI clock wait, which yields to the host), then report.
    Sleep { ms: u64 },
    /// Apply an object of `kind`/`name` through the store import.
    Write { kind: String, name: String },
    /// Delete `kind`/`name` through the store import.
    Remove { kind: String, name: String },
    /// List the objects of `kind` through the store import.
    Read { kind: String },
}

/// The component config: which kinds to declare (default `Chaos`).
#[derive(Deserialize)]
struct Config {
    kinds: Vec<String>,
}

struct Misbehave;

impl Reactor for Misbehave {
    fn describe() -> Info {
        match reactor_sdk::config::get::<Config>() {
            Ok(Some(config)) => Info::new("misbehave", config.kinds),
            _ => Info::new("misbehave", ["Chaos"]),
        }
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        let order: Order = obj.spec()?;
        let outcome = match order {
            Order::Count => serde_json::json!({"calls": calls}),
            Order::Loop => {
                let mut i: u64 = 0;
                loop {
                    i = std::hint::black_box(i.wrapping_add(1));
                }
            }
            Order::Alloc => {
                let mut blocks: Vec<Vec<u8>> = Vec::new();
                loop {
                    blocks.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&blocks);
                }
            }
            Order::Panic => panic!("misbehave was asked to panic"),
            Order::ReadFile { path } => match std::fs::read(&path) {
                Ok(bytes) => serde_json::json!({"calls": calls, "read": bytes.len()}),
                Err(e) => return Err(Error::permanent(format!("read {path}: {e}"))),
            },
            Order::WriteFile { path, text } => match std::fs::write(&path, text) {
                Ok(()) => serde_json::json!({"calls": calls, "wrote": path}),
                Err(e) => return Err(Error::permanent(format!("write {path}: {e}"))),
            },
            Order::Connect { addr } => match std::net::TcpStream::connect(&addr) {
                Ok(_) => serde_json::json!({"calls": calls, "connected": addr}),
                Err(e) => return Err(Error::permanent(format!("connect {addr}: {e}"))),
            },
            Order::Sleep { ms } => {
                std::thread::sleep(std::time::Duration::from_millis(ms));
                serde_json::json!({"calls": calls, "slept": ms})
            }
            Order::Write { kind, name } => {
                let object = Object {
                    kind: kind.clone(),
                    name: name.clone(),
                    labels: Vec::new(),
                    spec: "{\"forged\": true}".into(),
                    status: None,
                    meta: None,
                };
                store::apply(&object).map_err(|e| Error::permanent(format!("{e:?}")))?;
                serde_json::json!({"calls": calls, "wrote": format!("{kind}/{name}")})
            }
            Order::Remove { kind, name } => {
                store::delete(&kind, &name).map_err(|e| Error::permanent(format!("{e:?}")))?;
                serde_json::json!({"calls": calls, "removed": format!("{kind}/{name}")})
            }
            Order::Read { kind } => {
                let found = store::list(&kind, &[]).map_err(|e| Error::permanent(format!("{e:?}")))?;
                serde_json::json!({"calls": calls, "read": found.len()})
            }
            Order::Print { text } => {
                println!("{text} (stdout)");
                eprintln!("{text} (stderr)");
                serde_json::json!({"calls": calls, "printed": text})
            }
        };
        store::set_status(&outcome)?;
        Ok(Action::Done)
    }
}

export_reactor!(Misbehave);

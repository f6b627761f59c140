//! Guest stdout, stderr and `log` calls reach the host's tracing under the component's
//! name.

use reactor_host::runtime::{Action, Runtime, RuntimeConfig, World};
use reactor_testkit::{RecordingHost, eventually_async, guest, object};
use serde_json::json;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// One `guest` event: component, stream (or empty for `log` calls), level, message.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    component: String,
    stream: String,
    level: tracing::Level,
    message: String,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Line>>>);

/// The capture of every `guest` event of this test binary, on every thread: installed once
/// as the process's subscriber, so no call site's interest depends on which thread or test
/// registered it first (a thread-local subscriber missed lines a call site had cached "no
/// interest" for while another test logged through it). Tests tell their lines apart by
/// component names no other test uses.
fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(capture.clone()),
        )
        .expect("no other test of this binary sets the global subscriber");
        capture
    })
}

#[derive(Default)]
struct Fields {
    component: String,
    stream: String,
    message: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "component" => self.component = value.to_owned(),
            "stream" => self.stream = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "guest" {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0.lock().expect("capture lock").push(Line {
            component: fields.component,
            stream: fields.stream,
            level: *event.metadata().level(),
            message: fields.message,
        });
    }
}

#[tokio::test(flavor = "current_thread")]
async fn guest_output_and_logs_go_to_tracing_with_the_component_name() {
    let capture = capture();

    let dir = tempfile::tempdir().expect("temp dir");
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = host.clone();
    let runtime = Runtime::new(config).expect("runtime");
    let components = dir.path().join("components");
    runtime
        .install(
            &components,
            World::Controller,
            "chaos-logged",
            &guest("misbehave"),
        )
        .await
        .expect("load");
    runtime
        .install(
            &components,
            World::Controller,
            "echo-logged",
            &guest("version-2"),
        )
        .await
        .expect("load");

    let printed = runtime
        .controller("chaos-logged")
        .on_create(&object(
            "Chaos",
            "x",
            json!({"do": "print", "text": "hello"}),
        ))
        .await;
    assert_eq!(printed, Ok(Ok(Action::Done)));
    let logged = runtime
        .controller("echo-logged")
        .on_create(&object("Echo", "e", json!({})))
        .await;
    assert_eq!(logged, Ok(Ok(Action::Done)));

    let expected = [
        Line {
            component: "chaos-logged".into(),
            stream: "stdout".into(),
            level: tracing::Level::INFO,
            message: "hello (stdout)".into(),
        },
        Line {
            component: "chaos-logged".into(),
            stream: "stderr".into(),
            level: tracing::Level::WARN,
            message: "hello (stderr)".into(),
        },
        Line {
            component: "echo-logged".into(),
            stream: String::new(),
            level: tracing::Level::INFO,
            message: "version-2 handling Echo/e".into(),
        },
    ];
    eventually_async(
        "the guest's lines in tracing",
        Duration::from_secs(10),
        || {
            let lines = capture.0.lock().expect("capture lock").clone();
            expected
                .iter()
                .all(|line| lines.contains(line))
                .then_some(())
        },
    )
    .await;
}

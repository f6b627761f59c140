//! `reactor-host audit`: the server's audit log, newest last: who changed what, who was refused.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use clap::Args;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The newest entries at most.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// table, json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
}

pub async fn run(args: AuditArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let entries = global.client()?.audit(args.limit).await.map_err(explain)?;
    if let Some(text) = args.output.render(&entries)? {
        print!("{text}");
        return Ok(());
    }
    let field = |e: &serde_json::Value, k: &str| match &e[k] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    let rows = entries.iter().map(|e| {
        vec![
            field(e, "time"),
            field(e, "identity"),
            field(e, "verb"),
            field(e, "path"),
            field(e, "status"),
            field(e, "result"),
        ]
    });
    print!(
        "{}",
        render(
            &["TIME", "IDENTITY", "VERB", "PATH", "STATUS", "RESULT"],
            rows
        )
    );
    Ok(())
}

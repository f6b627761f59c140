//! `reactor-host get KIND [NAME] [-o table|json|yaml]`.

use super::client_args::{ClientArgs, explain};
use super::table::render;
use crate::object::Object;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Output {
    Table,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    pub kind: String,
    pub name: Option<String>,
    #[arg(short = 'o', long, value_enum, default_value = "table")]
    pub output: Output,
    /// Only objects whose labels match, e.g. `app=web,tier!=db`.
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    #[command(flatten)]
    pub client: ClientArgs,
}

pub async fn run(args: GetArgs) -> anyhow::Result<()> {
    let client = args.client.client()?;
    let text = match &args.name {
        Some(name) => {
            let object = client.get(&args.kind, name).await.map_err(explain)?;
            match args.output {
                Output::Table => table(std::slice::from_ref(&object)),
                Output::Json => serde_json::to_string_pretty(&object)? + "\n",
                Output::Yaml => serde_yaml_ng::to_string(&object)?,
            }
        }
        None => {
            let listing = client
                .list(&args.kind, args.selector.as_deref())
                .await
                .map_err(explain)?;
            match args.output {
                Output::Table => table(&listing.items),
                Output::Json => serde_json::to_string_pretty(&listing)? + "\n",
                Output::Yaml => serde_yaml_ng::to_string(&listing)?,
            }
        }
    };
    print!("{text}");
    Ok(())
}

fn table(objects: &[Object]) -> String {
    let header = [
        "NAME",
        "REVISION",
        "GENERATION",
        "STATE",
        "LABELS",
        "UPDATED",
    ];
    let rows = objects.iter().map(|o| {
        let labels: Vec<String> = o.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        vec![
            o.name.clone(),
            o.meta.revision.to_string(),
            o.meta.generation.to_string(),
            if o.meta.deleting {
                "deleting"
            } else {
                "active"
            }
            .to_owned(),
            if labels.is_empty() {
                "<none>".to_owned()
            } else {
                labels.join(",")
            },
            o.meta.updated.clone(),
        ]
    });
    render(&header, rows)
}

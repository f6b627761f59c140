//! `reactor-host component push|sign|keygen|annotate|approve`: publish a component to an OCI
//! registry, sign one with minisign, make a signing key, declare its permissions, approve a
//! version waiting for its wider declaration. Credentials come from a file or the
//! environment, never from the command line.

use super::annotate::AnnotateArgs;
use super::client_args::{ClientArgs, explain};
use anyhow::Context;
use clap::{Args, Subcommand};
use reactor_supply::access::{Access, CREDENTIALS_ENV};
use reactor_supply::policy::signature_path;
use reactor_supply::reference::{ComponentRef, Version};
use reactor_supply::signature::{self, PASSWORD_ENV};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ComponentArgs {
    #[command(subcommand)]
    pub command: ComponentCommand,
}

#[derive(Debug, Subcommand)]
pub enum ComponentCommand {
    /// Publish FILE at `oci://HOST[:PORT]/REPO:TAG` in the Wasm OCI layout, with the signature
    /// FILE.minisig beside it if there is one; prints the reference pinned by digest.
    Push(PushArgs),
    /// Sign FILE with a minisign secret key: writes FILE.minisig (as `minisign -Sm` does).
    Sign(SignArgs),
    /// Make a minisign key pair STEM.pub and STEM.key (encrypted with $REACTOR_SIGNING_PASSWORD
    /// if set, else unencrypted, readable only by you).
    Keygen(KeygenArgs),
    /// Declare what FILE may touch (kinds read, written, watched; publishing to agents; WASI
    /// folders) in its reactor-permissions section; the host refuses any other call.
    Annotate(AnnotateArgs),
    /// Let the version of NAME waiting for its wider declaration serve (admins only): the
    /// approval is recorded in the store, for every server sharing it. A version of NAME
    /// running as a shadow is promoted instead, on the server asked.
    Approve {
        /// The component (its file name without `.wasm`).
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The component (`.wasm`).
    pub file: PathBuf,
    /// Where: `oci://HOST[:PORT]/REPO:TAG`.
    pub reference: String,
    /// A file holding USER:PASSWORD for the registry (else $REACTOR_REGISTRY_CREDENTIALS).
    #[arg(long)]
    pub credentials: Option<PathBuf>,
    /// A PEM file of the CA that signed the registry's certificate.
    #[arg(long)]
    pub ca: Option<PathBuf>,
    /// Speak plain HTTP (a registry on loopback only).
    #[arg(long)]
    pub plain_http: bool,
    /// The longest one registry call may take.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct SignArgs {
    /// The component (`.wasm`).
    pub file: PathBuf,
    /// The minisign secret key (encrypted ones take their password from $REACTOR_SIGNING_PASSWORD).
    #[arg(long)]
    pub key: PathBuf,
}

#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Where: STEM.pub and STEM.key are written (never overwritten).
    pub stem: PathBuf,
}

pub async fn run(args: ComponentArgs, global: &ClientArgs) -> anyhow::Result<()> {
    match args.command {
        ComponentCommand::Annotate(args) => super::annotate::run(args),
        ComponentCommand::Approve { name } => {
            let info = global.client()?.approve(&name).await.map_err(explain)?;
            if let Some(error) = &info.error {
                anyhow::bail!("approved, but {name} did not load: {error}");
            }
            let version = info.sha256.as_deref().map(crate::runtime::version_of);
            println!(
                "approved: {name} serves version {} declaring {}",
                version.as_deref().unwrap_or("-"),
                reactor_core::component::permissions::summary(info.permissions.as_ref())
            );
            Ok(())
        }
        ComponentCommand::Push(args) => push(args).await,
        ComponentCommand::Sign(args) => {
            let bytes = super::component_file::read(&args.file)?;
            let file_name = args
                .file
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = signature::sign(&bytes, &args.key, &file_name)?;
            let out = signature_path(&args.file);
            std::fs::write(&out, text).with_context(|| format!("write {}", out.display()))?;
            println!("signed: {}", out.display());
            Ok(())
        }
        ComponentCommand::Keygen(args) => {
            let (public, secret) = signature::keygen(&args.stem)?;
            let encrypted = std::env::var(PASSWORD_ENV).is_ok_and(|p| !p.is_empty());
            println!(
                "public key: {} (name it in the config's trust.keys)",
                public.display()
            );
            println!(
                "secret key: {} ({})",
                secret.display(),
                if encrypted {
                    "encrypted with $REACTOR_SIGNING_PASSWORD"
                } else {
                    "unencrypted, mode 0600: keep it off servers"
                }
            );
            Ok(())
        }
    }
}

async fn push(args: PushArgs) -> anyhow::Result<()> {
    let reference = ComponentRef::parse(&args.reference)?;
    if matches!(reference.version, Version::Digest(_)) {
        anyhow::bail!(
            "push to a tag (oci://HOST/REPO:TAG): the digest is the registry's to compute"
        );
    }
    let bytes = super::component_file::read(&args.file)?;
    let signature = match std::fs::read(signature_path(&args.file)) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(e)
                .with_context(|| format!("read {}", signature_path(&args.file).display()));
        }
    };
    let settings = crate::runtime::RegistrySettings {
        plain_http: args.plain_http,
        ca: args.ca,
        credentials: args.credentials,
    };
    let access = Access::new(&reference.registry, &settings, args.timeout)
        .with_context(|| format!("(credentials: --credentials FILE or ${CREDENTIALS_ENV})"))?;
    let pinned = reactor_supply::push::component(&access, &reference, bytes).await?;
    println!("pushed {pinned}");
    if let (Some(signature), Version::Digest(digest)) = (signature, &pinned.version) {
        let tagged =
            reactor_supply::push::signature(&access, &reference, digest, signature).await?;
        println!("signature pushed {tagged}");
    }
    Ok(())
}

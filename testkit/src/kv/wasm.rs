//! The WASM harness: the scheduler in process with WASM descriptors, each a copy of the
//! mock descriptor component (`guests/mock-descriptor`) named after its descriptor and
//! configured with its [`MockDescArgs`] through the runtime's settings; the components share
//! the mock southbound as a JSON file in a folder granted to them as `/mock`.

use super::access::{FileSouthbound, SouthboundAccess};
use super::args::MockDescArgs;
use super::in_process::{Descriptors, InProcess};
use async_trait::async_trait;
use reactor_host::agent::WasmDescriptor;
use reactor_host::kvscheduler::KvScheduler;
use reactor_host::runtime::{
    Access, ComponentSettings, DirGrant, Grants, Runtime, RuntimeConfig, RuntimeSettings, World,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The component every WASM mock descriptor is a copy of.
pub const MOCK_COMPONENT: &str = "mock-descriptor";
/// Where the guests see the folder of the mock southbound's state file.
pub const MOCK_FOLDER: &str = "/mock";

/// The runtime settings giving each descriptor its args and the shared folder; the
/// descriptor's version is the revision of its entry (a new version is applied).
pub fn mock_settings(descriptors: &[MockDescArgs], folder: &Path) -> RuntimeSettings {
    let mut settings = RuntimeSettings::default();
    for args in descriptors {
        settings.components.insert(
            args.name.clone(),
            ComponentSettings {
                revision: u64::from(args.version),
                config: serde_json::to_value(args).ok(),
                grants: Grants {
                    dirs: vec![DirGrant {
                        host: folder.to_owned(),
                        guest: MOCK_FOLDER.to_owned(),
                        mode: Access::ReadWrite,
                    }],
                },
                ..ComponentSettings::default()
            },
        );
    }
    settings
}

/// Copies the mock descriptor component as `<dir>/<name>.wasm` for each descriptor (by a
/// rename, so that a folder watcher never sees a partial file).
pub fn install_mock_descriptors(descriptors: &[MockDescArgs], dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let component = crate::built().join(format!("{MOCK_COMPONENT}.wasm"));
    for args in descriptors {
        let partial = dir.join(format!("{}.partial", args.name));
        std::fs::copy(&component, &partial)?;
        std::fs::rename(&partial, dir.join(format!("{}.wasm", args.name)))?;
    }
    Ok(())
}

/// `descriptors` with `args` in place of the one of its name, or added; true if added.
pub fn put_descriptor(descriptors: &mut Vec<MockDescArgs>, args: &MockDescArgs) -> bool {
    match descriptors.iter_mut().find(|d| d.name == args.name) {
        Some(known) => {
            *known = args.clone();
            false
        }
        None => {
            descriptors.push(args.clone());
            true
        }
    }
}

/// A compile cache holding the mock descriptor, compiled once per test process.
async fn warm_data_dir() -> anyhow::Result<&'static Path> {
    static DATA: tokio::sync::OnceCell<PathBuf> = tokio::sync::OnceCell::const_new();
    let data = DATA
        .get_or_try_init(|| async {
            let data = crate::target_tmpdir().join("mock-descriptor-data");
            let runtime = Runtime::new(RuntimeConfig::new(&data))?;
            let component = crate::built().join(format!("{MOCK_COMPONENT}.wasm"));
            // Without a config it describes itself with an empty name: only the compile counts.
            let _ = runtime.load_file(&component, World::Descriptor).await;
            anyhow::Ok(data)
        })
        .await?;
    Ok(data.as_path())
}

/// WASM mock descriptors: copies of the mock descriptor component loaded in a runtime of
/// their own, sharing the southbound's state file.
pub struct WasmDescriptors {
    tmp: tempfile::TempDir,
    sb: Option<FileSouthbound>,
    runtime: Option<Runtime>,
    descriptors: Vec<MockDescArgs>,
}

/// A scheduler with WASM mock descriptors.
pub type WasmHarness = InProcess<WasmDescriptors>;

impl WasmHarness {
    pub fn new() -> anyhow::Result<Self> {
        Ok(InProcess::with(WasmDescriptors {
            tmp: tempfile::tempdir()?,
            sb: None,
            runtime: None,
            descriptors: Vec::new(),
        }))
    }
}

impl WasmDescriptors {
    fn runtime(&self) -> anyhow::Result<&Runtime> {
        self.runtime
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the harness was not started"))
    }

    /// Loads `<name>.wasm` of the components folder and registers it.
    async fn load(&self, scheduler: &KvScheduler, name: &str) -> anyhow::Result<()> {
        let runtime = self.runtime()?;
        let path = self
            .tmp
            .path()
            .join("components")
            .join(format!("{name}.wasm"));
        runtime.load_file(&path, World::Descriptor).await?;
        let descriptor = WasmDescriptor::new(runtime.descriptor(name))?;
        scheduler.register_descriptor(Arc::new(descriptor)).await;
        Ok(())
    }
}

#[async_trait]
impl Descriptors for WasmDescriptors {
    async fn start(
        &mut self,
        scheduler: &KvScheduler,
        descriptors: &[MockDescArgs],
    ) -> anyhow::Result<()> {
        let folder = self.tmp.path().join("mock");
        self.sb = Some(FileSouthbound::create(&folder)?);
        let components = self.tmp.path().join("components");
        install_mock_descriptors(descriptors, &components)?;
        let mut config = RuntimeConfig::new(warm_data_dir().await?);
        config.settings = mock_settings(descriptors, &folder);
        self.runtime = Some(Runtime::new(config)?);
        self.descriptors = descriptors.to_vec();
        for args in descriptors {
            self.load(scheduler, &args.name).await?;
        }
        Ok(())
    }

    /// A new descriptor is loaded and registered; a new version of one is applied as a
    /// changed config entry, which reloads the component.
    async fn register(
        &mut self,
        scheduler: &KvScheduler,
        args: &MockDescArgs,
    ) -> anyhow::Result<bool> {
        let new = put_descriptor(&mut self.descriptors, args);
        let folder = self.tmp.path().join("mock");
        let settings = mock_settings(&self.descriptors, &folder);
        let merge = self.runtime()?.apply_settings(settings).await;
        anyhow::ensure!(merge.stale.is_empty(), "not applied: {:?}", merge.stale);
        if new {
            let components = self.tmp.path().join("components");
            install_mock_descriptors(std::slice::from_ref(args), &components)?;
            self.load(scheduler, &args.name).await?;
        }
        Ok(new)
    }

    fn sb(&self) -> anyhow::Result<&dyn SouthboundAccess> {
        self.sb
            .as_ref()
            .map(|sb| sb as &dyn SouthboundAccess)
            .ok_or_else(|| anyhow::anyhow!("the harness was not started"))
    }
}

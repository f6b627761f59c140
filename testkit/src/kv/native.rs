//! The native harness: the scheduler in process with native mock descriptors over one
//! in-memory mock southbound.

use super::access::SouthboundAccess;
use super::args::MockDescArgs;
use super::descriptor::{MockDescriptor, MockSouthbound};
use super::in_process::{Descriptors, InProcess};
use async_trait::async_trait;
use reactor_host::kvscheduler::KvScheduler;
use std::sync::Arc;

/// Native mock descriptors sharing one in-memory southbound.
#[derive(Default)]
pub struct NativeDescriptors {
    pub sb: Arc<MockSouthbound>,
}

/// A scheduler with native mock descriptors.
pub type NativeHarness = InProcess<NativeDescriptors>;

impl Default for NativeHarness {
    fn default() -> Self {
        InProcess::with(NativeDescriptors::default())
    }
}

#[async_trait]
impl Descriptors for NativeDescriptors {
    async fn start(
        &mut self,
        scheduler: &KvScheduler,
        descriptors: &[MockDescArgs],
    ) -> anyhow::Result<()> {
        for args in descriptors {
            self.register(scheduler, args).await?;
        }
        Ok(())
    }

    async fn register(
        &mut self,
        scheduler: &KvScheduler,
        args: &MockDescArgs,
    ) -> anyhow::Result<bool> {
        let new = !scheduler.descriptors().await.contains(&args.name);
        let descriptor = MockDescriptor::new(args.clone(), self.sb.clone());
        scheduler.register_descriptor(Arc::new(descriptor)).await;
        Ok(new)
    }

    fn sb(&self) -> anyhow::Result<&dyn SouthboundAccess> {
        Ok(self.sb.as_ref())
    }
}

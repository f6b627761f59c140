//! A dry run on the real graph instead of a copy: each node the plan touches is saved as it
//! was and put back when the plan ends, so that planning costs what it touches.

use super::graph::Graph;

/// The graph while a plan runs on it. However the trial ends (also when the planning future
/// is dropped halfway), the graph is then as it was before.
pub struct Trial<'g> {
    graph: &'g mut Graph,
}

impl<'g> Trial<'g> {
    pub fn new(graph: &'g mut Graph) -> Self {
        graph.start_undo_log();
        Self { graph }
    }

    pub fn graph(&mut self) -> &mut Graph {
        self.graph
    }
}

impl Drop for Trial<'_> {
    fn drop(&mut self) {
        self.graph.undo();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Dependency, Value, ValueOrigin, ValueState};

    fn node(graph: &mut Graph, key: &str, applied: bool) {
        let node = graph.entry(key, ValueOrigin::FromNorthbound);
        node.wanted = Some(Value::from(key));
        if applied {
            node.applied = Some(Value::from(key));
            node.state = ValueState::Configured;
        }
    }

    /// Everything a caller can see of the graph.
    fn seen(graph: &Graph) -> String {
        let lookups: Vec<_> = ["if/a", "if/b", "route/r", "addr/a/1"]
            .iter()
            .map(|k| (graph.pending_on(k), graph.dependants_losing(k)))
            .collect();
        format!("{:?} {lookups:?}", graph.inspect())
    }

    #[test]
    fn whatever_a_trial_changes_is_put_back() {
        let mut graph = Graph::default();
        node(&mut graph, "if/a", true);
        node(&mut graph, "addr/a/1", true);
        node(&mut graph, "route/r", true);
        graph.set_dependencies("route/r", vec![Dependency::on_key("via", "if/a")]);
        node(&mut graph, "route/s", false);
        graph.set_dependencies("route/s", vec![Dependency::any_of("ip", "addr/a/")]);
        let before = seen(&graph);
        {
            let mut trial = Trial::new(&mut graph);
            let graph = trial.graph();
            graph.remove("if/a");
            node(graph, "if/b", true);
            graph.set_dependencies("route/r", vec![Dependency::on_key("via", "if/b")]);
            graph.set_dependencies("if/b", vec![Dependency::any_of("ip", "addr/")]);
            if let Some(n) = graph.get_mut("route/s") {
                n.state = ValueState::Pending;
            }
            graph.remove("route/s");
            node(graph, "route/s", true);
            assert_ne!(seen(graph), before, "the trial changed nothing");
        }
        assert_eq!(seen(&graph), before);
        // Outside a trial changes stay.
        graph.remove("if/a");
        assert_ne!(seen(&graph), before);
    }

    /// A descriptor that never finishes validating `stall/` keys.
    struct Stalling;

    #[async_trait::async_trait]
    impl crate::api::Descriptor for Stalling {
        fn name(&self) -> &str {
            "stalling"
        }
        fn key_prefix(&self) -> &str {
            ""
        }
        async fn validate(
            &self,
            key: &str,
            _value: &Value,
        ) -> Result<(), crate::api::InvalidValue> {
            if key.starts_with("stall/") {
                std::future::pending::<()>().await;
            }
            Ok(())
        }
        async fn create(
            &self,
            _key: &str,
            _value: &Value,
        ) -> Result<crate::api::Metadata, crate::api::DescriptorError> {
            Ok(None)
        }
        async fn delete(
            &self,
            _key: &str,
            _value: &Value,
            _metadata: &crate::api::Metadata,
        ) -> Result<(), crate::api::DescriptorError> {
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_transaction_dropped_while_planning_changes_nothing() {
        use crate::{KvScheduler, TxnOptions};
        let scheduler = KvScheduler::new();
        scheduler
            .register_descriptor(std::sync::Arc::new(Stalling))
            .await;
        // `a` is planned (created in the plan's view), then the plan waits on `stall/x`.
        let stalled = scheduler.transaction(
            vec![
                ("a".to_owned(), Some(Value::from(1))),
                ("stall/x".to_owned(), Some(Value::from(2))),
            ],
            TxnOptions::default(),
        );
        let waited = tokio::time::timeout(std::time::Duration::from_secs(5), stalled).await;
        assert!(waited.is_err(), "the plan did not stall");
        assert_eq!(scheduler.status("a").await.state, ValueState::Nonexistent);
        assert!(
            scheduler.graph().await.is_empty(),
            "{:?}",
            scheduler.graph().await
        );
        let record = scheduler
            .transaction(
                vec![("a".to_owned(), Some(Value::from(1)))],
                TxnOptions::default(),
            )
            .await
            .expect("a later transaction runs");
        assert_eq!(record.executed.len(), 1);
        assert_eq!(scheduler.status("a").await.state, ValueState::Configured);
    }
}

//! Where an embedded cluster's objects come from when `-f` brings files: the
//! nodes from the files when they hold any, else from the scenario's pools
//! (or `--nodes N`); the DaemonSets from the files when they hold any (the
//! scenario's own are then left out), else from the scenario. Every start says
//! which in one line, and a combination that cannot work is an error, never a
//! silently empty cluster.
//!
//! Pure: decides from the loaded files and the options, loads nothing.

use std::fmt::Write as _;

use crate::model::{Snapshot, Target};
use crate::sim::generate::large::large_scenario;
use crate::sim::scenario::{Scenario, ScenarioError};

/// Where the nodes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeSource {
    /// The files' own nodes.
    Files,
    /// The named scenario's pools.
    Scenario(String),
    /// A generated cluster of this many nodes (`--nodes`).
    Generated(usize),
}

/// The decision: what to generate before the files are loaded, and what the
/// simulation runs with afterwards.
#[derive(Debug)]
pub struct Composition {
    /// Loaded before the files (its pools, and its DaemonSets unless the files
    /// bring their own); `None` when the nodes come from the files.
    pub generated: Option<Scenario>,
    /// The scenario the kubelets, the timeline and the self-heal run with.
    pub running: Scenario,
    /// Where the nodes come from.
    pub nodes: NodeSource,
    /// How many of the scenario's DaemonSets were left out for the files' own.
    pub dropped_daemon_sets: usize,
    /// The DaemonSet a console opens on by default: the files' first, else
    /// the scenario's first.
    pub first_daemon_set: Option<Target>,
}

/// What the options ask for.
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    /// The scenario in effect (named, or the default one).
    pub base: &'a Scenario,
    /// Whether `--scenario` was given.
    pub scenario_named: bool,
    /// `--nodes N`.
    pub nodes: Option<usize>,
    /// How the files are named in messages (`kube-flannel.yml`, `stdin`).
    pub files: &'a str,
}

/// Decides where the objects come from. `files` is what `-f` loaded.
pub fn compose(asked: Asked<'_>, files: &Snapshot) -> Result<Composition, ScenarioError> {
    let brings_nodes = !files.nodes.is_empty();
    let brings_daemon_sets = !files.daemonsets.is_empty();
    if !brings_nodes && !brings_daemon_sets && files.pods.is_empty() {
        return Err(invalid(
            asked.files,
            "holds no DaemonSet, Node or Pod: nothing to rehearse (see the log for the objects skipped)",
        ));
    }
    let files_first = files.daemonsets.first().map(|ds| Target {
        namespace: ds
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned()),
        name: ds.metadata.name.clone().unwrap_or_default(),
    });
    if brings_nodes {
        if let Some(count) = asked.nodes {
            return Err(invalid(
                "--nodes",
                &format!(
                    "--nodes {count} cannot be combined with {}, which brings {} node(s) of its own: leave out one of them",
                    asked.files,
                    files.nodes.len()
                ),
            ));
        }
        // The scenario, when named, supplies only timings, image rules and timeline.
        let mut running = if asked.scenario_named {
            asked.base.clone()
        } else {
            Scenario::empty()
        };
        running.pools.clear();
        running.daemon_sets.clear();
        return Ok(Composition {
            generated: None,
            running,
            nodes: NodeSource::Files,
            dropped_daemon_sets: 0,
            first_daemon_set: files_first,
        });
    }
    let (mut generated, nodes) = match asked.nodes {
        Some(count) => {
            let mut generated = large_scenario(count);
            if asked.scenario_named {
                generated.timing = asked.base.timing.clone();
            }
            (generated, NodeSource::Generated(count))
        }
        None => (
            asked.base.clone(),
            NodeSource::Scenario(asked.base.name.clone()),
        ),
    };
    let dropped_daemon_sets = if brings_daemon_sets {
        let dropped = generated.daemon_sets.len();
        generated.daemon_sets.clear();
        // A self-heal restores the scenario's DaemonSets, which are not there.
        generated.self_heal = None;
        dropped
    } else {
        0
    };
    let scenario_first = generated.daemon_sets.first().map(|ds| Target {
        namespace: ds.namespace.clone(),
        name: ds.name.clone(),
    });
    Ok(Composition {
        running: generated.clone(),
        generated: Some(generated),
        nodes,
        dropped_daemon_sets,
        first_daemon_set: files_first.or(scenario_first),
    })
}

impl Composition {
    /// The start-up line saying where everything came from, e.g. `14 nodes
    /// from scenario default, 3 DaemonSets from kube-flannel.yml (the
    /// scenario's 4 DaemonSets left out)`.
    pub fn summary(&self, loaded: &super::LoadStats, files: &Snapshot, names: &str) -> String {
        let nodes = match &self.nodes {
            NodeSource::Files => format!("{} from {names}", counted(loaded.nodes, "node")),
            NodeSource::Scenario(name) => {
                format!("{} from scenario {name}", counted(loaded.nodes, "node"))
            }
            NodeSource::Generated(count) => {
                format!("{} (--nodes)", counted(*count, "generated node"))
            }
        };
        let from_files = files.daemonsets.len();
        let daemon_sets = if from_files > 0 {
            format!("{} from {names}", counted(from_files, "DaemonSet"))
        } else {
            format!(
                "{} from the scenario ({names} brings none)",
                counted(loaded.daemon_sets, "DaemonSet")
            )
        };
        let mut line = format!("{nodes}, {daemon_sets}");
        if self.dropped_daemon_sets > 0 {
            let _ = write!(
                line,
                " (the scenario's {} left out: -f brings its own)",
                counted(self.dropped_daemon_sets, "DaemonSet")
            );
        }
        line
    }
}

/// `1 node`, `3 nodes`.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn invalid(file: &str, message: &str) -> ScenarioError {
    ScenarioError::Invalid {
        file: file.to_owned(),
        line: None,
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DaemonSet, Node, ObjectMeta};

    fn daemon_set(name: &str) -> DaemonSet {
        DaemonSet {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("kube-flannel".to_owned()),
                ..ObjectMeta::default()
            },
            ..DaemonSet::default()
        }
    }

    fn files(nodes: usize, daemon_sets: &[&str]) -> Snapshot {
        Snapshot {
            nodes: (0..nodes).map(|_| Node::default()).collect(),
            daemonsets: daemon_sets.iter().map(|n| daemon_set(n)).collect(),
            ..Snapshot::default()
        }
    }

    fn asked(base: &Scenario, named: bool, nodes: Option<usize>) -> Asked<'_> {
        Asked {
            base,
            scenario_named: named,
            nodes,
            files: "kube-flannel.yml",
        }
    }

    #[test]
    fn a_manifest_without_nodes_runs_on_the_default_scenarios_pools_without_its_daemon_sets() {
        let base = Scenario::load("default").expect("built in");
        let plan = compose(asked(&base, false, None), &files(0, &["kube-flannel-ds"])).unwrap();
        let generated = plan.generated.expect("nodes come from the scenario");
        assert_eq!(generated.pools.len(), base.pools.len());
        assert!(generated.daemon_sets.is_empty());
        assert_eq!(plan.dropped_daemon_sets, base.daemon_sets.len());
        assert_eq!(plan.nodes, NodeSource::Scenario("default".to_owned()));
        assert_eq!(
            plan.first_daemon_set.map(|t| t.to_string()).as_deref(),
            Some("kube-flannel/kube-flannel-ds")
        );
    }

    #[test]
    fn a_manifest_with_nodes_n_runs_on_generated_nodes() {
        let base = Scenario::load("small").expect("built in");
        let plan = compose(asked(&base, true, Some(20)), &files(0, &["a"])).unwrap();
        assert_eq!(plan.nodes, NodeSource::Generated(20));
        let generated = plan.generated.expect("generated");
        assert!(generated.daemon_sets.is_empty());
        assert_eq!(
            generated.timing, base.timing,
            "--scenario still gives timings"
        );
    }

    #[test]
    fn a_dump_with_nodes_keeps_its_nodes_and_refuses_nodes_n() {
        let base = Scenario::load("default").expect("built in");
        let plan = compose(asked(&base, false, None), &files(3, &["a"])).unwrap();
        assert!(plan.generated.is_none());
        assert_eq!(plan.nodes, NodeSource::Files);
        assert!(plan.running.pools.is_empty());
        let error = compose(asked(&base, false, Some(5)), &files(3, &["a"])).unwrap_err();
        assert!(
            error.to_string().contains("--nodes 5 cannot be combined"),
            "{error}"
        );
    }

    #[test]
    fn files_without_daemon_sets_add_to_the_scenarios_own() {
        let base = Scenario::load("small").expect("built in");
        let mut only_pods = files(0, &[]);
        only_pods.pods.push(crate::model::Pod::default());
        let plan = compose(asked(&base, true, None), &only_pods).unwrap();
        assert_eq!(plan.dropped_daemon_sets, 0);
        assert_eq!(
            plan.generated.expect("scenario").daemon_sets.len(),
            base.daemon_sets.len()
        );
    }

    #[test]
    fn files_with_nothing_to_rehearse_are_an_error_not_an_empty_cluster() {
        let base = Scenario::load("default").expect("built in");
        let error = compose(asked(&base, false, None), &files(0, &[])).unwrap_err();
        assert!(error.to_string().contains("nothing to rehearse"), "{error}");
    }
}

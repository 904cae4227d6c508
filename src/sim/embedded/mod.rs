//! The embedded cluster in one call: a store filled from a scenario, a
//! generated large cluster or a snapshot, the DaemonSet controller, the
//! scheduler and the kubelets running on it ([`Simulation`]), and the HTTPS API server in
//! front ([`start`] → [`EmbeddedCluster`]). `rollcall sim` and `rollcall demo`
//! both start it this way.
//!
//! Owns wiring and lifetimes only; the parts do the work.

pub mod compose;
pub mod dump;
pub mod fleet;
pub mod load;
pub mod member;
pub mod restart;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::input::{SnapshotError, load_paths_whole};
use crate::model::Target;
use crate::sim::controller::{self, ControllerHandle};
use crate::sim::fault::Faults;
use crate::sim::generate::large::large_scenario;
use crate::sim::kubelet::clock::SimClock;
use crate::sim::kubelet::{self, KubeletHandle, KubeletOptions};
use crate::sim::offload::Offload;
use crate::sim::scenario::{Scenario, ScenarioError};
use crate::sim::scheduler::{self, SchedulerHandle, SchedulerOptions};
use crate::sim::selfheal::{self, SelfHealHandle};
use crate::sim::server::{self, ServeOptions, ServerHandle};
use crate::sim::store::{PodTermination, Store, StoreError, StoreOptions};
pub use load::LoadStats;

/// Why the embedded cluster could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scenario is unusable.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The snapshot is unusable.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// An object could not be loaded into the store.
    #[error("cannot load {what}")]
    Load {
        /// Which object.
        what: String,
        /// The store's answer.
        #[source]
        source: StoreError,
    },
    /// The API server could not start.
    #[error("cannot start the API server")]
    Serve(#[from] server::SimError),
}

/// How to start the embedded cluster.
#[derive(Clone, Debug)]
pub struct EmbeddedOptions {
    /// A built-in scenario name or a scenario file (default `default`). With
    /// `nodes` or `snapshot` it only supplies timings, image rules and timeline.
    pub scenario: Option<String>,
    /// Generate a cluster of this many nodes instead of the scenario's pools.
    pub nodes: Option<usize>,
    /// Load these snapshot files (a real cluster's export) instead.
    pub snapshot: Vec<PathBuf>,
    /// Where the API server listens (default `127.0.0.1:0`).
    pub listen: Option<SocketAddr>,
    /// RNG seed (default: the scenario's, else fixed).
    pub seed: Option<u64>,
    /// Time multiplier for every kubelet delay (default 1.0).
    pub speed: f64,
    /// Injected API faults (`rollcall sim --fault`), counted from the start.
    pub faults: Faults,
    /// The store's first resourceVersion (see [`StoreOptions::first_resource_version`]).
    pub first_resource_version: u64,
    /// How often watches get a BOOKMARK (`None`: the server's default).
    pub bookmark_interval: Option<std::time::Duration>,
    /// As a member of an embedded fleet: how this cluster differs from the
    /// scenario (ignored with `snapshot`, whose objects are taken as they are).
    pub variant: Option<member::Variant>,
    /// How long a changed DaemonSet waits for more changes before the
    /// controller syncs it (zero, the default: at once). A rehearsal on a
    /// paused clock sets it; see `controller::spawn_with`.
    pub sync_window: std::time::Duration,
    /// Delete an Event this long after its last write, as kube-apiserver's
    /// `--event-ttl` (`None`, the default: Events stay until deleted).
    pub event_ttl: Option<std::time::Duration>,
    /// The kubelets' relist period (see `KubeletOptions::relist`; `None`,
    /// the default: every pod step at its own instant).
    pub kubelet_relist: Option<std::time::Duration>,
    /// Where the controller, scheduler and kubelets do their work (see
    /// [`Offload`]; inline by default).
    pub offload: Offload,
}

impl Default for EmbeddedOptions {
    fn default() -> EmbeddedOptions {
        EmbeddedOptions {
            scenario: None,
            nodes: None,
            snapshot: Vec::new(),
            listen: None,
            seed: None,
            speed: 1.0,
            faults: Faults::none(),
            first_resource_version: 0,
            bookmark_interval: None,
            variant: None,
            sync_window: std::time::Duration::ZERO,
            event_ttl: None,
            kubelet_relist: None,
            offload: Offload::Inline,
        }
    }
}

/// The `-f` arguments as messages name them (`-` is stdin).
fn file_names(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths
        .iter()
        .map(|p| match p.to_str() {
            Some("-") => "stdin".to_owned(),
            _ => p.display().to_string(),
        })
        .collect();
    names.join(", ")
}

/// The seed used when neither the options nor the scenario give one.
const DEFAULT_SEED: u64 = 0x5eed;

/// Store, controller, scheduler and kubelets, without the HTTP server.
#[derive(Debug)]
pub struct Simulation {
    /// The object store everything reads and writes.
    pub store: Store,
    /// The scenario in effect.
    pub scenario: Arc<Scenario>,
    /// What was loaded at start.
    pub loaded: LoadStats,
    /// For a snapshot: the loader's warnings, its summary, then where the
    /// nodes and DaemonSets came from, as lines for stderr.
    pub load_report: Vec<String>,
    /// The DaemonSet a console opens on when none is named: the files' first,
    /// else the scenario's first.
    pub first_daemon_set: Option<Target>,
    controller: ControllerHandle,
    scheduler: SchedulerHandle,
    kubelets: KubeletHandle,
    self_heal: Option<SelfHealHandle>,
    event_ttl: Option<crate::sim::event_ttl::EventTtlHandle>,
}

impl Simulation {
    /// Builds and loads the store and starts the controller, the scheduler
    /// and the kubelets on the current tokio runtime.
    pub fn start(options: &EmbeddedOptions) -> Result<Simulation, SimError> {
        let named = options.scenario.as_deref().unwrap_or("default");
        let base = Scenario::load(named)?;
        let seed = options.seed.or(base.seed).unwrap_or(DEFAULT_SEED);
        let store = Store::with_options(StoreOptions {
            pod_termination: PodTermination::External,
            seed,
            first_resource_version: options.first_resource_version,
            ..StoreOptions::default()
        });
        let clock = SimClock::start();
        let mut load_report = Vec::new();
        let first_daemon_set;
        let (scenario, loaded) = if options.snapshot.is_empty() {
            let scenario = scenario_of(options, base)?;
            let stats = load::load_scenario(&store, &scenario, clock.now(), seed)?;
            first_daemon_set = scenario.daemon_sets.first().map(|ds| Target {
                namespace: ds.namespace.clone(),
                name: ds.name.clone(),
            });
            (scenario, stats)
        } else {
            let mut loaded = load_paths_whole(&options.snapshot)?;
            for warning in &loaded.warnings {
                tracing::warn!(%warning, "snapshot");
                load_report.push(format!("warning: {warning}"));
            }
            load_report.extend(loaded.summary.lines(&loaded.snapshot));
            let sources = file_names(&options.snapshot);
            let plan = compose::compose(
                compose::Asked {
                    base: &base,
                    scenario_named: options.scenario.is_some(),
                    nodes: options.nodes,
                    files: &sources,
                },
                &loaded.snapshot,
            )?;
            let mut stats = match &plan.generated {
                Some(generated) => load::load_scenario(&store, generated, clock.now(), seed)?,
                None => LoadStats::default(),
            };
            stats.add(load::load_snapshot(
                &store,
                &loaded.snapshot,
                loaded.whole.take(),
                clock.now(),
                &mut load_report,
            )?);
            load_report.push(plan.summary(&stats, &loaded.snapshot, &sources));
            first_daemon_set = plan.first_daemon_set;
            (plan.running, stats)
        };
        let scenario = Arc::new(scenario);
        let controller =
            controller::spawn_with(store.clone(), clock, options.sync_window, options.offload);
        let scheduler = spawn_scheduler(&store, clock, &scenario, options);
        let kubelets = kubelet::spawn(
            store.clone(),
            clock,
            KubeletOptions {
                scenario: scenario.clone(),
                speed: options.speed,
                seed,
                relist: options.kubelet_relist,
                offload: options.offload,
            },
        );
        let self_heal = selfheal::spawn(&store, &scenario);
        let event_ttl = options
            .event_ttl
            .map(|ttl| crate::sim::event_ttl::spawn(&store, ttl));
        Ok(Simulation {
            store,
            scenario,
            loaded,
            load_report,
            first_daemon_set,
            controller,
            scheduler,
            kubelets,
            self_heal,
            event_ttl,
        })
    }

    /// Stops the controller, the scheduler and the kubelets.
    pub async fn shutdown(self) {
        if let Some(self_heal) = self.self_heal {
            self_heal.shutdown().await;
        }
        if let Some(event_ttl) = self.event_ttl {
            event_ttl.shutdown().await;
        }
        self.controller.shutdown().await;
        self.scheduler.shutdown().await;
        self.kubelets.shutdown().await;
    }
}

/// The scenario a simulation without snapshots loads: the named one (`base`)
/// or a generated cluster of `nodes` nodes (with `base`'s timings when a
/// scenario was named), as a fleet member's variant when it is one.
fn scenario_of(options: &EmbeddedOptions, base: Scenario) -> Result<Scenario, SimError> {
    let scenario = match options.nodes {
        Some(nodes) if nodes > crate::input::limits::MAX_SIM_NODES => {
            return Err(ScenarioError::Invalid {
                file: "--nodes".to_owned(),
                line: None,
                message: format!(
                    "{nodes} nodes is more than the limit of {}",
                    crate::input::limits::MAX_SIM_NODES
                ),
            }
            .into());
        }
        Some(nodes) => {
            let mut generated = large_scenario(nodes);
            if options.scenario.is_some() {
                generated.timing = base.timing.clone();
            }
            generated
        }
        None => base,
    };
    Ok(match options.variant {
        Some(variant) => variant.apply(scenario),
        None => scenario,
    })
}

/// The scheduler, first trying a new pod after the scenario's `timing.schedule`.
fn spawn_scheduler(
    store: &Store,
    clock: SimClock,
    scenario: &Scenario,
    options: &EmbeddedOptions,
) -> SchedulerHandle {
    let options = SchedulerOptions {
        first_attempt_after: scenario.timing.schedule,
        speed: options.speed,
        offload: options.offload,
    };
    scheduler::spawn(store.clone(), clock, options)
}

/// A running embedded cluster: the simulation behind a real HTTPS API server.
#[derive(Debug)]
pub struct EmbeddedCluster {
    /// The API server (address, kubeconfig, `kube::Config`).
    pub server: ServerHandle,
    /// The simulation behind it.
    pub simulation: Simulation,
}

impl EmbeddedCluster {
    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    /// Stops the server, then the controller and kubelets.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
        self.simulation.shutdown().await;
    }
}

/// Starts the embedded cluster: store, scenario, controller, kubelets and the
/// API server on `options.listen` (default `127.0.0.1:0`).
pub async fn start(options: EmbeddedOptions) -> Result<EmbeddedCluster, SimError> {
    start_with(options, ServeOptions::default()).await
}

/// [`start`] with server settings (in-flight limit, timeouts, token
/// lifetime). The listen address comes from `options`; the viewer's
/// namespace is the scenario's first DaemonSet's (`kube-system` by default).
pub async fn start_with(
    options: EmbeddedOptions,
    serve: ServeOptions,
) -> Result<EmbeddedCluster, SimError> {
    let simulation = Simulation::start(&options)?;
    let serve_options = server_options(&simulation, &options, serve);
    let server = server::serve(simulation.store.clone(), serve_options).await?;
    Ok(EmbeddedCluster { server, simulation })
}

/// The API server's settings for `simulation` started from `options`: the
/// listen address, faults and bookmarks from `options`, the viewer's
/// namespace from the scenario, the rest from `serve`.
pub(crate) fn server_options(
    simulation: &Simulation,
    options: &EmbeddedOptions,
    serve: ServeOptions,
) -> ServeOptions {
    let listen = options
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
    let viewer_namespace = simulation
        .scenario
        .daemon_sets
        .first()
        .map_or_else(|| serve.viewer_namespace.clone(), |ds| ds.namespace.clone());
    ServeOptions {
        listen,
        faults: options.faults.clone(),
        bookmark_interval: options.bookmark_interval.unwrap_or(serve.bookmark_interval),
        authorizer: serve
            .authorizer
            .clone()
            .with_viewer_namespace(&viewer_namespace),
        viewer_namespace,
        ..serve
    }
}

#[cfg(test)]
mod tests;

//! `rollcall fleet [DAEMONSET] (--contexts a,b | --all-contexts |
//! --context-regex RE)`: the live matrix. Wires the fleet side: every
//! cluster connects on its own task (exec plugins at most
//! [`super::fleet::EXEC_AT_ONCE`] at once, each step bounded by
//! `--request-timeout`; the first lists too), then runs the single-cluster
//! console's own watch on the DaemonSet, without its node-usage stream
//! ([`crate::cluster::watch::spawn_without_usage`]: the rows read no fit),
//! whose cache a row builder ([`crate::fleet::live::follow`]) observes; the
//! screen ([`crate::tui::fleet`]) keeps each watch for that cluster's
//! console, wired here on `Enter`, which switches the usage stream on. A cluster that hangs or refuses is a row saying
//! so; nothing waits for it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use kube::api::{Api, ListParams};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::console::{ConsoleOpsArgs, wire_console};
use super::fleet::{ClusterChoice, Reach, reach};
use super::fleet_matrix_run::MatrixRun;
use crate::cli::cluster_args::{ClusterArgs, GlobalArgs};
use crate::cluster::connect::{Connection, NamedContext};
use crate::cluster::watch::{self, Shared, UsageSwitch};
use crate::fleet::live::row::{FirstList, Link};
use crate::fleet::live::turns::{Turn, Turns};
use crate::model::{DaemonSet, DsRef, Target};
use crate::tui::fleet::run::FleetScreen;
use crate::tui::fleet::{FleetEvent, FleetRequest};
use crate::tui::run::{ConsoleEnd, Nested};
use crate::tui::view_model::ConsoleInfo;

/// Arguments of `rollcall fleet` without a subcommand: the live matrix.
#[derive(Debug, Default, Args)]
pub struct FleetLiveArgs {
    /// The DaemonSet: `NAME` (in the -n namespace, else each context's),
    /// `NAMESPACE/NAME`, `ds/NAME`, `daemonset/NAME` or
    /// `daemonsets.apps/NAME`; without it, every DaemonSet of the clusters
    /// to choose from.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: Option<DsRef>,
    /// The clusters.
    #[command(flatten)]
    pub choice: ClusterChoice,
    /// Compare templates with this context's instead of the majority's.
    #[arg(long, value_name = "CONTEXT")]
    pub reference: Option<String>,
    /// The global cluster flags (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
    /// The global `--log-file`.
    #[arg(skip)]
    pub log_file: Option<std::path::PathBuf>,
    /// The global `--read-only` and `--journal` (the per-cluster consoles honour them).
    #[arg(skip)]
    pub ops: ConsoleOpsArgs,
}

impl FleetLiveArgs {
    /// Takes the global flags.
    pub fn apply(&mut self, cluster: ClusterArgs, global: &GlobalArgs) {
        self.cluster = cluster;
        self.log_file.clone_from(&global.log_file);
        self.ops = ConsoleOpsArgs::from_global(global);
    }
}

/// Runs the live matrix.
pub async fn run(args: &FleetLiveArgs) -> anyhow::Result<ExitCode> {
    if let Some(daemonset) = &args.daemonset {
        // A namespace conflict (`a/x -n b`) is the same in every cluster: said once.
        daemonset.resolve(args.cluster.namespace.as_deref(), "default")?;
    }
    let (contexts, reach) = reach(&args.cluster, &args.choice)?;
    if let Some(reference) = &args.reference
        && !contexts.iter().any(|c| &c.name == reference)
    {
        anyhow::bail!("--reference {reference}: not one of the chosen contexts");
    }
    super::console::init_logging(args.log_file.as_deref())?;
    let screen = FleetScreen {
        contexts: contexts.iter().map(|c| c.name.clone()).collect(),
        daemonset: args.daemonset.as_ref().map(ToString::to_string),
        reference: args.reference.clone(),
        simulated: false,
    };
    let side = FleetSide::new(reach, args.daemonset.clone(), args.ops.clone());
    open(side, contexts, screen).await
}

/// `rollcall demo --fleet N`: an embedded fleet in-process (members varied
/// unless --scenario names one), its kubeconfig in the temp directory
/// (removed on exit), and the matrix on its DaemonSet, titled SIMULATED.
pub async fn demo(args: &super::console::DemoArgs, count: usize) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    let options = crate::sim::embedded::EmbeddedOptions {
        scenario: args.scenario.clone(),
        nodes: args.nodes,
        seed: args.seed,
        speed: args.speed,
        // Frequent bookmarks: the matrix tells a silent watch from a quiet one by them.
        bookmark_interval: Some(std::time::Duration::from_secs(5)),
        ..crate::sim::embedded::EmbeddedOptions::default()
    };
    let vary = args.scenario.is_none();
    let fleet = crate::sim::embedded::fleet::start(
        &options,
        &crate::sim::server::ServeOptions::default(),
        count,
        vary,
    )
    .await
    .context("starting the embedded fleet")?;
    let first = fleet.members.first().map_or(0, |m| m.cluster.addr().port());
    let path = std::env::temp_dir().join(format!("rollcall-demo-fleet-{first}.kubeconfig"));
    let result = demo_on(args, &fleet, &path).await;
    crate::sim::kubeconfig::remove(&path);
    fleet.shutdown().await;
    result
}

async fn demo_on(
    args: &super::console::DemoArgs,
    fleet: &crate::sim::embedded::fleet::Fleet,
    path: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    fleet
        .write_kubeconfig(path)
        .with_context(|| format!("writing the kubeconfig to {}", path.display()))?;
    // The DaemonSet the members vary in (its pending update, drift, failing
    // pods and pause are what the matrix is for).
    let daemonset = match &args.daemonset {
        Some(daemonset) => daemonset.clone(),
        None => fleet
            .members
            .first()
            .and_then(|m| crate::sim::embedded::member::focus(&m.cluster.simulation.scenario))
            .map(|target| DsRef {
                namespace: Some(target.namespace.clone()),
                name: target.name.clone(),
            })
            .context("the embedded fleet has no DaemonSet")?,
    };
    let cluster = ClusterArgs {
        kubeconfig: Some(path.to_path_buf()),
        namespace: args.cluster.namespace.clone(),
        ..ClusterArgs::default()
    };
    let choice = ClusterChoice {
        all_contexts: true,
        ..ClusterChoice::default()
    };
    let (contexts, reach) = reach(&cluster, &choice)?;
    let screen = FleetScreen {
        contexts: contexts.iter().map(|c| c.name.clone()).collect(),
        daemonset: Some(daemonset.to_string()),
        reference: None,
        simulated: true,
    };
    open(
        FleetSide::new(reach, Some(daemonset), args.ops.clone()),
        contexts,
        screen,
    )
    .await
}

/// The fleet side without a screen (the benchmark's): every chosen cluster
/// connects and watches `daemonset` as under the matrix. Call inside a
/// runtime; returns the contexts in order and the events the screen would
/// get (keep the [`FleetEvent::Attached`] watches: dropping one stops it).
pub fn start_headless(
    cluster: &ClusterArgs,
    choice: &ClusterChoice,
    daemonset: DsRef,
) -> anyhow::Result<(
    Vec<String>,
    UnboundedReceiver<FleetEvent>,
    UnboundedSender<FleetRequest>,
)> {
    let (contexts, reach) = reach(cluster, choice)?;
    let names = contexts.iter().map(|c| c.name.clone()).collect();
    let (events, events_rx) = mpsc::unbounded_channel();
    let (requests, requests_rx) = mpsc::unbounded_channel();
    let side = FleetSide::new(reach, Some(daemonset), ConsoleOpsArgs::default());
    tokio::spawn(side.run(contexts, events, requests_rx));
    Ok((names, events_rx, requests))
}

/// Runs the screen with the fleet side behind it; the exit code.
pub(super) async fn open(
    side: FleetSide,
    contexts: Vec<NamedContext>,
    screen: FleetScreen,
) -> anyhow::Result<ExitCode> {
    let (events, events_rx) = mpsc::unbounded_channel();
    let (requests, requests_rx) = mpsc::unbounded_channel();
    let auto = Arc::clone(&side.auto);
    let task = tokio::spawn(side.run(contexts, events, requests_rx));
    let end = crate::tui::fleet::run::run(screen, events_rx, requests).await;
    task.abort();
    let run = auto.lock().ok().and_then(|mut slot| slot.take());
    if let Some(run) = run {
        halt_before_leaving(&run).await;
    }
    Ok(match end? {
        ConsoleEnd::Quit => ExitCode::SUCCESS,
        ConsoleEnd::Signalled => ExitCode::from(130),
    })
}

/// How long leaving waits for a fleet run started with `A` to halt.
const HALT_PATIENCE: Duration = Duration::from_secs(20);

/// Leaving the matrix (`q` twice, a signal) while its `A` run goes on would
/// end the run unattended, its clusters neither paused nor driven: it is
/// halted, and leaving waits (bounded) for it to pause what it touched.
async fn halt_before_leaving(run: &MatrixRun) {
    if run.ended() {
        return;
    }
    run.stop("the fleet matrix was closed");
    crate::cli::out::eline(&format!(
        "waiting for the fleet run to pause the clusters it touched (at most {} s)…",
        HALT_PATIENCE.as_secs()
    ));
    let deadline = tokio::time::Instant::now() + HALT_PATIENCE;
    while !run.ended() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !run.ended() {
        crate::cli::out::eline(
            "the fleet run did not end in time: check `rollcall fleet status` for clusters left in auto",
        );
    }
}

/// The fleet side: the connections, and what each cluster's watch is.
pub(super) struct FleetSide {
    reach: Arc<Reach>,
    daemonset: Option<DsRef>,
    ops: ConsoleOpsArgs,
    clusters: Vec<Cluster>,
    /// The fleet run started from the matrix's `A`, to halt it (shared with
    /// [`open`], which halts it when the screen closes).
    auto: Arc<std::sync::Mutex<Option<MatrixRun>>>,
}

/// One cluster, as far as it got.
#[derive(Default)]
struct Cluster {
    connection: Option<Connection>,
    /// The DaemonSet's target there and its watch, once watched.
    watched: Option<Watched>,
}

/// One cluster's watch, as the fleet side keeps it for its console.
struct Watched {
    target: Target,
    shared: Arc<Shared>,
    /// Starts the node-usage stream (fit) when the console opens.
    usage: UsageSwitch,
}

impl FleetSide {
    /// A fleet side reaching clusters with `reach`, on `daemonset` (`None`:
    /// chosen from the list first).
    pub(super) fn new(reach: Reach, daemonset: Option<DsRef>, ops: ConsoleOpsArgs) -> Self {
        Self {
            reach: Arc::new(reach),
            daemonset,
            ops,
            clusters: Vec::new(),
            auto: Arc::default(),
        }
    }

    async fn run(
        mut self,
        contexts: Vec<NamedContext>,
        events: UnboundedSender<FleetEvent>,
        mut requests: UnboundedReceiver<FleetRequest>,
    ) {
        let (connected_tx, mut connected) = mpsc::unbounded_channel();
        self.clusters = contexts.iter().map(|_| Cluster::default()).collect();
        let turns = Turns::default();
        for (index, context) in contexts.into_iter().enumerate() {
            let reach = Arc::clone(&self.reach);
            let connected_tx = connected_tx.clone();
            let turns = turns.clone();
            tokio::spawn(async move {
                // Connecting and the first lists take turns (`fleet::live::turns`).
                let turn = turns.take().await;
                let outcome = reach.connect(&context).await;
                let _ = connected_tx.send((index, outcome, turn));
            });
        }
        drop(connected_tx);
        loop {
            tokio::select! {
                Some((index, outcome, turn)) = connected.recv() => match outcome {
                    Ok(connection) => self.connected(index, connection, turn, &events),
                    Err(failure) => {
                        turn.end();
                        let _ = events.send(FleetEvent::Link { index, link: Link::failed(failure) });
                    }
                },
                request = requests.recv() => match request {
                    None => return,
                    Some(FleetRequest::Choose(key)) => self.choose(&key, &events),
                    Some(FleetRequest::Open(index)) => self.open_console(index, &events),
                    Some(FleetRequest::Auto { daemonset, contexts, policy }) => {
                        let setup = super::fleet_matrix_run::Setup {
                            options: self.reach.options().clone(),
                            connections: self.connections_to(&contexts),
                            patience: self.reach.timeout(),
                            journal: self.ops.journal.clone(),
                            read_only: self.ops.read_only,
                        };
                        let run = super::fleet_matrix_run::start(
                            setup, &daemonset, &contexts, policy, &events,
                        );
                        if let Ok(mut slot) = self.auto.lock() {
                            *slot = run;
                        }
                    }
                    Some(FleetRequest::HaltAuto) => {
                        if let Some(run) = self.auto.lock().ok().as_deref().and_then(Option::as_ref) {
                            run.stop("stopped from the fleet matrix (A)");
                        }
                    }
                },
            }
        }
    }

    fn connected(
        &mut self,
        index: usize,
        connection: Connection,
        turn: Turn,
        events: &UnboundedSender<FleetEvent>,
    ) {
        let _ = events.send(FleetEvent::Connected {
            index,
            simulated: connection.server_kind.simulated(),
        });
        if let Some(daemonset) = self.daemonset.clone() {
            self.watch(index, &connection, &daemonset, Some(turn), events);
        } else {
            turn.end();
            let client = connection.client.clone();
            let timeout = self.reach.timeout();
            let events = events.clone();
            tokio::spawn(async move {
                let answer = list_daemonsets(client, timeout).await;
                let _ = events.send(FleetEvent::Listed { index, answer });
            });
        }
        if let Some(cluster) = self.clusters.get_mut(index) {
            cluster.connection = Some(connection);
        }
    }

    /// The connections made to `contexts`, by context.
    fn connections_to(
        &self,
        contexts: &[String],
    ) -> std::collections::BTreeMap<String, Connection> {
        self.clusters
            .iter()
            .filter_map(|cluster| cluster.connection.clone())
            .filter(|connection| contexts.contains(&connection.context))
            .map(|connection| (connection.context.clone(), connection))
            .collect()
    }

    fn choose(&mut self, key: &str, events: &UnboundedSender<FleetEvent>) {
        let Ok(daemonset) = key.parse::<DsRef>() else {
            return;
        };
        self.daemonset = Some(daemonset.clone());
        let connected: Vec<(usize, Connection)> = self
            .clusters
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.connection.clone().map(|conn| (i, conn)))
            .collect();
        for (index, connection) in connected {
            self.watch(index, &connection, &daemonset, None, events);
        }
    }

    /// Starts the console's watch on the DaemonSet in cluster `index` and
    /// the row builder that observes its cache.
    fn watch(
        &mut self,
        index: usize,
        connection: &Connection,
        daemonset: &DsRef,
        turn: Option<Turn>,
        events: &UnboundedSender<FleetEvent>,
    ) {
        let target = match self.reach.target_in(daemonset, connection) {
            Ok(target) => target,
            Err(failure) => {
                if let Some(turn) = &turn {
                    turn.end();
                }
                let _ = events.send(FleetEvent::Link {
                    index,
                    link: Link::failed(failure),
                });
                return;
            }
        };
        // The rows read no fit: every pod of the cluster is listed only
        // once its console opens (`open_console`).
        let handle = watch::spawn_without_usage(
            connection.watch_client.clone(),
            Some(target.namespace.clone()),
            Some(target.clone()),
        );
        let shared = Arc::clone(&handle.shared);
        let usage = handle.usage_switch();
        let (hold, aside) = tokio::sync::watch::channel(false);
        let follower_events = events.clone();
        let first = FirstList {
            since: jiff::Timestamp::now(),
            within: self.reach.timeout(),
        };
        tokio::spawn(crate::fleet::live::follow::follow(
            Arc::clone(&shared),
            target.clone(),
            first,
            aside,
            move |observation| {
                // The row is read (or known unreadable): the next cluster's turn.
                if !matches!(observation.link, Link::Loading { .. })
                    && let Some(turn) = &turn
                {
                    turn.end();
                }
                follower_events
                    .send(FleetEvent::Observed {
                        index,
                        observation: Box::new(observation),
                    })
                    .is_ok()
            },
        ));
        let _ = events.send(FleetEvent::Attached {
            index,
            watch: handle,
            hold,
        });
        if let Some(cluster) = self.clusters.get_mut(index) {
            cluster.watched = Some(Watched {
                target,
                shared,
                usage,
            });
        }
    }

    /// Wires cluster `index`'s console in the background (asking who the
    /// user is takes a request); the screen opens it when it is ready.
    fn open_console(&self, index: usize, events: &UnboundedSender<FleetEvent>) {
        let Some(cluster) = self.clusters.get(index) else {
            return;
        };
        let (Some(connection), Some(watched)) = (&cluster.connection, &cluster.watched) else {
            let _ = events.send(FleetEvent::Console {
                index,
                console: Err("not connected: no console to open".to_owned()),
            });
            return;
        };
        // Fit and usage come in while the console is wired (and stay on).
        watched.usage.start();
        let (connection, target, shared) = (
            connection.clone(),
            watched.target.clone(),
            Arc::clone(&watched.shared),
        );
        let ops = self.ops.clone();
        let timeout = self.reach.timeout();
        let events = events.clone();
        tokio::spawn(async move {
            let wired = tokio::time::timeout(
                timeout,
                wire_console(
                    &connection,
                    Some(target.namespace.clone()),
                    Some(&target),
                    &ops,
                    shared,
                ),
            )
            .await;
            let console = match wired {
                Err(_) => Err(format!(
                    "{}: wiring the console did not finish within {}s",
                    connection.context,
                    timeout.as_secs()
                )),
                Ok(Err(err)) => Err(format!(
                    "{}: {}",
                    connection.context,
                    crate::cli::error_text(&err)
                )),
                Ok(Ok(wired)) => Ok(Box::new(Nested {
                    info: ConsoleInfo {
                        context: connection.context.clone(),
                        server: connection.server.clone(),
                        note: Some("from the fleet matrix: Esc on the grid goes back".to_owned()),
                    },
                    simulated: connection.server_kind.simulated(),
                    target: Some(target),
                    ops: Some(wired.ops),
                    logs: Some(wired.logs),
                    until_closed: wired.reverts,
                })),
            };
            let _ = events.send(FleetEvent::Console { index, console });
        });
    }
}

/// Every DaemonSet a cluster has (names only), bounded by the request timeout.
async fn list_daemonsets(
    client: kube::Client,
    timeout: std::time::Duration,
) -> Result<Vec<Target>, String> {
    let api = Api::<DaemonSet>::all(client);
    let listed = tokio::time::timeout(timeout, api.list_metadata(&ListParams::default()))
        .await
        .map_err(|_| {
            format!(
                "listing DaemonSets did not finish within {}s",
                timeout.as_secs()
            )
        })?
        .map_err(|err| err.to_string())?;
    Ok(listed
        .items
        .into_iter()
        .filter_map(|item| {
            Some(Target {
                namespace: item.metadata.namespace?,
                name: item.metadata.name?,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests;

//! `rollcall sim --clusters N`: serve an embedded fleet headless until
//! SIGINT or SIGTERM — N embedded clusters, each started as `rollcall sim`
//! starts one, and one kubeconfig naming them `rollcall-sim-1` … `rollcall-sim-N`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::sim::{SimArgs, daemon_set_names, embedded_options, serve_options, stop_signal};
use crate::cli::out;
use crate::sim::embedded::fleet::{self, Fleet};
use crate::sim::embedded::restart;
use crate::sim::fault::Fault;
use crate::sim::kubeconfig::MemberAuth;

/// Starts the fleet, installs the faults on the member(s) they target,
/// writes the kubeconfig, announces, and serves until a signal.
pub(super) async fn serve(
    args: &SimArgs,
    count: usize,
    faults: Vec<Fault>,
) -> anyhow::Result<ExitCode> {
    if let Some(target) = args.fault_cluster
        && !(1..=count).contains(&target)
    {
        anyhow::bail!("--fault-cluster {target}: the fleet has members 1 to {count}");
    }
    if args.churn.is_some() {
        anyhow::bail!("--churn is for one cluster: leave out --clusters to use it");
    }
    // A scenario named (or a snapshot given) is what every member runs;
    // otherwise the members vary.
    let vary = args.scenario.is_none() && args.snapshot.is_empty();
    let mut fleet = fleet::start(&embedded_options(args), &serve_options(args), count, vary)
        .await
        .context("cannot start the embedded fleet")?;
    let faulted = |index: usize| args.fault_cluster.is_none_or(|target| target == index + 1);
    if !faults.is_empty() {
        for (index, member) in fleet.members.iter().enumerate() {
            if faulted(index) {
                tracing::info!(context = %member.context, ?faults, "fault injection on");
                member.faults.install(faults.clone());
            }
        }
    }
    // Counted from when the faults were installed, as their windows are.
    let origin = tokio::time::Instant::now();
    let restarts = restart::plan(&faults, (0..count).filter(|&index| faulted(index)));
    let first_port = fleet.members.first().map_or(0, |m| m.cluster.addr().port());
    let path = args.kubeconfig_out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("rollcall-sim-fleet-{first_port}.kubeconfig"))
    });
    let auth = if args.exec_auth {
        MemberAuth::Exec
    } else {
        MemberAuth::Token
    };
    if let Err(error) = fleet.write_kubeconfig_with(&path, auth) {
        fleet.shutdown().await;
        return Err(error)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()));
    }
    if let Some(first) = fleet.members.first() {
        for line in &first.cluster.simulation.load_report {
            out::eline(line);
        }
    }
    let result = announce_and_wait(args, &mut fleet, &path, &restarts, origin).await;
    fleet.shutdown().await;
    if args.kubeconfig_out.is_none() {
        crate::sim::kubeconfig::remove(&path);
    }
    result
}

async fn announce_and_wait(
    args: &SimArgs,
    fleet: &mut Fleet,
    path: &Path,
    restarts: &[restart::Planned],
    origin: tokio::time::Instant,
) -> anyhow::Result<ExitCode> {
    let mut stop = Box::pin(stop_signal()?);
    let mut banner = format!("embedded fleet of {} clusters\n", fleet.members.len());
    for member in &fleet.members {
        let simulation = &member.cluster.simulation;
        let variant = member.variant.map_or("", |v| v.describe());
        let faulted = args
            .fault_cluster
            .is_none_or(|k| member.context == fleet::context_name(k))
            && !args.fault.is_empty();
        let _ = writeln!(
            banner,
            "  {} at {}: {} ({} nodes, {} daemonsets, {} pods){}{}",
            member.context,
            member.cluster.server.url(),
            simulation.scenario.name,
            simulation.loaded.nodes,
            simulation.loaded.daemon_sets,
            simulation.loaded.pods,
            if variant.is_empty() {
                String::new()
            } else {
                format!("; {variant}")
            },
            if faulted { "; faults injected" } else { "" },
        );
    }
    if let Some(first) = fleet.members.first() {
        let _ = writeln!(
            banner,
            "daemonsets: {}",
            daemon_set_names(&first.cluster.simulation.store)
        );
    }
    let last = fleet::context_name(fleet.members.len());
    // The scenario name comes from a file: printed through the sanitiser.
    out::stdout(&format!(
        "{banner}kubeconfig: {} (contexts {} … {last}{})\n\
         try: kubectl --kubeconfig {} --context {last} get ds -A\n\
         stop with Ctrl-C\n",
        path.display(),
        fleet::context_name(1),
        if args.kubeconfig_out.is_some() {
            ""
        } else {
            "; removed on exit"
        },
        path.display(),
    ))?;
    let stopped = restart::drive(
        fleet,
        restarts,
        origin,
        &embedded_options(args),
        &serve_options(args),
        &mut stop,
    )
    .await
    .context("a restarted member could not come back")?;
    if !stopped {
        stop.await;
    }
    Ok(ExitCode::from(130))
}

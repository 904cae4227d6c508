//! The live matrix without its screen, for `fleet_scale`: every context of
//! the kubeconfig connected and watched by the matrix's own fleet side
//! (`rollcall::cli::fleet_live::start_headless`), its events applied to a
//! [`Matrix`] as the screen applies them. Reports the time to the first
//! live row with cells and to every row so, CPU and RSS then, and the CPU
//! and RSS after watching idle for a while.

use std::time::{Duration, Instant};

use rollcall::cli::cluster_args::ClusterArgs;
use rollcall::cli::fleet::ClusterChoice;
use rollcall::fleet::live::matrix::Matrix;
use rollcall::tui::fleet::FleetEvent;

use super::proc_stats::{cpu_secs, peak_mb, rss_mb};
use super::sockets::{per_remote_port, spread};

/// Whether a row is done: live, with cells.
fn done(matrix: &Matrix, index: usize) -> bool {
    matrix.rows[index].link.is_live() && matrix.rows[index].view.is_some()
}

pub fn child(kubeconfig: &std::path::Path, target: &str, idle_secs: u64) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let started = Instant::now();
        let cluster = ClusterArgs {
            kubeconfig: Some(kubeconfig.to_path_buf()),
            ..ClusterArgs::default()
        };
        let choice = ClusterChoice {
            all_contexts: true,
            ..ClusterChoice::default()
        };
        let (contexts, mut events, _requests) =
            rollcall::cli::fleet_live::start_headless(&cluster, &choice, target.parse()?)?;
        let count = contexts.len();
        let mut matrix = Matrix::new(target.to_owned(), contexts, None);
        let mut watches = Vec::new();
        let mut first = None;
        let deadline = started + Duration::from_secs(300);
        while (0..count).any(|i| !done(&matrix, i)) {
            let event = tokio::time::timeout_at(deadline.into(), events.recv())
                .await
                .map_err(|_| anyhow::anyhow!("not every row was live within 300 s"))?
                .ok_or_else(|| anyhow::anyhow!("the fleet side ended"))?;
            match event {
                FleetEvent::Observed { index, observation } => {
                    matrix.observe(index, *observation);
                    if first.is_none() && done(&matrix, index) {
                        first = Some(started.elapsed());
                    }
                }
                FleetEvent::Link { index, link } => matrix.set_link(index, link),
                FleetEvent::Attached { watch, hold, .. } => watches.push((watch, hold)),
                FleetEvent::Listed { .. }
                | FleetEvent::Console { .. }
                | FleetEvent::Connected { .. }
                | FleetEvent::AutoStep(_)
                | FleetEvent::AutoEnded(_) => {}
            }
        }
        let complete = started.elapsed();
        let (cpu, rss) = (cpu_secs(), rss_mb());
        // Idle: the rows stay live; drain what still comes (bookmarks change nothing).
        let idle_end = Instant::now() + Duration::from_secs(idle_secs);
        while let Ok(Some(event)) = tokio::time::timeout_at(idle_end.into(), events.recv()).await {
            if let FleetEvent::Observed { index, observation } = event {
                matrix.observe(index, *observation);
            }
        }
        let idle_cpu = cpu_secs() - cpu;
        let live = (0..count).filter(|&i| done(&matrix, i)).count();
        let streams = spread(
            watches
                .iter()
                .map(|(watch, _)| watch.shared.lock().streams().len()),
        );
        let connections = spread(per_remote_port().into_values());
        super::line(&format!(
            "cost: first row {:.2}s, every row {:.2}s ({count} clusters), {cpu:.2} CPU s, RSS {rss:.0} MB; \
             idle {idle_secs}s: {:.1}% of a core, RSS {:.0} MB, peak {:.0} MB, {live} live; \
             streams {streams}, TCP {connections}",
            first.unwrap_or_default().as_secs_f64(),
            complete.as_secs_f64(),
            idle_cpu * 100.0 / Duration::from_secs(idle_secs.max(1)).as_secs_f64(),
            rss_mb(),
            peak_mb(),
        ));
        drop(watches);
        Ok(())
    })
}

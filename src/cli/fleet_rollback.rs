//! `rollcall fleet rollback -f fleet.yaml --yes [--to-revision R]`: the
//! plan's waves in reverse, and in each cluster the rollback `rollcall
//! rollback` makes, carried out by [`crate::fleet::run`] with the fleet's
//! budget, stop and pauses as `fleet auto` has them; `--include-cordoned`
//! and `--despite-fit` mean what they mean to `rollcall rollback`. Exit
//! codes as `fleet auto`.

use std::process::ExitCode;

use clap::Args;

use super::fleet_auto::{FleetRunArgs, carry_out, dry_run_act};
use super::fleet_plan::{check, prepare_plan, read_all};
use crate::cli::act_args::confirm;
use crate::fleet::run::{Kind, RollbackChoice};

/// Arguments of `rollcall fleet rollback`.
#[derive(Debug, Args)]
pub struct FleetRollbackArgs {
    /// The plan, and how to carry it out.
    #[command(flatten)]
    pub run: FleetRunArgs,
    /// The revision to go back to in every cluster (default: each cluster's previous one).
    #[arg(long, value_name = "R")]
    pub to_revision: Option<i64>,
    /// Also move back cordoned nodes (by default each cluster lists and
    /// leaves them, and the rollback ends incomplete with exit 1).
    #[arg(long)]
    pub include_cordoned: bool,
    /// Move a node back although the revision's pod will not fit there (by
    /// default a cluster with such a node is not rolled back, naming it and why).
    #[arg(long)]
    pub despite_fit: bool,
}

/// Runs `rollcall fleet rollback`.
pub async fn run(args: &FleetRollbackArgs) -> anyhow::Result<ExitCode> {
    let choice = RollbackChoice {
        to_revision: args.to_revision,
        include_cordoned: args.include_cordoned,
        despite_fit: args.despite_fit,
    };
    let args = &args.run;
    let act = dry_run_act(&args.act, args.dry_run);
    let prepared = prepare_plan(&args.cluster, &args.file)?;
    check(&prepared.run_plan(), &read_all(&prepared).await)?;
    let to = choice.to_revision.map_or_else(
        || "the previous revision".to_owned(),
        |r| format!("revision {r}"),
    );
    confirm(
        &format!(
            "roll {} back to {to} across {} cluster(s), waves in reverse (plan {})",
            prepared.daemonset,
            prepared.assignment.contexts().count(),
            prepared.digest
        ),
        act.yes,
    )?;
    let kind = Kind::Rollback(choice);
    carry_out(&prepared, args, &act, kind, "rollcall fleet rollback").await
}

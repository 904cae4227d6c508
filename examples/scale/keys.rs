//! (e) The rollout keys at full scale, through the console's own dispatch:
//! each figure is what the console does, under the cache lock, from the
//! keypress to the writes it hands to the effects task (the first API
//! request). Nothing is sent: the writes are dropped and their answers faked,
//! so the cluster is unchanged between rounds.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Context, bail};
use kube::runtime::watcher;
use rollcall::audit::Roster;
use rollcall::cluster::cache::{Cache, WatchUpdate};
use rollcall::cluster::watch;
use rollcall::ops::write::{Outcome, Write, WriteEvent, WriteRequest};
use rollcall::tui::app::App;
use rollcall::tui::confirm::Modal;
use rollcall::tui::effect::Effect;
use rollcall::tui::keymap::Action;
use rollcall::tui::ops::{OpsConsole, OpsEvent};
use rollcall::tui::roster::{RosterState, Snapshot as RosterSnapshot};

use super::Timings;

/// Rounds per key (the mean and max are over these).
const ROUNDS: usize = 5;
/// Changed pods the auto-advance step and the roster react to.
const CHANGES: usize = 20;

/// Measures every key; returns the report's `key=value` pairs.
pub(crate) fn costs(app: &mut App, shared: &watch::Shared) -> anyhow::Result<String> {
    app.ops = OpsConsole::new(false, "scale-bench".to_owned());
    let mut out = Vec::new();
    let advance = repeat(|| key_and_yes(app, shared, Action::AdvanceNext))?;
    out.push(("n", advance));
    let first = app
        .rows
        .in_name_order()
        .next()
        .map(|row| row.name().to_owned());
    app.ui.selected_node = first;
    let canary = repeat(|| key_and_yes(app, shared, Action::ToggleCanary))?;
    out.push(("c", canary));
    let plan = repeat(|| plan_view(app, shared))?;
    out.push(("plan", plan));
    let (auto, auto_first, auto_step) = auto_costs(app, shared)?;
    out.extend([
        ("auto", auto),
        ("auto_first", auto_first),
        ("auto_step", auto_step),
    ]);
    let (headless_first, headless_step, copied) = headless_auto_costs(app, shared)?;
    out.extend([
        ("headless_first", headless_first),
        ("headless_step", headless_step),
        ("copied", copied),
    ]);
    let (copy, compare, change) = roster_costs(app, shared)?;
    out.extend([
        ("roster_copy", copy),
        ("roster_compare", compare),
        ("roster_change", change),
    ]);
    let mut line = String::new();
    for (key, timings) in &out {
        println!(
            "# key {key}: mean {:.2} ms, max {:.2} ms over {} rounds",
            timings.mean_ms(),
            timings.max_ms(),
            timings.count
        );
        let _ = write!(
            line,
            "{key}_mean_ms={:.3} {key}_max_ms={:.3} ",
            timings.mean_ms(),
            timings.max_ms()
        );
    }
    Ok(line)
}

fn repeat(
    mut round: impl FnMut() -> anyhow::Result<std::time::Duration>,
) -> anyhow::Result<Timings> {
    let mut timings = Timings::default();
    for _ in 0..ROUNDS {
        timings.add(round()?);
    }
    Ok(timings)
}

/// The writes of an effect, or why the console made none.
fn writes(app: &App, effect: Option<Effect>) -> anyhow::Result<Vec<(u64, WriteRequest)>> {
    match effect {
        Some(Effect::Writes(writes)) if !writes.is_empty() => Ok(writes),
        _ => bail!(
            "the console made no write: {:?}",
            app.ui.message.as_ref().map(|m| m.text.clone())
        ),
    }
}

/// A key that opens a confirmation, then yes: the time to its writes.
fn key_and_yes(
    app: &mut App,
    shared: &watch::Shared,
    key: Action,
) -> anyhow::Result<std::time::Duration> {
    let cache = shared.lock();
    let now = jiff::Timestamp::now();
    let started = Instant::now();
    app.update(key, &cache, now);
    let effect = app.update(Action::Confirm, &cache, now);
    let took = started.elapsed();
    drop(cache);
    writes(app, effect)?;
    // Never sent: as if answered.
    app.ops.pending.clear();
    Ok(took)
}

fn plan_view(app: &mut App, shared: &watch::Shared) -> anyhow::Result<std::time::Duration> {
    let cache = shared.lock();
    let now = jiff::Timestamp::now();
    let started = Instant::now();
    app.update(Action::ShowPlan, &cache, now);
    let took = started.elapsed();
    if !matches!(app.ops.modal, Some(Modal::Info { .. })) {
        bail!(
            "the plan view did not open: {:?}",
            app.ui.message.as_ref().map(|m| m.text.clone())
        );
    }
    app.update(Action::Cancel, &cache, now);
    Ok(took)
}

/// Fakes a successful answer to each write, as the effects task would send it.
fn answer(app: &mut App, writes: Vec<(u64, WriteRequest)>) {
    for (id, request) in writes {
        let result = Ok(match request.write {
            Write::DeletePod { .. } => Outcome::PodDeleted,
            _ => Outcome::DaemonSetPatched {
                resource_version: None,
            },
        });
        app.ops_on_event(
            OpsEvent::Write(Box::new(WriteEvent {
                id,
                request,
                result,
                journal_error: None,
            })),
            jiff::Timestamp::now(),
        );
    }
}

/// Re-applies one of the target's pods as a watch event (the `i`-th): its
/// node's row is recomputed, as for any change of the pod.
fn change_one_pod(cache: &mut Cache, i: usize) -> anyhow::Result<()> {
    let count = cache.pods().count().max(1);
    let pod = cache
        .pods()
        .nth(i * 7919 % count)
        .cloned()
        .context("no pod to change")?;
    cache.apply(
        WatchUpdate::Pod(watcher::Event::Apply(pod)),
        jiff::Timestamp::now(),
    );
    Ok(())
}

/// `A` and yes; the first batch; then one step per changed pod while the
/// batch is in flight (its delete was answered, its replacement not there).
fn auto_costs(
    app: &mut App,
    shared: &watch::Shared,
) -> anyhow::Result<(Timings, Timings, Timings)> {
    let (mut start, mut first, mut step) =
        (Timings::default(), Timings::default(), Timings::default());
    for _ in 0..ROUNDS {
        let mut cache = shared.lock();
        let now = jiff::Timestamp::now();
        let started = Instant::now();
        app.update(Action::ToggleAuto, &cache, now);
        let effect = app.update(Action::Confirm, &cache, now);
        start.add(started.elapsed());
        let sent = writes(app, effect)?;
        answer(app, sent);
        let started = Instant::now();
        let effect = app.ops_on_change(&cache, now);
        first.add(started.elapsed());
        let sent = writes(app, effect)?;
        answer(app, sent);
        for i in 0..CHANGES {
            change_one_pod(&mut cache, i)?;
            app.refresh(&mut cache, jiff::Timestamp::now());
            let started = Instant::now();
            let effect = app.ops_on_change(&cache, jiff::Timestamp::now());
            step.add(started.elapsed());
            // The run's lease is renewed every few seconds: a state write.
            let renewals = match effect {
                Some(Effect::Writes(sent)) => sent,
                _ => Vec::new(),
            };
            let waiting = renewals.iter().all(|(_, request)| {
                request.record.action == rollcall::ops::journal_action::JournalAction::Heartbeat
            });
            if !waiting || app.ops.auto.is_none() {
                bail!(
                    "the auto run did not wait for its batch: {:?}",
                    app.ui.message.as_ref().map(|m| m.text.clone())
                );
            }
            answer(app, renewals);
        }
        drop(cache);
        // Stop the run in this console (its stop write is dropped).
        app.ops.auto = None;
        app.ops.pending.clear();
    }
    Ok((start, first, step))
}

/// `rollcall auto` (headless): what its loop does on each wake-up under the
/// cache lock (`Follower::decide`): bring its row cache up to date with what
/// changed, then decide (`ops::decide::next_move`) from the live snapshot:
/// the first batch (every row computed once), then one step per changed pod
/// while that batch is in flight. Then, for comparison, the same first
/// decision from a snapshot copied out of the cache with every row computed
/// (what a one-shot command pays, and what the loop paid on every change).
fn headless_auto_costs(
    app: &App,
    shared: &watch::Shared,
) -> anyhow::Result<(Timings, Timings, Timings)> {
    use rollcall::ops::auto::{AutoPolicy, AutoRun};
    use rollcall::ops::follow::refreshed_snapshot;
    use rollcall::ops::run::decide::{Next, next_move};
    use rollcall::ops::run::settings::RunSettings;
    use rollcall::ops::snapshot::Snapshot;
    use rollcall::rows::RowCache;
    let target = app.ui.target.clone().context("no target")?;
    let settings = RunSettings {
        policy: AutoPolicy {
            batch: 1,
            soak: std::time::Duration::from_secs(30),
            timeout: std::time::Duration::from_secs(300),
        },
        canary_selector: None,
        rollback: None,
        despite_failing: true,
        despite_fit: false,
        include_cordoned: false,
        fleet_run: None,
    };
    // The follower takes the cache's changes; here the console's stay for it.
    let step = |cache: &Cache, rows: &mut RowCache, run: &mut AutoRun| -> anyhow::Result<Next> {
        let changes = cache.changes().clone();
        let snapshot = refreshed_snapshot(cache, &changes, rows, &target).context("no snapshot")?;
        let state = snapshot.state()?;
        Ok(next_move(
            run,
            &snapshot,
            &state,
            &settings,
            None,
            jiff::Timestamp::now(),
        )?)
    };
    let (mut first, mut steps) = (Timings::default(), Timings::default());
    for _ in 0..ROUNDS {
        let mut rows = RowCache::default();
        let mut run = AutoRun::new(settings.policy);
        let mut cache = shared.lock();
        let started = Instant::now();
        let next = step(&cache, &mut rows, &mut run)?;
        first.add(started.elapsed());
        let Next::Delete(victims, _) = next else {
            bail!("the headless run made no first batch: {next:?}");
        };
        for victim in &victims {
            run.deleted(&victim.node, Ok(()), jiff::Timestamp::now());
        }
        for i in 0..CHANGES {
            change_one_pod(&mut cache, i)?;
            let started = Instant::now();
            let next = step(&cache, &mut rows, &mut run)?;
            steps.add(started.elapsed());
            if !matches!(next, Next::Wait { .. }) {
                bail!("the headless run did not wait for its batch: {next:?}");
            }
        }
    }
    let mut copied = Timings::default();
    for _ in 0..ROUNDS {
        let cache = shared.lock();
        let started = Instant::now();
        let snapshot = Snapshot::from_cache(&cache, &target).context("no snapshot")?;
        let state = snapshot.state()?;
        let mut run = AutoRun::new(settings.policy);
        let next = next_move(
            &mut run,
            &snapshot,
            &state,
            &settings,
            None,
            jiff::Timestamp::now(),
        )?;
        copied.add(started.elapsed());
        if !matches!(next, Next::Delete(..)) {
            bail!("the copied snapshot made no first batch: {next:?}");
        }
    }
    Ok((first, steps, copied))
}

/// The roster (`--roster`): a comparison from scratch (the copy under the
/// cache lock, then the comparison the console runs on its own thread), as at
/// start or after a relist; then what one changed pod costs the console
/// (`RosterState::note_changes`, under the lock, as `App::refresh` calls it).
fn roster_costs(
    app: &mut App,
    shared: &watch::Shared,
) -> anyhow::Result<(Timings, Timings, Timings)> {
    let target = app.ui.target.clone();
    let roster = {
        let cache = shared.lock();
        Roster::from_entries(
            cache
                .nodes()
                .map(|n| (n.name().to_owned(), n.uid().to_owned())),
        )?
    };
    let mut state = RosterState::new(roster);
    let (mut copy, mut compare, mut change) =
        (Timings::default(), Timings::default(), Timings::default());
    for _ in 0..ROUNDS {
        let cache = shared.lock();
        let started = Instant::now();
        let snapshot = RosterSnapshot::take(&cache, target.as_ref());
        let copied = started.elapsed();
        copy.add(copied);
        snapshot.context("the roster snapshot is not complete")?;
        let started = Instant::now();
        state.recompute_now(&cache, target.as_ref());
        // The comparison alone: the whole recompute less its copy.
        compare.add(started.elapsed().saturating_sub(copied));
        if state.report().is_none() {
            bail!("the roster comparison made no report");
        }
    }
    for i in 0..CHANGES {
        let mut cache = shared.lock();
        change_one_pod(&mut cache, i)?;
        let changes = cache.take_changes();
        let started = Instant::now();
        state.note_changes(&changes, &cache, target.as_ref());
        change.add(started.elapsed());
    }
    Ok((copy, compare, change))
}

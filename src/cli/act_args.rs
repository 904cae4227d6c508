//! Flags and helpers shared by the headless rollout commands: `--yes`,
//! `--read-only`, `--journal`, confirmation on a terminal, the RBAC pre-check,
//! and building the session (client, target, executor).

use std::io::{BufRead as _, IsTerminal as _};
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

use crate::cli::cluster_args::{ClusterArgs, GlobalArgs, connect_saying};
use crate::cluster::connect::Connection;
use crate::model::DsRef;
use crate::ops::drive::Progress;
use crate::ops::follow::Follower;
use crate::ops::interrupt::Interrupt;
use crate::ops::journal::Journal;
use crate::ops::rbac::Operation;
use crate::ops::snapshot::Target;
use crate::ops::write::Executor;

/// Flags every acting command takes.
#[derive(Clone, Debug, Default, Args)]
pub struct ActArgs {
    /// Do not ask for confirmation (required when there is no terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The global `--read-only` (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub read_only: bool,
    /// The global `--journal` (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub journal: Option<PathBuf>,
    /// No progress lines (the result and errors are still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// `table`: lines for people (progress with a timestamp on stderr);
    /// `json`: only JSON lines on stdout, one object per step, the last
    /// `{"event":"end","exitCode":N}`.
    #[arg(long, short = 'o', value_enum, default_value_t = StepOutput::Table)]
    pub output: StepOutput,
}

/// How an acting command reports its steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StepOutput {
    /// Timestamped lines on stderr.
    #[default]
    Table,
    /// JSON lines on stdout.
    Json,
}

/// The progress printer of a run: one line per step, sanitised; JSON lines
/// with `-o json`; nothing with `--quiet`.
pub fn progress_printer(act: &ActArgs) -> Box<dyn Fn(Progress) + Send + Sync> {
    let (quiet, output) = (act.quiet, act.output);
    Box::new(move |step: Progress| {
        if quiet {
            return;
        }
        match output {
            StepOutput::Json => json_line(&step),
            StepOutput::Table => crate::cli::out::eline(&step_line(None, &step)),
        }
    })
}

/// One step as a line, sanitised: `TIME [CONTEXT] [node N] [rA → rB]: message`
/// (the context of a fleet run's cluster).
pub fn step_line(context: Option<&str>, step: &Progress) -> String {
    let time = step.time.round(jiff::Unit::Second).unwrap_or(step.time);
    crate::sanitize::sanitize(&format!(
        "{time}{}: {}",
        step_subject(context, step),
        step.message
    ))
    .into_owned()
}

/// A step as a live screen shows it: [`step_line`] without the time (the
/// screen shows it as it happens).
pub fn step_now(context: Option<&str>, step: &Progress) -> String {
    let subject = step_subject(context, step);
    let text = if subject.is_empty() {
        step.message.clone()
    } else {
        format!("{}: {}", subject.trim_start(), step.message)
    };
    crate::sanitize::sanitize(&text).into_owned()
}

/// Who, which node and which revisions a step is about, each after a space.
fn step_subject(context: Option<&str>, step: &Progress) -> String {
    let who = context.map(|c| format!(" {c}")).unwrap_or_default();
    let node = step
        .node
        .as_deref()
        .map(|n| format!(" node {n}"))
        .unwrap_or_default();
    let revisions = match (step.revision_from, step.revision_to) {
        (Some(from), Some(to)) => format!(" r{from} → r{to}"),
        _ => String::new(),
    };
    format!("{who}{node}{revisions}")
}

/// Writes `value` as one JSON line on stdout (`-o json`).
pub fn json_line(value: &impl serde::Serialize) {
    if let Ok(line) = crate::cli::out::json(value, false) {
        let _ = crate::cli::out::stdout_json(&format!("{line}\n"));
    }
}

/// A JSON line `{"time", "event", "message", ...fields}` (`fields`: an object
/// with camelCase keys).
fn event_line(event: &str, message: &str, fields: serde_json::Value) -> serde_json::Value {
    let mut line = serde_json::json!({
        "time": jiff::Timestamp::now(),
        "event": event,
        "message": message,
    });
    if let (Some(line), serde_json::Value::Object(fields)) = (line.as_object_mut(), fields) {
        line.extend(fields);
    }
    line
}

/// Reports one step's result: `text` as a line on stdout, or with `-o json`
/// a JSON line with `event`, `message` and `fields`.
pub fn step(act: &ActArgs, event: &str, text: &str, fields: serde_json::Value) {
    match act.output {
        StepOutput::Table => crate::cli::out::line(text),
        StepOutput::Json => json_line(&event_line(event, text, fields)),
    }
}

/// Ends a run with `text` and returns `code` as the exit code: the text goes
/// to stdout when `code` is 0, else to stderr; with `-o json`, the last JSON
/// line `{"event": "end", "exitCode", "message"}` on stdout.
pub fn finish(act: &ActArgs, code: u8, text: &str) -> std::process::ExitCode {
    match act.output {
        StepOutput::Json => json_line(&event_line(
            "end",
            text,
            serde_json::json!({ "exitCode": code }),
        )),
        StepOutput::Table if code == 0 => crate::cli::out::line(text),
        StepOutput::Table => crate::cli::out::eline(text),
    }
    std::process::ExitCode::from(code)
}

/// Installs the one interrupt handler of an acting run (after the last
/// question, before the first write); a second signal journals and exits.
pub fn install_interrupt(session: &Session) -> Interrupt {
    let journal = session.executor.journal().clone();
    let target = session.target.key();
    let actor = session.executor.actor().to_owned();
    Interrupt::install(move || {
        let _ = journal.append(&crate::ops::journal::JournalEntry {
            time: jiff::Timestamp::now().to_string(),
            user: actor.clone(),
            daemonset: target.clone(),
            action: crate::ops::journal_action::JournalAction::Interrupt,
            result: "exit".to_owned(),
            message: Some("interrupted twice: exited without pausing".to_owned()),
            ..crate::ops::journal::JournalEntry::default()
        });
    })
}

impl ActArgs {
    /// Takes `--read-only` and `--journal` from the global flags.
    pub fn apply(&mut self, global: &GlobalArgs) {
        self.read_only = global.read_only;
        self.journal.clone_from(&global.journal);
        // A dry run changes nothing, so there is nothing to confirm.
        self.yes |= global.read_only;
    }
}

/// A connected session on one DaemonSet.
pub struct Session {
    /// The connection.
    pub connection: Connection,
    /// The DaemonSet.
    pub target: Target,
    /// The one writer.
    pub executor: Executor,
}

/// Runs an async command body on a fresh runtime.
pub fn block_on<T>(
    future: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(future)
}

/// Connects and resolves the DaemonSet (its own namespace, else `-n`, else the context's).
pub async fn open(
    cluster: &ClusterArgs,
    daemonset: &DsRef,
    act: &ActArgs,
) -> anyhow::Result<Session> {
    let connection =
        connect_saying(&cluster.connect_options(), "cannot connect to the cluster").await?;
    let target = resolve(daemonset, cluster, &connection.namespace)?;
    let journal = Journal::from_flag(act.journal.as_deref())?;
    let actor = crate::ops::journal::actor(&connection).await;
    let executor = Executor::new(
        // Writes go without kube's retry layer: a delete is never resent;
        // a lost reply is resolved by reading the pod back.
        connection.watch_client.clone(),
        journal,
        act.read_only,
        connection.context.clone(),
        actor,
    );
    // --read-only on an acting command is a dry run: the writes are recorded
    // and printed, never sent.
    let executor = if act.read_only {
        executor.into_dry_run()
    } else {
        executor
    };
    Ok(Session {
        connection,
        target,
        executor,
    })
}

/// Follows the session's DaemonSet live; says on stderr what it waits for
/// while the cluster fails it, and the retries of its state writes.
pub fn follow(session: &Session) -> Follower {
    Follower::start(session.connection.watch_client.clone(), &session.target).with_notices(
        std::sync::Arc::new(|text: &str| crate::cli::out::eline(text)),
    )
}

/// The DaemonSet's namespace and name: from the text, else `-n`, else `default`
/// (the context's namespace).
pub fn resolve(daemonset: &DsRef, cluster: &ClusterArgs, default: &str) -> anyhow::Result<Target> {
    Ok(daemonset.resolve(cluster.namespace.as_deref(), default)?)
}

/// Refuses in read-only mode (a dry run goes on), then asks the server whether the user may do
/// `operation` ([`crate::ops::precheck`]); a denial is an error saying which
/// permission is missing (in a dry run, a note on stderr).
pub async fn precheck(session: &Session, operation: Operation, action: &str) -> anyhow::Result<()> {
    let checked = crate::ops::precheck::precheck(
        &session.executor,
        &session.connection.client,
        &session.target,
        operation,
        action,
    )
    .await
    .map_err(anyhow::Error::msg)?;
    if let Some(note) = checked {
        crate::cli::out::eline(&format!("note: the real run would fail: {note}"));
    }
    Ok(())
}

/// In a dry run (`--read-only`), prints the writes that would have been sent,
/// one line each (with `-o json`, one `dryRun` JSON line each: method, path,
/// patch type, body), then `then` (what would follow), and returns exit 0;
/// `None` when this is not a dry run.
pub fn print_dry_run(
    session: &Session,
    act: &ActArgs,
    then: Option<&str>,
) -> Option<std::process::ExitCode> {
    let dry_run = session.executor.dry_run()?;
    let planned = dry_run.planned();
    let summary = format!(
        "dry run (--read-only): nothing was changed; {} write(s) rollcall would make",
        planned.len()
    );
    if act.output == StepOutput::Json {
        for request in &planned {
            let (method, path, patch_type) = request.write.request();
            json_line(&event_line(
                "dryRun",
                &request.write.describe_request(),
                serde_json::json!({
                    "method": method,
                    "path": path,
                    "patchType": patch_type,
                    "body": request.write.body(),
                }),
            ));
        }
        let text = then.map_or(summary.clone(), |then| format!("{summary}; {then}"));
        return Some(finish(act, 0, &text));
    }
    crate::cli::out::line(&format!("{summary}:"));
    for request in &planned {
        crate::cli::out::line(&request.write.describe_request());
    }
    if let Some(then) = then {
        crate::cli::out::line(then);
    }
    Some(std::process::ExitCode::SUCCESS)
}

/// Asks `question` on the terminal unless `--yes`; refuses without a terminal.
pub fn confirm(question: &str, yes: bool) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        anyhow::bail!("{question}: refusing without --yes (no terminal to confirm on)");
    }
    crate::cli::out::stderr(&format!("{question} [y/N] "));
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        anyhow::bail!("cancelled")
    }
}

/// Parses `30s`, `5m`, `1h30m` (humantime).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{e} (examples: 30s, 5m, 1h30m)"))
}

#[cfg(test)]
mod tests {
    use super::{step_line, step_now};
    use crate::ops::drive::Progress;

    #[test]
    fn a_live_screen_shows_a_step_without_its_time_and_a_log_line_with_it() {
        let mut step = Progress::new("soak", Some("edge-02"), "soaking");
        step.time = "2026-12-04T13:32:43.4Z".parse().expect("a time");
        assert_eq!(
            step_line(Some("prod-1"), &step),
            "2026-12-04T13:32:43Z prod-1 node edge-02: soaking"
        );
        assert_eq!(
            step_now(Some("prod-1"), &step),
            "prod-1 node edge-02: soaking"
        );
        step.node = None;
        assert_eq!(step_now(None, &step), "soaking");
        assert_eq!(step_line(None, &step), "2026-12-04T13:32:43Z: soaking");
    }
}

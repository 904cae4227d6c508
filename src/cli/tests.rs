//! Parsing tests: global flags in either position, every DaemonSet form, the
//! kubectl-plugin name, and error causes printed once.

use super::*;

fn parse(args: &[&str]) -> Cli {
    let matches = command("rollcall")
        .try_get_matches_from(std::iter::once("rollcall").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let mut cli = from_matches(&matches).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    apply_globals(&mut cli);
    cli
}

#[test]
fn global_flags_go_before_or_after_the_subcommand() {
    let lines = [
        &[
            "--kubeconfig",
            "k",
            "--context",
            "c",
            "-n",
            "ns",
            "--read-only",
            "--journal",
            "j",
            "pause",
            "agent",
        ][..],
        &[
            "pause",
            "agent",
            "--kubeconfig",
            "k",
            "--context",
            "c",
            "-n",
            "ns",
            "--read-only",
            "--journal",
            "j",
        ][..],
        &[
            "-n",
            "ns",
            "pause",
            "--kubeconfig=k",
            "agent",
            "--context",
            "c",
            "--journal=j",
            "--read-only",
        ][..],
    ];
    for line in lines {
        let cli = parse(line);
        let Some(Command::Pause(args)) = cli.command else {
            panic!("{line:?}: not pause");
        };
        assert_eq!(
            (
                args.cluster.kubeconfig.as_deref(),
                args.cluster.context.as_deref(),
                args.cluster.namespace.as_deref(),
                args.act.read_only,
                args.act.journal.as_deref(),
                args.daemonset.name.as_str(),
            ),
            (
                Some(std::path::Path::new("k")),
                Some("c"),
                Some("ns"),
                true,
                Some(std::path::Path::new("j")),
                "agent"
            ),
            "{line:?}"
        );
    }
}

#[test]
fn the_console_takes_global_flags_and_a_daemonset() {
    let cli = parse(&["--kubeconfig", "k", "-n", "ops", "ds/agent", "--read-only"]);
    assert!(cli.command.is_none());
    assert_eq!(cli.console.cluster.namespace.as_deref(), Some("ops"));
    assert!(cli.console.ops.read_only);
    assert_eq!(
        cli.console.daemonset.map(|d| (d.namespace, d.name)),
        Some((None, "agent".to_owned()))
    );
}

#[test]
fn every_command_takes_the_daemonset_positionally_in_every_form() {
    let forms = [
        "kube-system/node-agent",
        "node-agent",
        "ds/node-agent",
        "daemonset/node-agent",
        "daemonsets.apps/node-agent",
    ];
    for form in forms {
        let lines: [Vec<&str>; 9] = [
            vec!["status", form],
            vec!["history", form],
            vec!["pause", form],
            vec!["resume", form],
            vec!["advance", form, "--next", "1"],
            vec!["auto", form],
            vec!["rollback", form],
            vec!["explain", form, "-f", "x.json"],
            vec!["audit", form, "--roster", "r.json"],
        ];
        for line in lines {
            let cli = parse(&line);
            let daemonset = match cli.command {
                Some(Command::Status(a)) => a.daemonset,
                Some(Command::History(a)) => a.daemonset,
                Some(Command::Pause(a)) => a.daemonset,
                Some(Command::Resume(a)) => a.daemonset,
                Some(Command::Advance(a)) => a.daemonset,
                Some(Command::Auto(a)) => a.daemonset,
                Some(Command::Rollback(a)) => a.daemonset,
                Some(Command::Explain(a)) => a.daemonset.expect("explain daemonset"),
                Some(Command::Audit(a)) => a.daemonset.expect("audit daemonset"),
                _ => panic!("{line:?}"),
            };
            assert_eq!(daemonset.name, "node-agent", "{line:?}");
            assert_eq!(
                daemonset.namespace.is_some(),
                form.starts_with("kube-system/"),
                "{line:?}"
            );
        }
    }
}

#[test]
fn daemonset_flag_is_kept_as_an_alias_on_audit_and_explain() {
    let Some(Command::Audit(audit)) =
        parse(&["audit", "--daemonset", "ns/a", "--roster", "r"]).command
    else {
        panic!("audit");
    };
    assert_eq!(
        audit.daemonset_flag.map(|d| d.to_string()).as_deref(),
        Some("ns/a")
    );
    let Some(Command::Explain(explain)) =
        parse(&["explain", "-f", "x", "--daemonset", "ds/a", "-n", "ns"]).command
    else {
        panic!("explain");
    };
    assert_eq!(explain.namespace.as_deref(), Some("ns"));
    assert!(explain.daemonset_flag.is_some());
}

#[test]
fn bad_daemonset_names_are_usage_errors() {
    let error = command("rollcall")
        .try_get_matches_from(["rollcall", "status", "a/b/c"])
        .unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation);
}

#[test]
fn sim_takes_filename_and_the_old_file() {
    for flag in ["-f", "--filename", "--file"] {
        let Some(Command::Sim(sim)) = parse(&["sim", flag, "dump.json"]).command else {
            panic!("sim");
        };
        assert_eq!(
            sim.snapshot,
            [std::path::PathBuf::from("dump.json")],
            "{flag}"
        );
    }
}

#[test]
fn pause_takes_a_reason() {
    let Some(Command::Pause(args)) = parse(&["pause", "a", "--reason", "bad canary"]).command
    else {
        panic!("pause");
    };
    assert_eq!(args.reason.as_deref(), Some("bad canary"));
}

#[test]
fn the_plugin_name_is_detected_from_argv0() {
    use std::ffi::OsStr;
    assert_eq!(
        display_name(Some(OsStr::new("/usr/local/bin/kubectl-rollcall"))),
        "kubectl rollcall"
    );
    assert_eq!(
        display_name(Some(OsStr::new("kubectl-rollcall.exe"))),
        "kubectl rollcall"
    );
    assert_eq!(
        display_name(Some(OsStr::new("/usr/bin/rollcall"))),
        "rollcall"
    );
    assert_eq!(display_name(None), "rollcall");
    let help = command("kubectl rollcall").render_help().to_string();
    assert!(help.contains("Usage: kubectl rollcall"), "{help}");
}

#[test]
fn error_causes_are_printed_once() {
    #[derive(Debug, thiserror::Error)]
    #[error("roster r.json: {0}")]
    struct Outer(#[source] Inner);
    #[derive(Debug, thiserror::Error)]
    #[error("is empty: list at least one node")]
    struct Inner;
    let err = anyhow::Error::new(Outer(Inner)).context("cannot audit");
    assert_eq!(
        error_text(&err),
        "cannot audit: roster r.json: is empty: list at least one node"
    );
}

#[test]
fn console_arguments_before_a_subcommand_are_refused() {
    for line in [
        &["rollcall", "ns/agent", "status", "ns/agent"][..],
        &["rollcall", "--roster", "r.json", "status", "ns/agent"][..],
    ] {
        let refused = command("rollcall")
            .try_get_matches_from(line)
            .map_err(|e| e.kind())
            .and_then(|m| from_matches(&m).map(|_| ()).map_err(|e| e.kind()));
        assert!(refused.is_err(), "{line:?}");
    }
}

#[test]
fn the_ready_timeout_defaults_are_the_engines_one_bound() {
    // One bound for "a pod taking too long to become Ready": the batch gate's
    // timeout here, and the rollout blocker's "starting" (engine::health).
    let ready_timeout = crate::engine::health::READY_TIMEOUT;
    match parse(&["auto", "agent"]).command {
        Some(Command::Auto(a)) => assert_eq!(a.timeout, ready_timeout),
        other => panic!("{other:?}"),
    }
    match parse(&["advance", "agent", "--next", "1"]).command {
        Some(Command::Advance(a)) => assert_eq!(a.timeout, ready_timeout),
        other => panic!("{other:?}"),
    }
    match parse(&["rollback", "agent"]).command {
        Some(Command::Rollback(a)) => assert_eq!(a.timeout, ready_timeout),
        other => panic!("{other:?}"),
    }
}

//! The command line as kubectl users type it, through the real binary: global
//! flags before or after the subcommand, every DaemonSet form, `--read-only`
//! dry runs that print their writes and change nothing (checked with kubectl),
//! empty input, completions, the man page, and `kubectl rollcall` through
//! kubectl's own plugin lookup.

mod common;
mod ops_support;

use std::process::{Command, Output, Stdio};

use ops_support::{Env, small, text};
use serde_json::Value;

const PATCH: &str = "PATCH /apis/apps/v1/namespaces/kube-system/daemonsets/node-agent";
const DELETE: &str = "DELETE /api/v1/namespaces/kube-system/pods/node-agent-";

/// Runs the binary with exactly `args` (no flags appended) and `KUBECONFIG` unset.
fn run_exact(env: &Env, args: &[&str]) -> Output {
    Command::new(common::rollcall_bin())
        .args(args)
        .env_remove("KUBECONFIG")
        .env("XDG_STATE_HOME", env.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run rollcall")
}

fn json_of(output: &Output) -> Value {
    assert!(output.status.success(), "{}", text(output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(output)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_in_either_order_and_every_daemonset_form() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let kubeconfig = env.kubeconfig.display().to_string();
    let k = kubeconfig.as_str();
    let lines: [&[&str]; 8] = [
        // `-o` before the subcommand, as other global flags (kubectl habit).
        &[
            "-o",
            "json",
            "--kubeconfig",
            k,
            "status",
            "kube-system/node-agent",
        ],
        &[
            "--kubeconfig",
            k,
            "status",
            "kube-system/node-agent",
            "-o",
            "json",
        ],
        &[
            "status",
            "kube-system/node-agent",
            "-o",
            "json",
            "--kubeconfig",
            k,
        ],
        &[
            "--kubeconfig",
            k,
            "-n",
            "kube-system",
            "status",
            "node-agent",
            "-o",
            "json",
        ],
        &[
            "status",
            "ds/node-agent",
            "-n",
            "kube-system",
            "--kubeconfig",
            k,
            "-o",
            "json",
        ],
        &[
            "-n",
            "kube-system",
            "status",
            "daemonset/node-agent",
            "--kubeconfig",
            k,
            "-o",
            "json",
        ],
        &[
            "status",
            "-o",
            "json",
            "daemonsets.apps/node-agent",
            "--namespace=kube-system",
            "--kubeconfig",
            k,
        ],
        &[
            "--kubeconfig",
            k,
            "--context",
            "rollcall-sim",
            "status",
            "kube-system/node-agent",
            "-o",
            "json",
        ],
    ];
    for line in lines {
        let output = tokio::task::block_in_place(|| run_exact(&env, line));
        let report = json_of(&output);
        assert_eq!(
            (report["namespace"].as_str(), report["name"].as_str()),
            (Some("kube-system"), Some("node-agent")),
            "{line:?}"
        );
    }
    other_commands_take_every_form(&env).await;
    errors_say_what_to_do_next(&env);
}

/// Errors name the way out: the namespace where the DaemonSet is, the nearest
/// name, the server and context that did not answer, `-f` for explain.
fn errors_say_what_to_do_next(env: &Env) {
    let k = env.kubeconfig.display().to_string();
    let expect = |args: &[&str], wanted: &str| {
        let output = tokio::task::block_in_place(|| run_exact(env, args));
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    };
    expect(
        &["--kubeconfig", &k, "status", "default/node-agent"],
        "a DaemonSet named node-agent exists in namespace kube-system (use kube-system/node-agent or -n kube-system)",
    );
    expect(
        &["--kubeconfig", &k, "pause", "kube-system/node-agnet"],
        "did you mean kube-system/node-agent?",
    );
    expect(&["explain"], "explain reads a snapshot: give it with -f");
    let dead = env.dir.path().join("dead.kubeconfig");
    std::fs::write(
        &dead,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n\
         users: [{name: u, user: {token: x}}]\ncontexts: [{name: prod, context: {cluster: c, user: u}}]\n\
         current-context: prod\n",
    )
    .expect("write kubeconfig");
    expect(
        &[
            "--kubeconfig",
            &dead.display().to_string(),
            "status",
            "kube-system/x",
        ],
        "the API server https://127.0.0.1:1/ (context prod) did not answer",
    );
    let missing = env
        .dir
        .path()
        .join("missing.kubeconfig")
        .display()
        .to_string();
    let output =
        tokio::task::block_in_place(|| run_exact(env, &["--kubeconfig", &missing, "status", "x"]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("missing.kubeconfig").count(), 1, "{stderr}");
    assert!(!stderr.contains("'\""), "nested quotes: {stderr}");
}

async fn other_commands_take_every_form(env: &Env) {
    for form in [
        "ds/node-agent",
        "daemonset/node-agent",
        "daemonsets.apps/node-agent",
    ] {
        let history = env.rollcall(&["history", form, "-n", "kube-system"]).await;
        assert!(history.status.success(), "{}", text(&history));
        assert!(
            String::from_utf8_lossy(&history.stdout)
                .starts_with("daemonset kube-system/node-agent"),
            "{}",
            text(&history)
        );
    }
    // `ds/NAME` never means the namespace "ds".
    let wrong = env.rollcall(&["status", "ds/node-agent"]).await;
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));
    assert!(
        text(&wrong).contains("default/node-agent") || text(&wrong).contains("\"default\""),
        "looked in the context's namespace, not \"ds\": {}",
        text(&wrong)
    );
    // A namespace in the name that contradicts -n is refused.
    let conflict = env
        .rollcall(&["status", "kube-system/node-agent", "-n", "default"])
        .await;
    assert_eq!(conflict.status.code(), Some(2), "{}", text(&conflict));
}

/// UIDs of the node-agent pods and the DaemonSet's resourceVersion and annotations, via kubectl.
async fn cluster_state(env: &Env) -> (Vec<String>, Value, Value) {
    let pods = env.pods_of("node-agent").await;
    let mut uids: Vec<String> = pods
        .iter()
        .filter_map(|p| p["metadata"]["uid"].as_str().map(str::to_owned))
        .collect();
    uids.sort();
    let ds = env.daemonset("node-agent").await;
    (
        uids,
        ds["metadata"]["resourceVersion"].clone(),
        ds["spec"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_dry_runs_print_the_writes_and_change_nothing() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = cluster_state(&env).await;
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &[
                "pause",
                "kube-system/node-agent",
                "--read-only",
                "--reason",
                "canary looks bad",
            ],
            &[PATCH, "canary looks bad"],
        ),
        (
            &[
                "resume",
                "ds/node-agent",
                "-n",
                "kube-system",
                "--read-only",
            ],
            &[],
        ),
        (
            &[
                "advance",
                "kube-system/node-agent",
                "--next",
                "2",
                "--read-only",
            ],
            &[DELETE, "\"preconditions\":{\"uid\":"],
        ),
        (
            &[
                "--read-only",
                "auto",
                "kube-system/node-agent",
                "--batch",
                "2",
            ],
            &[PATCH, DELETE],
        ),
        (
            &["rollback", "kube-system/node-agent", "--read-only"],
            &[PATCH, "(strategic merge)", "\"$patch\":\"replace\""],
        ),
    ];
    for (args, expected) in cases {
        let output = env.rollcall(args).await;
        let said = text(&output);
        if args[0] == "resume" {
            // Not paused: resume refuses (exit 2) before any write, dry run or not.
            assert_ne!(output.status.code(), Some(0), "{args:?}: {said}");
            continue;
        }
        assert_eq!(output.status.code(), Some(0), "{args:?}: {said}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.starts_with("dry run (--read-only): nothing was changed"),
            "{args:?}: {stdout}"
        );
        for want in expected {
            assert!(stdout.contains(want), "{args:?}: {want} missing: {stdout}");
        }
        if args.contains(&"advance") {
            assert_eq!(stdout.matches(DELETE).count(), 2, "{stdout}");
        }
    }
    assert_eq!(
        cluster_state(&env).await,
        before,
        "a dry run changed the cluster"
    );
    assert!(!env.journal.exists(), "a dry run journaled");
}

#[test]
fn empty_or_kindless_input_exits_2_saying_what_was_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").expect("write");
    let services = dir.path().join("services.json");
    std::fs::write(
        &services,
        r#"{"apiVersion":"v1","kind":"List","items":[
            {"apiVersion":"v1","kind":"Service","metadata":{"name":"a","namespace":"d"}},
            {"metadata":{"name":"no-kind"}}]}"#,
    )
    .expect("write");
    let roster = dir.path().join("roster.json");
    std::fs::write(&roster, r#"{"n1":"u1"}"#).expect("write");
    let (empty, services, roster) = (
        empty.display().to_string(),
        services.display().to_string(),
        roster.display().to_string(),
    );
    let cases: [(Vec<&str>, String); 4] = [
        (
            vec!["sim", "--filename", &empty],
            format!("no Node, Pod, DaemonSet, ControllerRevision or Event in {empty}"),
        ),
        (
            vec!["explain", "-f", &empty],
            format!("no Node, Pod, DaemonSet, ControllerRevision or Event in {empty}"),
        ),
        (
            vec!["explain", "-f", &services, "-o", "json"],
            format!(
                "no Node, Pod, DaemonSet, ControllerRevision or Event in {services}: read 1 file, 1 object without a kind"
            ),
        ),
        (
            vec!["audit", "ns/agent", "--roster", &roster, "-f", &empty],
            format!("no Node, Pod, DaemonSet, ControllerRevision or Event in {empty}"),
        ),
    ];
    for (args, message) in cases {
        let output = common::run_rollcall(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", text(&output));
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&message), "{args:?}: {stderr}");
    }
}

#[test]
fn an_error_prints_each_cause_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let roster = dir.path().join("roster.json");
    std::fs::write(&roster, "{}").expect("write");
    let snapshot = common::fixture_path("kube-system-list.json");
    let output = common::run_rollcall(&[
        "audit",
        "kube-system/node-exporter",
        "--roster",
        &roster.display().to_string(),
        "-f",
        &snapshot,
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("is empty").count(), 1, "{stderr}");
}

#[test]
fn completions_and_the_man_page_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let output = common::run_rollcall(&["completion", shell]);
        assert!(output.status.success(), "{shell}: {}", text(&output));
        let script = String::from_utf8_lossy(&output.stdout);
        for word in ["rollback", "--kubeconfig", "--read-only"] {
            let word = if shell == "fish" {
                word.trim_start_matches('-')
            } else {
                word
            };
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let bad = common::run_rollcall(&["completion", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    let man = common::run_rollcall(&["man"]);
    assert!(man.status.success(), "{}", text(&man));
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(page.contains(".TH rollcall"), "{page}");
    // Rendered by a real formatter when there is one: the page reads as text.
    if common::find_tool("groff").is_some() {
        let mut groff = Command::new("groff")
            .args(["-man", "-Tutf8"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("groff");
        std::io::Write::write_all(groff.stdin.as_mut().expect("stdin"), &man.stdout)
            .expect("feed groff");
        let rendered = groff.wait_with_output().expect("groff output");
        assert!(rendered.status.success(), "{}", text(&rendered));
        // Bold and underline come as overstrikes (`S\bS`): read the plain letters.
        let rendered = String::from_utf8_lossy(&rendered.stdout);
        let mut plain = String::new();
        for c in rendered.chars() {
            if c == '\u{8}' {
                plain.pop();
            } else {
                plain.push(c);
            }
        }
        assert!(plain.contains("kubeconfig"), "{plain}");
        assert!(plain.contains("SUBCOMMANDS"), "{plain}");
        assert!(plain.contains("rollcall status"), "{plain}");
        assert!(
            !plain.contains("rollcall-auto(1)"),
            "no such page is installed: {plain}"
        );
    }
}

#[test]
fn kubectl_finds_the_plugin_and_help_says_kubectl_rollcall() {
    if !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let link = dir.path().join("kubectl-rollcall");
    std::os::unix::fs::symlink(common::rollcall_bin(), &link).expect("symlink");
    let path = std::env::join_paths(std::iter::once(dir.path().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let output = Command::new(common::find_tool("kubectl").expect("kubectl"))
        .args(["rollcall", "--help"])
        .env("PATH", path)
        .env("HOME", dir.path())
        .output()
        .expect("kubectl rollcall --help");
    assert!(output.status.success(), "{}", text(&output));
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("Usage: kubectl rollcall"), "{help}");
    // The plain binary keeps its own name.
    let plain = common::run_rollcall(&["--help"]);
    assert!(String::from_utf8_lossy(&plain.stdout).contains("Usage: rollcall"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_watch_prints_timestamped_change_lines() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let mut watch = KillOnDrop(
        Command::new(common::rollcall_bin())
            .args([
                "status",
                "kube-system/node-agent",
                "--watch",
                "--kubeconfig",
            ])
            .arg(&env.kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("status --watch"),
    );
    let stdout = watch.0.stdout.take().expect("stdout");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next_line = async |rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>| {
        tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .expect("a line within 20s")
            .expect("status --watch still running")
    };
    // The full report once, ending with the plan.
    let mut report = Vec::new();
    loop {
        let line = next_line(&mut rx).await;
        let done = line.starts_with("    5. ");
        report.push(line);
        if done {
            break;
        }
    }
    assert!(
        report.iter().any(|l| l.starts_with("revisions: ")),
        "{report:?}"
    );
    let advance = env
        .rollcall(&[
            "advance",
            "kube-system/node-agent",
            "--node",
            "general-01",
            "--yes",
        ])
        .await;
    assert!(advance.status.success(), "{}", text(&advance));
    let mut changes = Vec::new();
    // The replacement is the node's pod from its creation (pinned by
    // matchFields, upstream's GetTargetNodeName), so the node goes r1 → r2,
    // or through "no pod" when the old one was gone first.
    while !changes
        .iter()
        .any(|l: &String| l.contains("general-01 no pod → r2") || l.contains("general-01 r1 → r2"))
    {
        let line = next_line(&mut rx).await;
        // `2026-12-01T01:49:27Z  ready 5 → 4 · …`: a timestamp, then the changes only.
        let (stamp, rest) = line.split_once("  ").unwrap_or_else(|| panic!("{line:?}"));
        assert!(stamp.parse::<jiff::Timestamp>().is_ok(), "{line:?}");
        assert!(
            !rest.is_empty() && !rest.starts_with("daemonset "),
            "{line:?}"
        );
        changes.push(line);
    }
}

/// Stops a child process when the test ends, passed or failed.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// No kubeconfig anywhere (an empty HOME, no KUBECONFIG, not in a pod): the
/// console and `status` refuse with one sentence naming `rollcall demo`,
/// exit 2, and never open a simulated cluster on their own.
#[test]
fn without_a_cluster_the_console_and_status_refuse_and_name_demo() {
    let home = tempfile::tempdir().expect("temp dir");
    let run = |args: &[&str]| {
        Command::new(common::rollcall_bin())
            .args(args)
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path())
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdin(Stdio::null())
            .output()
            .expect("run rollcall")
    };
    let sentence = "error: no cluster configured (no KUBECONFIG, no ~/.kube/config): \
                    pass --kubeconfig, or run `rollcall demo` for a simulated cluster\n";
    for args in [
        &["kube-system/node-agent"][..],
        &[][..],
        &["status", "kube-system/node-agent"][..],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", text(&output));
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            sentence,
            "{args:?}"
        );
        assert!(output.stdout.is_empty(), "{args:?}: {}", text(&output));
    }
}

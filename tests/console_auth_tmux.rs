//! End to end with the real binary, tmux and the real kubectl: the console
//! under the ways into the embedded cluster that are not the admin token.
//! The client-certificate and exec-plugin contexts both show the grid; the
//! exec plugin's token expires during a session and the console keeps
//! following kubectl's changes; under an in-flight limit of 2, filled by two
//! requests that never finish, four consoles all say "throttled", then once
//! the load goes they and kubectl converge on a change.
//! Timings are short and bounded (each wait at most [`common::tmux::DEADLINE`]).

mod common;
mod ops_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::tmux::{Tmux, row};
use ops_support::{Env, text};
use rollcall::sim::embedded::{EmbeddedOptions, start_with};
use rollcall::sim::fault::{self, Faults};
use rollcall::sim::server::ServeOptions;

const DS: &str = "kube-system/node-agent";
const NODES: [&str; 5] = [
    "general-01",
    "general-02",
    "general-03",
    "edge-01",
    "edge-02",
];

/// Blocking work (tmux polling, sleeps) off the runtime's worker duties, so
/// the embedded cluster keeps serving meanwhile.
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(work)
}

/// The `small` scenario served with `serve`, faults installable through the
/// returned handle. The kubeconfig's exec plugin is this test binary
/// (the server names its own executable); it is pointed at `rollcall`.
async fn small_with(serve: ServeOptions) -> (Env, Faults) {
    let faults = Faults::none();
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        faults: faults.clone(),
        ..EmbeddedOptions::default()
    };
    let cluster = start_with(options, serve)
        .await
        .expect("embedded cluster starts");
    let env = ops_support::env(cluster).await;
    let this = std::env::current_exe().expect("test binary");
    let kubeconfig = std::fs::read_to_string(&env.kubeconfig).expect("kubeconfig");
    let pointed = kubeconfig.replace(
        &this.display().to_string(),
        &common::rollcall_bin().display().to_string(),
    );
    assert_ne!(pointed, kubeconfig, "the exec plugin names the test binary");
    std::fs::write(&env.kubeconfig, pointed).expect("kubeconfig rewritten");
    (env, faults)
}

/// The console on [`DS`] as `context` in tmux, logging to `log`.
fn console(env: &Env, tag: &str, context: &str, log: &Path) -> Tmux {
    let command = format!(
        "{} --kubeconfig {} --context {context} --log-file {} {DS}",
        common::rollcall_bin().display(),
        env.kubeconfig.display(),
        log.display()
    );
    Tmux::start(tag, 160, 30, &command)
}

/// Every node's row is on screen with its node state read.
fn grid_shown(screen: &str) -> bool {
    NODES
        .iter()
        .all(|node| row(screen, node).is_some_and(|r| r.contains(" Ready")))
}

/// `node`'s row shows it cordoned.
fn cordoned(screen: &str, node: &str) -> bool {
    row(screen, node).is_some_and(|r| r.contains("Cordon"))
}

/// `kubectl cordon NODE` as the admin; client-go retries 429s itself, and
/// this retries a few more times so a throttled test does not fail on it.
async fn cordon(env: &Env, node: &str) {
    let mut last = String::new();
    for _ in 0..10 {
        let output = env.kubectl_output(&["cordon", node]).await;
        if output.status.success() {
            return;
        }
        last = text(&output);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("kubectl cordon {node}: {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_the_grid_with_a_client_certificate_and_an_exec_plugin() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let (env, _faults) = small_with(ServeOptions::default()).await;
    for context in ["rollcall-sim-cert", "rollcall-sim-exec"] {
        // kubectl, a client we did not write, gets in the same way.
        let whoami = env
            .kubectl_output(&["--context", context, "get", "pods", "-n", "kube-system"])
            .await;
        assert!(whoami.status.success(), "{context}: {}", text(&whoami));
        let log = env.dir.path().join(format!("{context}.log"));
        let tmux = console(&env, context, context, &log);
        blocking(|| {
            let screen = tmux.wait_for(&format!("the grid as {context}"), grid_shown);
            assert!(
                screen.contains(context),
                "{context} in the header: {screen}"
            );
            tmux.send("q");
            common::tmux::wait_until("the console to quit", || !tmux.running());
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_keeps_working_after_its_exec_token_expires() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let ttl = Duration::from_secs(2);
    let (env, faults) = small_with(ServeOptions {
        exec_token_ttl: ttl,
        ..ServeOptions::default()
    })
    .await;
    let log = env.dir.path().join("exec.log");
    let tmux = console(&env, "exec-expiry", "rollcall-sim-exec", &log);
    blocking(|| {
        tmux.wait_for("the grid as the exec user", grid_shown);
        // The first token expires...
        std::thread::sleep(ttl + Duration::from_millis(1_500));
    });
    // ...and the watches are cut, so the console must ask again: with an
    // expired token it would get 401s and see nothing more.
    faults.install(fault::parse("drop-watches=0s+300ms").expect("fault spec"));
    cordon(&env, "general-02").await;
    blocking(|| {
        tmux.wait_for("the cordon kubectl made after the expiry", |screen| {
            cordoned(screen, "general-02")
        });
        tmux.send("q");
    });
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    // Words, not a bare "401": log timestamps carry microseconds (…53.966401Z).
    let lower = logged.to_lowercase();
    assert!(
        !(lower.contains("unauthorized") || lower.contains("code: 401") || lower.contains("(401")),
        "no request went out with an expired token: {logged}"
    );
}

/// A child process killed and reaped when dropped.
struct Holder(std::process::Child);

/// `curl` creating a pod with a body streamed from its stdin, which is never
/// written: the server has admitted the request and waits for the body.
fn hold_a_slot(env: &Env) -> Holder {
    let parts = env.cluster.server.kubeconfig_parts();
    let ca = env.dir.path().join("ca.pem");
    std::fs::write(&ca, &parts.ca_pem).expect("CA written");
    let child = std::process::Command::new("curl")
        .args(["-s", "-X", "POST", "-T", "-", "--cacert"])
        .arg(&ca)
        .args([
            "-H",
            &format!("Authorization: Bearer {}", parts.admin_token),
        ])
        .args(["-H", "Content-Type: application/json"])
        .arg(format!("{}/api/v1/namespaces/default/pods", parts.server))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("curl runs");
    Holder(child)
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_consoles_and_kubectl_converge_under_an_inflight_limit_of_two() {
    if !common::tool_available("tmux")
        || !common::tool_available("kubectl")
        || !common::tool_available("curl")
    {
        return;
    }
    let (env, _faults) = small_with(ServeOptions {
        max_inflight: Some(2),
        ..ServeOptions::default()
    })
    .await;
    // Two creates whose bodies never come hold both slots (a request counts
    // until it is answered): the consoles start against a server that
    // answers 429 to everything, as a saturated one does.
    let holders = [hold_a_slot(&env), hold_a_slot(&env)];
    let saturated = blocking(|| {
        let mut answer = String::new();
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(100));
            let output = std::process::Command::new("kubectl")
                .args(["get", "nodes", "--kubeconfig"])
                .arg(&env.kubeconfig)
                .args(["--request-timeout", "1s", "-v", "6"])
                .env("KUBECACHEDIR", env.dir.path().join("kubectl-probe-cache"))
                .output()
                .expect("kubectl runs");
            answer = text(&output);
            if answer.contains("429") {
                return true;
            }
        }
        eprintln!("{answer}");
        false
    });
    assert!(
        saturated,
        "the held creates do not fill the in-flight limit"
    );
    let logs: Vec<PathBuf> = (0..4)
        .map(|i| env.dir.path().join(format!("console-{i}.log")))
        .collect();
    let consoles: Vec<Tmux> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| console(&env, &format!("inflight-{i}"), "rollcall-sim", log))
        .collect();
    // Every console says it is throttled while it is.
    blocking(|| {
        for (i, tmux) in consoles.iter().enumerate() {
            tmux.wait_for(&format!("console {i} to say throttled"), |screen| {
                screen.contains("throttled")
            });
        }
    });
    // The load goes; kubectl reads along while the consoles catch up.
    drop(holders);
    let busy = env
        .kubectl_output(&["get", "pods,ds,controllerrevisions,nodes", "-A"])
        .await;
    assert!(busy.status.success(), "{}", text(&busy));
    blocking(|| {
        for (i, tmux) in consoles.iter().enumerate() {
            tmux.wait_for(&format!("console {i}'s grid"), grid_shown);
        }
    });
    cordon(&env, "edge-01").await;
    blocking(|| {
        for (i, tmux) in consoles.iter().enumerate() {
            tmux.wait_for(&format!("console {i} to show the cordon"), |screen| {
                cordoned(screen, "edge-01")
            });
            tmux.send("q");
        }
    });
    // The consoles' logs say what the streams waited for.
    let throttled_logs = logs
        .iter()
        .filter(|log| {
            std::fs::read_to_string(log).is_ok_and(|text| text.contains("throttled (429)"))
        })
        .count();
    assert_eq!(throttled_logs, 4, "every console logged its 429s");
}

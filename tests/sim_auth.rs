//! End to end with the real binary and the real kubectl: every way into
//! `rollcall sim` (token, client certificate, exec plugin, namespace viewer),
//! the in-flight limit, the safe kubeconfig, read timeouts, and rollcall's
//! bounds on exec plugins and silent servers. Timings are short and bounded.

#![allow(
    clippy::unwrap_used,
    reason = "integration test helpers: a failure must fail the test"
)]

mod common;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::sim::spawn_sim;
use common::{rollcall_bin, tool_available};

const DS: &str = "kube-system/log-shipper";
/// A DaemonSet of the generated (`--nodes N`) cluster.
const GENERATED_DS: &str = "kube-system/node-agent";

/// `rollcall sim` running as a child process.
struct Sim {
    child: Child,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Sim {
    fn start(extra: &[&str]) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let mut args = vec!["sim", "--scenario", "small", "--kubeconfig-out"];
        let path = kubeconfig.display().to_string();
        args.push(&path);
        args.extend_from_slice(extra);
        let (child, _) = spawn_sim(&args);
        Sim {
            child,
            kubeconfig,
            _dir: dir,
        }
    }

    fn kubectl(&self, context: &str, args: &[&str]) -> Output {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["--context", context])
            .args(args)
            .output()
            .unwrap()
    }

    fn rollcall(&self, context: &str, args: &[&str]) -> Output {
        Command::new(rollcall_bin())
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["--context", context])
            .output()
            .unwrap()
    }

    fn yaml(&self) -> serde_json::Value {
        serde_norway::from_str(&std::fs::read_to_string(&self.kubeconfig).unwrap()).unwrap()
    }

    fn server(&self) -> String {
        self.yaml()["clusters"][0]["cluster"]["server"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn admin_token(&self) -> String {
        self.yaml()["users"][0]["user"]["token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn ca_file(&self) -> PathBuf {
        use base64::Engine as _;
        let data = self.yaml()["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap()
            .to_owned();
        let pem = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let path = self.kubeconfig.with_file_name("ca.pem");
        std::fs::write(&path, pem).unwrap();
        path
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn every_context_works_for_kubectl_and_rollcall_and_the_viewer_is_confined() {
    if !tool_available("kubectl") {
        return;
    }
    let sim = Sim::start(&[]);
    for context in ["rollcall-sim", "rollcall-sim-cert", "rollcall-sim-exec"] {
        let nodes = sim.kubectl(context, &["get", "nodes", "-o", "name"]);
        assert!(nodes.status.success(), "{context}: {}", text(&nodes));
        assert_eq!(String::from_utf8_lossy(&nodes.stdout).lines().count(), 5);
        let can = sim.kubectl(
            context,
            &["auth", "can-i", "delete", "pods", "-n", "kube-system"],
        );
        assert_eq!(
            String::from_utf8_lossy(&can.stdout).trim(),
            "yes",
            "{context}"
        );
        let status = sim.rollcall(context, &["status", DS]);
        assert!(status.status.success(), "{context}: {}", text(&status));
        assert!(text(&status).contains("daemonset kube-system/log-shipper"));
    }
    let whoami = |context: &str| {
        let out = sim.kubectl(context, &["get", "nodes", "--as", "nobody"]);
        text(&out)
    };
    // Only the admin (system:masters) may impersonate.
    assert!(
        whoami("rollcall-sim").contains("No resources")
            || !whoami("rollcall-sim").contains("impersonate")
    );
    assert!(
        whoami("rollcall-sim-cert").contains(
            "users \"nobody\" is forbidden: User \"rollcall-sim-cert\" cannot impersonate resource \"users\""
        ),
        "{}",
        whoami("rollcall-sim-cert")
    );

    let viewer = "rollcall-sim-viewer";
    let nodes = sim.kubectl(viewer, &["get", "nodes"]);
    assert!(!nodes.status.success());
    assert!(
        text(&nodes).contains(
            "nodes is forbidden: User \"rollcall-sim-viewer\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        ),
        "{}",
        text(&nodes)
    );
    let pods = sim.kubectl(viewer, &["get", "pods", "-n", "kube-system", "-o", "name"]);
    assert!(pods.status.success(), "{}", text(&pods));
    for (verb, resource, ns, expected) in [
        ("list", "pods", "kube-system", "yes"),
        ("watch", "daemonsets.apps", "kube-system", "yes"),
        ("list", "controllerrevisions.apps", "kube-system", "yes"),
        ("delete", "pods", "kube-system", "no"),
        ("patch", "daemonsets.apps", "kube-system", "no"),
        ("list", "pods", "default", "no"),
        ("list", "nodes", "", "no"),
    ] {
        let mut args = vec!["auth", "can-i", verb, resource];
        if !ns.is_empty() {
            args.extend(["-n", ns]);
        }
        let out = sim.kubectl(viewer, &args);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            expected,
            "{verb} {resource} in {ns}: {}",
            text(&out)
        );
    }
    let list = sim.kubectl(viewer, &["auth", "can-i", "--list", "-n", "kube-system"]);
    let listing = text(&list);
    assert!(listing.contains("daemonsets.apps"), "{listing}");
    assert!(!listing.contains("nodes"), "{listing}");
    // The admin impersonating the viewer gets the viewer's rights.
    let as_viewer = sim.kubectl(
        "rollcall-sim",
        &[
            "get",
            "nodes",
            "--as",
            "rollcall-sim-viewer",
            "--as-group",
            "rollcall:viewers",
        ],
    );
    assert!(
        text(&as_viewer).contains("User \"rollcall-sim-viewer\" cannot list resource \"nodes\"")
    );
}

#[test]
fn exec_tokens_expire_and_are_refreshed() {
    if !tool_available("curl") {
        return;
    }
    let sim = Sim::start(&["--exec-token-ttl", "2s"]);
    let yaml = sim.yaml();
    let exec = &yaml["users"][2]["user"]["exec"];
    let command = exec["command"].as_str().unwrap();
    let args: Vec<String> = exec["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let printed = Command::new(command).args(&args).output().unwrap();
    let credential: serde_json::Value = serde_json::from_slice(&printed.stdout).unwrap();
    let token = credential["status"]["token"].as_str().unwrap().to_owned();
    assert!(credential["status"]["expirationTimestamp"].is_string());
    let get = |token: &str| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(sim.ca_file())
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .arg(format!(
                "{}/api/v1/namespaces/kube-system/pods",
                sim.server()
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(get(&token), "200");
    std::thread::sleep(Duration::from_millis(3_200));
    assert_eq!(get(&token), "401", "an expired exec token is refused");
    // Clients run the plugin again and keep working past the first token's life.
    let status = sim.rollcall("rollcall-sim-exec", &["status", DS]);
    assert!(status.status.success(), "{}", text(&status));
    // One client, one session, across two token lifetimes: kube refreshes.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let options = rollcall::cluster::connect::ConnectOptions {
            kubeconfig: Some(sim.kubeconfig.clone()),
            context: Some("rollcall-sim-exec".to_owned()),
            ..Default::default()
        };
        let connection = rollcall::cluster::connect::connect(&options).await.unwrap();
        let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
            kube::Api::namespaced(connection.client.clone(), "kube-system");
        for round in 0..3 {
            let listed = pods.list(&kube::api::ListParams::default()).await;
            assert!(listed.is_ok(), "round {round}: {listed:?}");
            tokio::time::sleep(Duration::from_millis(1_500)).await;
        }
    });
}

#[test]
fn max_inflight_answers_429_with_retry_after_and_clients_converge() {
    if !tool_available("curl") || !tool_available("kubectl") {
        return;
    }
    // 300 nodes: a pod list takes long enough that 40 parallel lists overlap.
    let sim = Sim::start(&["--nodes", "300", "--max-inflight", "1"]);
    let url = format!("{}/api/v1/pods", sim.server());
    let ca = sim.ca_file();
    let token = sim.admin_token();
    let mut curl = Command::new("curl");
    curl.args(["-s", "--parallel", "--parallel-max", "40", "--cacert"])
        .arg(&ca)
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .args(["-w", "%{http_code} retry-after=%header{retry-after}\n"]);
    for _ in 0..40 {
        curl.args(["-o", "/dev/null", &url]);
    }
    let out = curl.output().unwrap();
    let answers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let throttled = answers.iter().filter(|a| a.starts_with("429")).count();
    let ok = answers.iter().filter(|a| a.starts_with("200")).count();
    eprintln!("40 parallel lists under --max-inflight 1: {ok} ok, {throttled} throttled");
    assert!(
        ok >= 1 && throttled >= 1 && ok + throttled == 40,
        "{answers:?}"
    );
    assert!(
        answers
            .iter()
            .filter(|a| a.starts_with("429"))
            .all(|a| a.ends_with("retry-after=1")),
        "{answers:?}"
    );
    // Four rollcall clients and kubectl at once all get their answer.
    let started = Instant::now();
    let children: Vec<Child> = (0..4)
        .map(|_| {
            Command::new(rollcall_bin())
                .args(["status", GENERATED_DS, "--kubeconfig"])
                .arg(&sim.kubeconfig)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .chain((0..2).map(|_| {
            Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&sim.kubeconfig)
                .args(["get", "pods,ds,controllerrevisions", "-A"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        }))
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    eprintln!(
        "4 rollcall status + 2 kubectl converged in {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// A kubeconfig for the running sim whose user is `exec` of `plugin`.
fn exec_kubeconfig(sim: &Sim, plugin: &str, args: &[&str]) -> PathBuf {
    let mut yaml = sim.yaml();
    yaml["users"][0]["user"] = serde_json::json!({"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "args": args,
        "interactiveMode": "Never"}});
    let path = sim.kubeconfig.with_file_name(format!(
        "exec-{}.kubeconfig",
        Path::new(plugin).file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&path, serde_json::to_string(&yaml).unwrap()).unwrap();
    path
}

#[test]
fn exec_plugins_that_hang_are_missing_or_print_garbage_fail_clearly() {
    let sim = Sim::start(&[]);
    let dir = sim.kubeconfig.parent().unwrap().to_path_buf();
    let pidfile = dir.join("plugin.pid");
    let hang = dir.join("hanging-plugin");
    std::fs::write(
        &hang,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! > {}\nwait\n",
            pidfile.display()
        ),
    )
    .unwrap();
    let garbage = dir.join("garbage-plugin");
    std::fs::write(&garbage, "#!/bin/sh\necho 'hello, not json'\n").unwrap();
    #[cfg(unix)]
    for script in [&hang, &garbage] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let run = |kubeconfig: &Path| {
        let started = Instant::now();
        let out = Command::new(rollcall_bin())
            .args(["status", DS, "--request-timeout", "2s", "--kubeconfig"])
            .arg(kubeconfig)
            .output()
            .unwrap();
        (out, started.elapsed())
    };
    let (out, took) = run(&exec_kubeconfig(&sim, &hang.display().to_string(), &[]));
    eprintln!("hanging plugin: failed after {took:?}");
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(10), "{took:?}");
    let message = text(&out);
    assert!(message.contains("hanging-plugin"), "{message}");
    assert!(message.contains("did not answer within 2s"), "{message}");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    // The plugin's end is the event: wait for it (killed and reaped) rather
    // than for a time, within a bound that says "left behind" if it never comes.
    let pid_number = pid.trim().parse().unwrap();
    let killed = Instant::now();
    while rollcall::cluster::exec::is_running(pid_number) {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the plugin's process {pid} was left behind"
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    let (out, _) = run(&exec_kubeconfig(
        &sim,
        "/nonexistent/aws",
        &["eks", "get-token"],
    ));
    assert!(!out.status.success());
    assert!(
        text(&out).contains("`/nonexistent/aws` could not be started"),
        "{}",
        text(&out)
    );

    let (out, _) = run(&exec_kubeconfig(&sim, &garbage.display().to_string(), &[]));
    assert!(!out.status.success());
    assert!(
        text(&out).contains("printed no usable ExecCredential"),
        "{}",
        text(&out)
    );
}

/// kube-rs runs a gcp auth-provider's `cmd-path` itself and waits for it for
/// good (`token_from_gcp_provider`); rollcall bounds it like an exec plugin.
#[test]
fn a_gcp_auth_provider_command_that_hangs_is_killed_like_an_exec_plugin() {
    let sim = Sim::start(&[]);
    let dir = sim.kubeconfig.parent().unwrap().to_path_buf();
    let pidfile = dir.join("gcloud.pid");
    let hang = dir.join("hanging-gcloud");
    std::fs::write(
        &hang,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! > {}\nwait\n",
            pidfile.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut yaml = sim.yaml();
    yaml["users"][0]["user"] = serde_json::json!({"auth-provider": {"name": "gcp", "config": {
        "cmd-path": hang.display().to_string(),
        "cmd-args": "config config-helper --format=json",
        "token-key": "{.credential.access_token}"}}});
    let kubeconfig = dir.join("gcp.kubeconfig");
    std::fs::write(&kubeconfig, serde_json::to_string(&yaml).unwrap()).unwrap();
    let started = Instant::now();
    let out = Command::new(rollcall_bin())
        .args(["status", DS, "--request-timeout", "2s", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    let took = started.elapsed();
    eprintln!("hanging gcp cmd-path: failed after {took:?}");
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(10), "{took:?}");
    let message = text(&out);
    assert!(
        message.contains("hanging-gcloud (auth-provider gcp cmd-path)"),
        "{message}"
    );
    assert!(message.contains("did not answer within 2s"), "{message}");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !rollcall::cluster::exec::is_running(pid.trim().parse().unwrap()),
        "the command's process {pid} was left behind"
    );
}

#[test]
fn a_server_that_never_answers_fails_within_the_request_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let accepted: Vec<_> = listener.incoming().take(4).collect();
        std::thread::sleep(Duration::from_secs(15));
        drop(accepted);
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let out = Command::new(rollcall_bin())
        .args(["status", DS, "--request-timeout", "2s", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    let took = started.elapsed();
    eprintln!("silent server: failed after {took:?}");
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert!(
        text(&out).contains("did not answer within 2s"),
        "{}",
        text(&out)
    );
    drop(held);
}

#[cfg(unix)]
#[test]
fn kubeconfig_is_private_refuses_symlinks_and_the_default_one_is_removed() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep me").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = Command::new(rollcall_bin())
        .args(["sim", "--scenario", "small", "--kubeconfig-out"])
        .arg(&link)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("symlink"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert!(!dir.path().join("link.token").exists(), "nothing written");

    let out = Command::new(rollcall_bin())
        .args(["sim", "--scenario", "small", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("--allow-remote"), "{}", text(&out));

    let (mut child, lines) = spawn_sim(&["sim", "--scenario", "small"]);
    let path = lines
        .iter()
        .find_map(|l| l.strip_prefix("kubeconfig: "))
        .and_then(|rest| rest.split(" (").next())
        .map(PathBuf::from)
        .unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(
        child.wait().unwrap().code(),
        Some(130),
        "stopped by a signal"
    );
    assert!(!path.exists(), "{} left behind", path.display());
    let token_file = PathBuf::from(format!("{}.token", path.display()));
    assert!(!token_file.exists(), "{} left behind", token_file.display());
}

#[test]
fn a_trickling_request_body_is_cut() {
    let sim = Sim::start(&["--read-timeout", "1s"]);
    let pem = std::fs::read(sim.ca_file()).unwrap();
    let (_, der) = x509_parser::pem::parse_x509_pem(&pem).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(der.contents))
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let addr = sim.server().trim_start_matches("https://").to_owned();
    let tcp = std::net::TcpStream::connect(&addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let connection = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    write!(
        tls,
        "POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{",
        sim.admin_token()
    )
    .unwrap();
    tls.flush().unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let closed = loop {
        if started.elapsed() > Duration::from_secs(8) {
            break false;
        }
        // One byte every 200 ms: the body never completes.
        if tls.write_all(b" ").and_then(|()| tls.flush()).is_err() {
            break true;
        }
        let mut buf = [0u8; 4096];
        match tls.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break true,
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = started.elapsed();
    eprintln!(
        "trickling body cut after {took:?}: {}",
        String::from_utf8_lossy(&answer)
    );
    assert!(closed, "the server kept a trickling body open for 8s");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        took >= Duration::from_millis(900),
        "cut before the timeout: {took:?}"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.is_empty() || answer.contains(" 408 "), "{answer}");
}

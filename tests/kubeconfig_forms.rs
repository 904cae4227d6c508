//! End to end with the real binary and the real kubectl: the kubeconfig forms
//! beyond token, certificate and exec that `rollcall sim` writes —
//! `rollcall-sim-tokenfile` (`tokenFile` beside the kubeconfig) and
//! `rollcall-sim-tls-name` (server reached by IP, certificate verified by
//! `tls-server-name`). Both clients work with each; a wrong `tls-server-name`
//! fails both, so the name is what is verified.

mod common;
mod ops_support;

use ops_support::{small, text};

const DS: &str = "kube-system/node-agent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_file_and_tls_server_name_work_for_kubectl_and_rollcall() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let yaml: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(&env.kubeconfig).expect("kubeconfig"))
            .expect("kubeconfig yaml");
    let token_file = yaml["users"]
        .as_array()
        .and_then(|users| users.iter().find(|u| u["name"] == "rollcall-sim-tokenfile"))
        .and_then(|u| u["user"]["tokenFile"].as_str())
        .expect("a tokenFile user")
        .to_owned();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&token_file)
            .expect("token file written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }

    for context in ["rollcall-sim-tokenfile", "rollcall-sim-tls-name"] {
        let nodes = env
            .kubectl_output(&["--context", context, "get", "nodes", "-o", "name"])
            .await;
        assert!(nodes.status.success(), "{context}: {}", text(&nodes));
        assert_eq!(String::from_utf8_lossy(&nodes.stdout).lines().count(), 5);
        let status = env.rollcall(&["status", DS, "--context", context]).await;
        assert!(status.status.success(), "{context}: {}", text(&status));
        assert!(
            text(&status).contains("daemonset kube-system/node-agent"),
            "{context}: {}",
            text(&status)
        );
    }

    // The same kubeconfig with another name to verify: both clients refuse.
    let wrong = env.dir.path().join("wrong-name.kubeconfig");
    let original = std::fs::read_to_string(&env.kubeconfig).expect("kubeconfig");
    assert!(original.contains("tls-server-name: \"rollcall-sim.internal\""));
    std::fs::write(
        &wrong,
        original.replace(
            "tls-server-name: \"rollcall-sim.internal\"",
            "tls-server-name: \"not-the-server.example\"",
        ),
    )
    .expect("copy written");
    let kubectl = std::process::Command::new("kubectl")
        .args(["--kubeconfig"])
        .arg(&wrong)
        .args(["--context", "rollcall-sim-tls-name", "get", "nodes"])
        .env("KUBECACHEDIR", env.dir.path().join("kubectl-wrong-cache"))
        .output()
        .expect("kubectl runs");
    assert!(!kubectl.status.success());
    assert!(
        text(&kubectl).contains("not-the-server.example"),
        "{}",
        text(&kubectl)
    );
    let rollcall = std::process::Command::new(common::rollcall_bin())
        .args(["status", DS, "--kubeconfig"])
        .arg(&wrong)
        .args([
            "--context",
            "rollcall-sim-tls-name",
            "--request-timeout",
            "5s",
        ])
        .env("XDG_STATE_HOME", env.dir.path())
        .output()
        .expect("rollcall runs");
    assert_eq!(rollcall.status.code(), Some(2), "{}", text(&rollcall));
    assert!(
        text(&rollcall).to_lowercase().contains("certificate"),
        "{}",
        text(&rollcall)
    );
}

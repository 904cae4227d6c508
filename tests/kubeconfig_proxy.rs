//! End to end with the real binary and the real kubectl: a kubeconfig whose
//! cluster has `proxy-url: http://127.0.0.1:PORT`. A tiny HTTP CONNECT proxy
//! written here counts the tunnels it opens; `rollcall status` and kubectl
//! both reach the embedded cluster through it, and with the proxy gone
//! rollcall fails with an error naming the proxy. `NO_PROXY` names loopback
//! throughout: a kubeconfig's `proxy-url` is used regardless, as by kubectl.

mod common;
mod ops_support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ops_support::{small, text};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

const DS: &str = "kube-system/node-agent";

/// A `NO_PROXY` naming the server and the proxy, which must not matter.
const NO_PROXY: &str = "127.0.0.1,localhost";

/// Accepts connections forever; each must open with `CONNECT host:port`,
/// which is dialled and then copied both ways. Counts the tunnels opened.
async fn connect_proxy(listener: TcpListener, tunnels: Arc<AtomicUsize>) {
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            return;
        };
        let tunnels = Arc::clone(&tunnels);
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if head.len() > 8192 || client.read_exact(&mut byte).await.is_err() {
                    return;
                }
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let mut words = head.split_whitespace();
            let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else {
                let _ = client
                    .write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    .await;
                return;
            };
            let Ok(mut upstream) = TcpStream::connect(target).await else {
                let _ = client
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    .await;
                return;
            };
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_err()
            {
                return;
            }
            tunnels.fetch_add(1, Ordering::SeqCst);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        });
    }
}

/// The kubeconfig with `proxy-url` on every cluster entry.
fn with_proxy(original: &str, proxy: &str) -> String {
    let proxied = original.replace(
        "    certificate-authority-data:",
        &format!("    proxy-url: {proxy}\n    certificate-authority-data:"),
    );
    assert_ne!(proxied, original, "the kubeconfig has cluster entries");
    proxied
}

/// Runs a program to its end off the async threads.
async fn run(mut command: std::process::Command) -> std::process::Output {
    command.stdin(std::process::Stdio::null());
    tokio::task::spawn_blocking(move || command.output().expect("process runs"))
        .await
        .expect("process thread")
}

/// `rollcall ARGS --kubeconfig KUBECONFIG` with its state under `dir`.
async fn rollcall(dir: &Path, kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    let mut command = std::process::Command::new(common::rollcall_bin());
    command
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env("XDG_STATE_HOME", dir)
        // The kubeconfig's proxy-url is used whatever NO_PROXY says, as kubectl does.
        .env("NO_PROXY", NO_PROXY)
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy");
    run(command).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_kubectl_go_through_the_proxy_and_a_dead_proxy_is_named() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy binds");
    let proxy = format!("http://{}", listener.local_addr().expect("address"));
    let tunnels = Arc::new(AtomicUsize::new(0));
    let proxy_task = tokio::spawn(connect_proxy(listener, Arc::clone(&tunnels)));

    let original = std::fs::read_to_string(&env.kubeconfig).expect("kubeconfig");
    let proxied = env.dir.path().join("proxied.kubeconfig");
    std::fs::write(&proxied, with_proxy(&original, &proxy)).expect("kubeconfig written");
    let dir = env.dir.path();

    let status = rollcall(dir, &proxied, &["status", DS]).await;
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        text(&status).contains("daemonset kube-system/node-agent"),
        "{}",
        text(&status)
    );
    let by_rollcall = tunnels.load(Ordering::SeqCst);
    assert!(
        by_rollcall >= 1,
        "rollcall opened no tunnel through the proxy"
    );

    let mut kubectl = std::process::Command::new("kubectl");
    kubectl
        .args(["get", "nodes", "-o", "name", "--kubeconfig"])
        .arg(&proxied)
        .env("KUBECACHEDIR", dir.join("kubectl-proxy-cache"))
        .env("HOME", dir)
        .env("NO_PROXY", NO_PROXY);
    let nodes = run(kubectl).await;
    assert!(nodes.status.success(), "{}", text(&nodes));
    assert_eq!(String::from_utf8_lossy(&nodes.stdout).lines().count(), 5);
    assert!(
        tunnels.load(Ordering::SeqCst) > by_rollcall,
        "kubectl opened no tunnel through the proxy"
    );

    // The proxy is gone: rollcall says which proxy it could not reach.
    proxy_task.abort();
    let _ = proxy_task.await;
    let dead = rollcall(dir, &proxied, &["status", DS, "--request-timeout", "5s"]).await;
    assert_eq!(dead.status.code(), Some(2), "{}", text(&dead));
    let said = text(&dead);
    assert!(said.contains("proxy"), "{said}");
    assert!(said.contains(&proxy), "{said}");
}

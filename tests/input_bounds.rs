//! `explain -f` on input that has no end or no shape, with the real binary:
//! each ends with exit 2 and a message within seconds, in little memory
//! (issue 30 item 5: `/dev/zero` grew to 24 GB, a 2 GB file of zeros was read
//! whole, stdin of zeros read 1 GiB first). Plus the words a load says about
//! what it did not read (item 6), and objects past the API's size limits
//! (item 13). Linux only: peak memory is read from `/proc`.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one refused input may take.
const DEADLINE: Duration = Duration::from_secs(5);
/// Peak resident memory one refused input may reach.
const MAX_PEAK_KB: u64 = 100 * 1024;

/// How one run ended.
struct Ended {
    code: Option<i32>,
    stderr: String,
    stdout: String,
    peak_kb: u64,
    took: Duration,
}

/// The process's peak resident set (`VmHWM`), while it is alive.
fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for `child`, sampling its peak memory; kills it past `deadline`.
fn watch(mut child: Child, deadline: Duration) -> Ended {
    let started = Instant::now();
    let pid = child.id();
    let stderr = child.stderr.take().expect("stderr");
    let stdout = child.stdout.take().expect("stdout");
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let (stderr, stdout) = (drain(Box::new(stderr)), drain(Box::new(stdout)));
    let mut peak = 0;
    let code = loop {
        if let Some(kb) = peak_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after {deadline:?} (peak {peak} kB): {}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ended {
        code,
        stderr: stderr.join().expect("stderr"),
        stdout: stdout.join().expect("stdout"),
        peak_kb: peak,
        took: started.elapsed(),
    }
}

fn explain(file: &str, stdin: Stdio) -> Child {
    Command::new(common::rollcall_bin())
        .args(["explain", "-o", "json", "-f", file])
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rollcall")
}

/// Feeds zeros to `sink` until the reader goes away.
fn zeros_forever(mut sink: impl std::io::Write + Send + 'static) {
    std::thread::spawn(move || {
        let block = vec![0u8; 64 << 10];
        while sink.write_all(&block).is_ok() {}
    });
}

fn fifo_of_zeros(dir: &Path) -> String {
    let fifo = dir.join("zeros.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let path = fifo.clone();
    // Opening blocks until rollcall opens the other end; a thread left
    // waiting (when rollcall refuses first) ends with the test process.
    std::thread::spawn(move || {
        if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path) {
            zeros_forever(file);
        }
    });
    fifo.display().to_string()
}

fn sparse_zeros(dir: &Path) -> String {
    let path = dir.join("zeros-2g.json");
    let file = std::fs::File::create(&path).expect("create");
    file.set_len(2 << 30).expect("sparse 2 GB");
    path.display().to_string()
}

fn nul_led(dir: &Path) -> String {
    let path = dir.join("nul-led.json");
    std::fs::write(&path, b"\0{\"apiVersion\":\"v1\",\"kind\":\"Node\"}").expect("write");
    path.display().to_string()
}

#[test]
fn endless_and_shapeless_input_ends_fast_in_little_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nul_message = "cannot start JSON, YAML, tar, zip, gzip or xz";
    let zeros_message = "starts with more than 16 KiB of NUL bytes";
    let cases: [(&str, String, &str); 5] = [
        (
            "/dev/zero",
            "/dev/zero".to_owned(),
            "/dev/zero: not a regular file, FIFO or stdin (it is a character device)",
        ),
        (
            "a FIFO fed zeros forever",
            fifo_of_zeros(dir.path()),
            zeros_message,
        ),
        ("stdin fed zeros forever", "-".to_owned(), zeros_message),
        (
            "a 2 GB sparse file of zeros",
            sparse_zeros(dir.path()),
            zeros_message,
        ),
        ("a NUL-led small file", nul_led(dir.path()), nul_message),
    ];
    for (name, file, words) in cases {
        let child = if file == "-" {
            let mut child = explain(&file, Stdio::piped());
            zeros_forever(child.stdin.take().expect("stdin"));
            child
        } else {
            explain(&file, Stdio::null())
        };
        let ended = watch(child, DEADLINE);
        eprintln!(
            "{name}: exit {:?} after {:?}, peak {} kB",
            ended.code, ended.took, ended.peak_kb
        );
        assert_eq!(ended.code, Some(2), "{name}: {}", ended.stderr);
        assert!(ended.stderr.contains(words), "{name}: {}", ended.stderr);
        assert!(
            ended.peak_kb < MAX_PEAK_KB,
            "{name}: peak {} kB",
            ended.peak_kb
        );
    }
}

/// A List of `Items` in Go's field names, as kubectl 1.13's `cluster-info
/// dump` wrote it (internal types: no `kind`, metadata flattened).
fn internal_list(resource: &str, names: &[&str]) -> String {
    let items: Vec<serde_json::Value> = names
        .iter()
        .map(|name| {
            serde_json::json!({"name": name, "namespace": "kube-system", "uid": format!("uid-{name}"),
                "Spec": {"NodeName": "n1"}, "Status": {"Phase": "Running"}})
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "selfLink": format!("/api/v1/{resource}"), "resourceVersion": "42", "Items": items}))
    .expect("json")
}

#[test]
fn a_kubectl_1_13_cluster_info_dump_says_what_it_is_and_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cluster-info.dump");
    let mut text = String::new();
    for (resource, names) in [
        ("nodes", &["n1", "n2"][..]),
        ("pods", &["p1"][..]),
        ("daemonsets", &["agent"][..]),
    ] {
        text.push_str(&internal_list(resource, names));
        text.push('\n');
    }
    text.push_str("==== START logs for container agent of pod kube-system/p1 ====\nhello\n==== END logs for container agent of pod kube-system/p1 ====\n");
    std::fs::write(&path, text).expect("write");
    let output = common::run_rollcall(&["explain", "-f", &path.display().to_string()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("3 documents look like Kubernetes internal types (capitalised Items/Spec/Status, no kind), as kubectl before 1.14 wrote them"),
        "{stderr}"
    );
    assert!(stderr.contains("re-dump with a newer kubectl"), "{stderr}");
    assert!(!stderr.contains("not API objects"), "{stderr}");
}

#[test]
fn kinds_not_read_are_one_line_and_counted_as_objects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rbac.json");
    let role = |name: &str| {
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name}})
    };
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        role("a"), role("b"), role("c"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default"}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]});
    std::fs::write(&path, list.to_string()).expect("write");
    let file = path.display().to_string();
    let output = common::run_rollcall(&["explain", "-f", &file]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("skipped 3 ClusterRole, 1 Service (kinds rollcall does not read)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "no DaemonSets found in {file} (5 objects of kinds ClusterRole (3), Node (1), Service (1))"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("skipped Service default/kubernetes"),
        "{stderr}"
    );
}

#[test]
fn objects_past_the_api_limits_are_left_out_naming_the_limit_among_20000_nodes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.json");
    let ten_mb = "x".repeat(10 << 20);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    write!(file, r#"{{"apiVersion":"v1","kind":"List","items":["#).expect("write");
    for i in 0..20_000 {
        write!(
            file,
            r#"{{"apiVersion":"v1","kind":"Node","metadata":{{"name":"node-{i:05}","labels":{{"zone":"z{}"}}}}}},"#,
            i % 3
        )
        .expect("write");
    }
    let ds = |name: &str, spec: &str| {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{{"name":"{name}","namespace":"kube-system"}},"spec":{{"selector":{{"matchLabels":{{"app":"{name}"}}}},"template":{{"metadata":{{"labels":{{"app":"{name}"}}}},"spec":{spec}}}}}}}"#
        )
    };
    let tolerations: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"key":"k{i}","operator":"Exists"}}"#))
        .collect();
    let items = [
        format!(
            r#"{{"apiVersion":"v1","kind":"Node","metadata":{{"name":"huge","labels":{{"zone":"{ten_mb}"}}}}}}"#
        ),
        ds(
            "image",
            &format!(r#"{{"containers":[{{"name":"c","image":"{ten_mb}"}}]}}"#),
        ),
        ds(
            "tolerant",
            &format!(
                r#"{{"containers":[{{"name":"c","image":"a:1"}}],"tolerations":[{}]}}"#,
                tolerations.join(",")
            ),
        ),
        ds(
            "agent",
            r#"{"containers":[{"name":"c","image":"agent:1"}]}"#,
        ),
    ];
    write!(file, "{}]}}", items.join(",")).expect("write");
    file.flush().expect("flush");
    drop(file);
    let ended = watch(
        explain(&path.display().to_string(), Stdio::null()),
        Duration::from_secs(120),
    );
    eprintln!("took {:?}, peak {} kB", ended.took, ended.peak_kb);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    for words in [
        "excluded Node huge: metadata.labels[zone] is 10485760 bytes long, more than the 63 Kubernetes allows",
        "excluded DaemonSet kube-system/image: spec.template.spec.containers[c].image is 10485760 bytes long, more than rollcall's limit of 1024",
        "excluded DaemonSet kube-system/tolerant: spec.template.spec.tolerations has 100000 entries, more than rollcall's limit of 10000",
    ] {
        assert!(ended.stderr.contains(words), "{words}: {}", ended.stderr);
    }
    let report: serde_json::Value = serde_json::from_str(&ended.stdout).expect("json");
    let daemonsets = report["daemonsets"].as_array().expect("daemonsets");
    assert_eq!(daemonsets.len(), 1);
    assert_eq!(
        daemonsets[0]["nodes"].as_array().map(Vec::len),
        Some(20_000)
    );
}

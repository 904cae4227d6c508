//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

pub mod pod_timeline;
pub mod sim;
pub mod tmux;

use std::path::PathBuf;

/// Set by `.ci/run`: a missing external tool fails the test instead of skipping it.
pub const REQUIRE_TOOLS_ENV: &str = "ROLLCALL_REQUIRE_TOOLS";

/// Finds `name` on PATH.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Whether `name` (kubectl, tmux, curl) can be used. When it is missing, the
/// test is skipped with a message on a developer's machine and fails in CI
/// (where `ROLLCALL_REQUIRE_TOOLS` is set).
pub fn tool_available(name: &str) -> bool {
    if find_tool(name).is_some() {
        return true;
    }
    assert!(
        std::env::var_os(REQUIRE_TOOLS_ENV).is_none(),
        "{name} is required ({REQUIRE_TOOLS_ENV} is set) but was not found on PATH"
    );
    eprintln!("skipping: {name} not found on PATH (install it to run this test)");
    false
}

/// A JSON patch that raises the small scenario's node-agent template to 64
/// cpu: more than any of its nodes allocates, so no replacement will fit.
pub const NODE_AGENT_TO_64_CPU: &str = r#"[{"op":"add","path":"/spec/template/spec/containers/0/resources","value":{"requests":{"cpu":"64"}}}]"#;

/// The path of the built `rollcall` binary.
pub fn rollcall_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rollcall"))
}

/// The path of a file under `tests/fixtures/`, as a string for command lines.
pub fn fixture_path(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(relative)
        .display()
        .to_string()
}

/// Runs the `rollcall` binary with `args` and collects its output.
pub fn run_rollcall(args: &[&str]) -> std::process::Output {
    std::process::Command::new(rollcall_bin())
        .args(args)
        .output()
        .expect("run rollcall")
}

/// Runs the real kubectl on `kubeconfig` with its own discovery cache;
/// returns stdout (panics, with kubectl's stderr, when it fails).
pub fn kubectl(kubeconfig: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

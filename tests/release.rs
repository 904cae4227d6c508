//! What a release ships: `rollcall version` / `--version` of the real binary,
//! and the krew plugin manifest and archives `dist/release.sh` makes (run with
//! a stand-in binary, so the test builds nothing in release mode).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stdout_of(args: &[&str]) -> String {
    let output = common::run_rollcall(args);
    assert!(output.status.success(), "rollcall {args:?}: {output:?}");
    String::from_utf8(output.stdout).expect("utf-8 output")
}

/// A commit as build.rs records it: short hex, or `unknown`.
fn is_commit(text: &str) -> bool {
    text == "unknown" || (text.len() >= 7 && text.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
fn is_build_date(text: &str) -> bool {
    let digits = |range: std::ops::Range<usize>| {
        text.get(range)
            .is_some_and(|part| part.bytes().all(|b| b.is_ascii_digit()))
    };
    text.len() == 20
        && digits(0..4)
        && &text[4..5] == "-"
        && digits(5..7)
        && &text[7..8] == "-"
        && digits(8..10)
        && &text[10..11] == "T"
        && digits(11..13)
        && digits(14..16)
        && digits(17..19)
        && text.ends_with('Z')
}

/// The commit of this checkout, when the tests run in one with git on PATH.
fn checkout_commit() -> Option<String> {
    if !repo().join(".git").exists() {
        return None;
    }
    let output = Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[test]
fn version_names_the_crate_version_the_commit_and_the_build_date() {
    let line = stdout_of(&["version"]);
    let rest = line
        .strip_prefix(&format!("rollcall {VERSION} (commit "))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, rest) = rest.split_once(", built ").expect(&line);
    let date = rest.strip_suffix(")\n").expect(&line);
    assert!(is_commit(commit), "{line}");
    assert!(is_build_date(date), "{line}");
    if let Some(head) = checkout_commit() {
        assert_eq!(commit, head, "built from this checkout");
    }
    // --version and -V say the same.
    assert_eq!(stdout_of(&["--version"]), line);
    assert_eq!(stdout_of(&["-V"]), line);
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BuildInfo {
    version: String,
    commit: String,
    build_date: String,
}

#[test]
fn version_json_is_one_camel_case_object() {
    let text = stdout_of(&["version", "-o", "json"]);
    let info: BuildInfo = serde_json::from_str(&text).expect(&text);
    assert_eq!(info.version, VERSION);
    assert!(is_commit(&info.commit), "{text}");
    assert!(is_build_date(&info.build_date), "{text}");
    assert!(stdout_of(&["version"]).contains(&info.commit));
}

/// The krew manifest as krew reads it (the fields this plugin sets).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Plugin {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Spec {
    version: String,
    homepage: String,
    short_description: String,
    description: String,
    platforms: Vec<Platform>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    selector: Selector,
    uri: String,
    sha256: String,
    bin: String,
    files: Vec<FileOperation>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Selector {
    match_labels: MatchLabels,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchLabels {
    os: String,
    arch: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOperation {
    from: String,
    to: String,
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// Names and modes of the entries of a `.tar.gz`.
fn archive_entries(path: &Path) -> Vec<(String, u32)> {
    let file = std::fs::File::open(path).expect("archive");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut entries: Vec<(String, u32)> = archive
        .entries()
        .expect("entries")
        .map(|entry| {
            let entry = entry.expect("entry");
            let name = entry.path().expect("path").to_string_lossy().into_owned();
            (name, entry.header().mode().expect("mode"))
        })
        .collect();
    entries.sort();
    entries
}

#[test]
fn release_script_packs_archives_and_renders_a_krew_manifest() {
    for tool in ["bash", "tar", "gzip"] {
        if !common::tool_available(tool) {
            return;
        }
    }
    if common::find_tool("sha256sum").is_none() && !common::tool_available("shasum") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let binary = dir.path().join("stand-in");
    std::fs::write(&binary, "#!/bin/sh\necho stand-in\n").expect("stand-in binary");
    let base_url = "https://example.invalid/releases/v9";
    let run = Command::new("bash")
        .arg(repo().join("dist/release.sh"))
        .arg("--out")
        .arg(&out)
        .args(["--base-url", base_url, "--binary"])
        .arg(&binary)
        .args(["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"])
        .output()
        .expect("bash dist/release.sh");
    assert!(run.status.success(), "{run:?}");

    let text = std::fs::read_to_string(out.join("rollcall.yaml")).expect("manifest");
    let plugin: Plugin = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        plugin.api_version,
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(plugin.kind, "Plugin");
    assert_eq!(plugin.metadata.name, "rollcall");
    let spec = &plugin.spec;
    assert_eq!(spec.version, format!("v{VERSION}"), "krew wants a v prefix");
    assert!(spec.homepage.starts_with("https://"), "{}", spec.homepage);
    assert!(
        !spec.short_description.is_empty() && spec.short_description.len() <= 60,
        "a few words: {}",
        spec.short_description
    );
    assert!(!spec.description.trim().is_empty());

    let platforms: Vec<(&str, &str)> = spec
        .platforms
        .iter()
        .map(|p| {
            let labels = &p.selector.match_labels;
            (labels.os.as_str(), labels.arch.as_str())
        })
        .collect();
    assert_eq!(platforms, [("linux", "amd64"), ("darwin", "arm64")]);
    for platform in &spec.platforms {
        assert_eq!(platform.bin, "kubectl-rollcall");
        assert!(
            platform.sha256.len() == 64
                && platform
                    .sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "sha256 is 64 hex characters: {}",
            platform.sha256
        );
        let name = platform
            .uri
            .strip_prefix(&format!("{base_url}/"))
            .unwrap_or_else(|| panic!("{}", platform.uri));
        assert!(name.ends_with(".tar.gz"), "{name}");
        let labels = &platform.selector.match_labels;
        assert_eq!(
            name,
            format!(
                "kubectl-rollcall_v{VERSION}_{}_{}.tar.gz",
                labels.os, labels.arch
            )
        );
        let archive = out.join(name);
        let bytes = std::fs::read(&archive).expect("archive beside the manifest");
        assert_eq!(platform.sha256, sha256_hex(&bytes), "{name}");
        let sidecar =
            std::fs::read_to_string(out.join(format!("{name}.sha256"))).expect("sha256 file");
        assert_eq!(sidecar, format!("{}  {name}\n", platform.sha256));
        assert_eq!(
            archive_entries(&archive),
            [
                ("LICENSE".to_owned(), 0o644),
                ("kubectl-rollcall".to_owned(), 0o755)
            ]
        );
        let from: Vec<&str> = platform.files.iter().map(|f| f.from.as_str()).collect();
        assert_eq!(from, ["kubectl-rollcall", "LICENSE"]);
        assert!(platform.files.iter().all(|f| f.to == "."));
    }
}

#[test]
fn release_script_refuses_a_target_krew_has_no_platform_for() {
    if !common::tool_available("bash") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let run = Command::new("bash")
        .arg(repo().join("dist/release.sh"))
        .arg("--out")
        .arg(dir.path())
        .args(["--binary", "/bin/sh", "riscv64gc-unknown-linux-gnu"])
        .output()
        .expect("bash dist/release.sh");
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(String::from_utf8_lossy(&run.stderr).contains("no platform for target riscv64gc"));
    assert!(!dir.path().join("rollcall.yaml").exists());
}

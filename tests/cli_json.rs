//! `-o json` of the headless commands, through the real binary on the embedded
//! cluster: `history` (the list, and one revision with its template and a
//! structured diff) as one camelCase document; the acting commands (`advance`,
//! `pause`, `resume`, `rollback`, `auto`, and their `--read-only` dry runs) as
//! JSON lines only — one object per step with `time` and `event`, ending with
//! `{"event":"end","exitCode":N}` — so a script can read stdout line by line.

mod common;
mod ops_support;

use std::process::Output;

use ops_support::{Env, NEW_IMAGE, OLD_IMAGE, small, text};
use serde_json::Value;

const DS: &str = "kube-system/node-agent";

/// Every stdout line as JSON (panics on a line that is not), checking the
/// shape every step has and that the last line is the `end` with the exit code.
fn json_lines(output: &Output) -> Vec<Value> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}\n{}", text(output)))
        })
        .collect();
    for line in &lines {
        assert!(
            line["time"].is_string() && line["event"].is_string() && line["message"].is_string(),
            "every step has time, event and message: {line}"
        );
    }
    let end = lines
        .last()
        .unwrap_or_else(|| panic!("no JSON: {}", text(output)));
    assert_eq!(end["event"], "end", "{}", text(output));
    assert_eq!(
        end["exitCode"].as_i64(),
        output.status.code().map(i64::from),
        "the end line carries the exit code: {}",
        text(output)
    );
    assert_eq!(
        lines.iter().filter(|l| l["event"] == "end").count(),
        1,
        "one end line: {}",
        text(output)
    );
    lines
}

fn events(lines: &[Value]) -> Vec<&str> {
    lines.iter().filter_map(|l| l["event"].as_str()).collect()
}

async fn document(env: &Env, args: &[&str]) -> Value {
    let output = env.rollcall(args).await;
    assert!(output.status.success(), "{args:?}: {}", text(&output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_and_every_acting_command_speak_json() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    history_documents(&env).await;
    acting_lines(&env).await;
}

/// `history -o json`: the list, one old revision with its diff, the current one.
async fn history_documents(env: &Env) {
    let history = document(env, &["history", DS, "-o", "json"]).await;
    assert_eq!(
        (&history["namespace"], &history["name"]),
        (&Value::from("kube-system"), &Value::from("node-agent"))
    );
    assert_eq!(history["currentRevision"], 2, "{history}");
    let revisions = history["revisions"].as_array().expect("revisions");
    let summary: Vec<(i64, bool, i64, &str)> = revisions
        .iter()
        .map(|r| {
            (
                r["revision"].as_i64().unwrap_or(-1),
                r["current"].as_bool().unwrap_or(false),
                r["nodes"].as_i64().unwrap_or(-1),
                r["images"][0].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [(1, false, 5, OLD_IMAGE), (2, true, 0, NEW_IMAGE)],
        "{history}"
    );

    let one = document(env, &["history", DS, "--revision", "1", "-o", "json"]).await;
    assert_eq!(one["revision"], 1, "{one}");
    assert_eq!(one["template"]["spec"]["containers"][0]["image"], OLD_IMAGE);
    assert_eq!(one["diff"]["identical"], false);
    let changes = one["diff"]["changes"].as_array().expect("changes");
    assert!(
        changes
            .iter()
            .any(|c| c["op"] == "+" && c["line"].as_str().is_some_and(|l| l.contains(OLD_IMAGE)))
            && changes.iter().any(
                |c| c["op"] == "-" && c["line"].as_str().is_some_and(|l| l.contains(NEW_IMAGE))
            ),
        "{changes:?}"
    );
    let current = document(env, &["history", DS, "--revision", "2", "-o", "json"]).await;
    assert_eq!(current["diff"]["identical"], true, "{current}");
}

/// A dry run, advance, pause, resume and rollback, each as JSON lines.
async fn acting_lines(env: &Env) {
    // A dry run: the delete it would send, structured, then the end.
    let dry = env
        .rollcall(&[
            "--read-only",
            "advance",
            DS,
            "--node",
            "general-02",
            "-o",
            "json",
        ])
        .await;
    let lines = json_lines(&dry);
    assert_eq!(events(&lines), ["dryRun", "end"], "{}", text(&dry));
    assert_eq!(lines[0]["method"], "DELETE");
    assert!(
        lines[0]["path"]
            .as_str()
            .is_some_and(|p| p.starts_with("/api/v1/namespaces/kube-system/pods/node-agent-")),
        "{}",
        lines[0]
    );
    assert!(lines[0]["body"]["preconditions"]["uid"].is_string());

    let advance = env
        .rollcall(&[
            "advance",
            DS,
            "--node",
            "general-01",
            "--wait",
            "--timeout",
            "60s",
            "-o",
            "json",
            "--yes",
        ])
        .await;
    let lines = json_lines(&advance);
    assert_eq!(events(&lines), ["delete", "end"], "{}", text(&advance));
    assert_eq!(lines[0]["node"], "general-01");
    assert!(
        lines[0]["pod"]
            .as_str()
            .is_some_and(|p| p.starts_with("node-agent-"))
    );
    assert_eq!(lines[1]["exitCode"], 0);

    for (command, said) in [("pause", "paused"), ("resume", "resumed")] {
        let output = env.rollcall(&[command, DS, "-o", "json", "--yes"]).await;
        let lines = json_lines(&output);
        assert_eq!(events(&lines), ["end"], "{}", text(&output));
        assert_eq!(lines[0]["message"], format!("{DS} {said}"));
    }

    let rollback = env
        .rollcall(&["rollback", DS, "--timeout", "60s", "-o", "json", "--yes"])
        .await;
    let lines = json_lines(&rollback);
    let said = events(&lines);
    assert_eq!(said[..2], ["plan", "rollback"], "{}", text(&rollback));
    assert!(said.contains(&"delete"), "moves general-01 back: {said:?}");
    assert_eq!(lines[0]["toRevision"], 1);
    assert_eq!(lines[0]["nodes"], serde_json::json!(["general-01"]));
    assert!(
        lines[0]["diff"]
            .as_str()
            .is_some_and(|d| d.contains(OLD_IMAGE)),
        "{}",
        lines[0]
    );
    assert_eq!(lines.last().map(|l| &l["exitCode"]), Some(&Value::from(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_emits_a_json_line_per_step_and_ends_paused() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let output = env
        .rollcall(&[
            "auto",
            DS,
            "--canary",
            "node-pool=general",
            "--batch",
            "3",
            "--soak",
            "1s",
            "--timeout",
            "30s",
            "-o",
            "json",
            "--yes",
        ])
        .await;
    let lines = json_lines(&output);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let deleted: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] == "delete")
        .filter_map(|l| l["node"].as_str())
        .collect();
    assert!(
        ["general-01", "general-02", "general-03"]
            .iter()
            .all(|n| deleted.contains(n)),
        "the canaries move first: {deleted:?}"
    );
    let end = lines.last().expect("end");
    assert!(
        end["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("paused: node edge-0")),
        "{end}"
    );
}

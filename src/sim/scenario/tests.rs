use super::*;

const MINIMAL: &str = "\
name: t
pools:
  - name: general
    count: 2
daemonSets:
  - name: agent
    revisions:
      - image: agent:1
";

fn error_text(text: &str) -> String {
    match Scenario::parse("t.yaml", text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn every_builtin_scenario_parses_and_validates() {
    for name in Scenario::builtin_names() {
        let scenario = Scenario::load(name).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(scenario.name, name);
    }
}

#[test]
fn default_scenario_has_the_promised_shape() {
    let scenario = Scenario::load("default").expect("default loads");
    let nodes: usize = scenario.pools.iter().map(|p| p.count).sum();
    assert!((10..=20).contains(&nodes), "{nodes} nodes");
    let on_delete = scenario
        .daemon_sets
        .iter()
        .find(|ds| ds.update_strategy == StrategyKind::OnDelete)
        .expect("an OnDelete DaemonSet");
    assert!(
        on_delete
            .pods_at
            .is_some_and(|at| at < on_delete.revisions.len())
    );
    assert!(scenario.nodes.iter().any(|n| n.cordoned));
    assert!(scenario.nodes.iter().any(|n| n.not_ready));
}

#[test]
fn minimal_scenario_gets_defaults() {
    let scenario = Scenario::parse("t.yaml", MINIMAL).expect("parses");
    assert_eq!(scenario.timing, Timing::default());
    let ds = &scenario.daemon_sets[0];
    assert_eq!(ds.namespace, "kube-system");
    assert_eq!(ds.update_strategy, StrategyKind::RollingUpdate);
    assert_eq!(scenario.pools[0].node_name(2), "general-02");
    assert_eq!(
        scenario.pool_of_node("general-17").map(|p| p.name.as_str()),
        Some("general")
    );
    assert!(scenario.pool_of_node("generalx").is_none());
}

#[test]
fn errors_name_the_file_and_line() {
    let cases = [
        ("unknown field", format!("{MINIMAL}bogus: 1\n"), "t.yaml:9:"),
        (
            "bad duration",
            format!("{MINIMAL}timing:\n  pull: 3 parsecs\n"),
            "t.yaml:10:",
        ),
        (
            "unknown pool in an image rule",
            format!(
                "{MINIMAL}images:\n  - image: agent:2\n    failure: CrashLoopBackOff\n    pools: [gpux]\n"
            ),
            "t.yaml:12: images: unknown pool \"gpux\"",
        ),
        (
            "unknown failure kind",
            format!("{MINIMAL}images:\n  - image: agent:2\n    failure: Explodes\n"),
            "t.yaml:11:",
        ),
        (
            "timeline node that no pool makes",
            format!("{MINIMAL}timeline:\n  - at: 5s\n    action: notReady\n    node: db-01\n"),
            "t.yaml:12: timeline at 5s: unknown node \"db-01\"",
        ),
        (
            "podsAt out of range",
            MINIMAL.replace("revisions:", "podsAt: 3\n    revisions:"),
            "t.yaml:7: daemonSet agent: podsAt 3",
        ),
        (
            "budget on OnDelete",
            MINIMAL.replace(
                "revisions:",
                "updateStrategy: OnDelete\n    maxUnavailable: 2\n    revisions:",
            ),
            "t.yaml:8: daemonSet agent: maxUnavailable/maxSurge need",
        ),
        (
            "bad percentage",
            MINIMAL.replace("revisions:", "maxSurge: lots\n    revisions:"),
            "t.yaml:7: daemonSet agent: maxSurge must be",
        ),
    ];
    for (name, text, expected) in cases {
        let message = error_text(&text);
        assert!(
            message.starts_with(expected),
            "{name}: got {message:?}, want {expected:?}..."
        );
    }
}

#[test]
fn unknown_name_lists_the_builtins() {
    let err = Scenario::load("nosuch").expect_err("unknown");
    assert!(err.to_string().contains("default"), "{err}");
}

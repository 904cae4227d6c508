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

#[test]
fn node_counts_past_the_limit_are_refused_before_any_work() {
    let huge = MINIMAL.replace("count: 2", "count: 1000000000");
    let started = std::time::Instant::now();
    let err = error_text(&huge);
    assert!(
        err.contains("create 1000000000 nodes, more than the limit of 100000"),
        "{err}"
    );
    let joins = format!(
        "{MINIMAL}timeline:\n  - at: 1s\n    action: join\n    pool: general\n    count: 100000\n"
    );
    assert!(error_text(&joins).contains("100002 nodes"));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn deep_nesting_is_refused_quickly_with_the_limit() {
    let started = std::time::Instant::now();
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        let deep = format!(
            "name: t\npools: {}1{}\n",
            open.repeat(100_000),
            close.repeat(100_000)
        );
        let err = error_text(&deep);
        assert_eq!(err, "t.yaml:2: nested deeper than the limit of 64 levels");
    }
    // Closing brackets hidden in strings do not let the depth grow unseen.
    let hidden = format!("name: t\npools: {}\n", "[ \"]\" ".repeat(5000));
    assert!(error_text(&hidden).contains("limit of 4096 flow collections"));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    // Ordinary flow collections are fine.
    let flow = MINIMAL.replace(
        "count: 2",
        "count: 2\n    zones: [a, b]\n    labels: {x: y}",
    );
    assert!(Scenario::parse("t.yaml", &flow).is_ok());
}

#[test]
fn a_huge_value_makes_a_short_error() {
    let big = "x".repeat(10 << 20);
    let text = MINIMAL.replace("name: general", &format!("name: {big}\n    arch: {big}"));
    let err = error_text(&text);
    assert!(err.len() < 2048, "{} bytes", err.len());
    assert!(err.starts_with("t.yaml:3: pool \"xxx"), "{}", &err[..200]);
    assert!(err.ends_with('…'), "the cut is marked");
}

#[cfg(unix)]
#[test]
fn files_are_read_bounded_and_devices_refused() {
    let err = Scenario::load("/dev/zero").unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot read /dev/zero: it is a character device, not a regular file"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    let padding = format!("# {}\n", "x".repeat(2 << 20));
    std::fs::write(&path, format!("{MINIMAL}{padding}")).unwrap();
    let err = Scenario::load(path.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("is larger than the 1 MiB limit for a scenario"),
        "{err}"
    );
}

#[test]
fn capacity_fields_are_validated_with_their_line() {
    let pool = |extra: &str| format!("name: t\npools:\n  - name: general\n    count: 2\n{extra}");
    let cases = [
        (
            "a kubelet version without its v",
            pool("    kubeletVersion: 1.30.6\n"),
            "t.yaml:5: kubeletVersion \"1.30.6\" must look like v1.30.6",
        ),
        (
            "no pods at all",
            pool("    pods: 0\n"),
            "t.yaml:5: pool \"general\": pods must be at least 1",
        ),
        (
            "an extended resource in the kubernetes.io domain",
            pool("    extendedResources:\n      kubernetes.io/gpu: 1\n"),
            "t.yaml:6: pool \"general\": extended resource \"kubernetes.io/gpu\"",
        ),
        (
            "an extended resource without a domain",
            pool("    extendedResources:\n      gpu: 1\n"),
            "t.yaml:6:",
        ),
        (
            "a node override's kubelet version",
            pool("nodes:\n  - name: general-01\n    kubeletVersion: v1.x\n"),
            "t.yaml:7: kubeletVersion \"v1.x\"",
        ),
        (
            "a misspelt pressure field",
            pool("nodes:\n  - name: general-01\n    memPressure: true\n"),
            "t.yaml:7:",
        ),
    ];
    for (case, text, expected) in cases {
        let got = error_text(&text);
        assert!(got.contains(expected), "{case}: {got}");
    }
    let good = pool(
        "    pods: 58\n    ephemeralStorageGib: 50\n    kubeletVersion: v1.30.6-eks-7f9249a\n    extendedResources:\n      nvidia.com/gpu: 4\nnodes:\n  - name: general-02\n    memoryPressure: true\n    diskPressure: true\n    kubeletVersion: v1.31.2\n",
    );
    let scenario = Scenario::parse("t.yaml", &good).expect("parses");
    assert_eq!(scenario.pools[0].pods, 58);
    assert_eq!(scenario.pools[0].extended_resources["nvidia.com/gpu"], 4);
    assert!(scenario.nodes[0].memory_pressure && scenario.nodes[0].disk_pressure);
}

#[test]
fn workloads_and_classes_are_validated_with_their_line() {
    let with = |extra: &str| format!("{MINIMAL}{extra}");
    let cases = [
        (
            "a workload on an unknown pool",
            with("workloads:\n  - name: web\n    image: w:1\n    pools: [gpux]\n"),
            "t.yaml:12: workloads: \"web\": unknown pool \"gpux\"",
        ),
        (
            "an unknown priority class",
            with(
                "workloads:\n  - name: web\n    image: w:1\n    pools: [general]\n    priorityClassName: nope\n",
            ),
            "t.yaml:13: unknown priorityClassName \"nope\"",
        ),
        (
            "a user class above the ceiling",
            with("priorityClasses:\n  - name: huge\n    value: 1000000001\n"),
            "t.yaml:10: priorityClasses: \"huge\": value above",
        ),
        (
            "a misspelt workload field",
            with("workloads:\n  - name: web\n    image: w:1\n    hostPort: [80]\n"),
            "t.yaml:12:",
        ),
    ];
    for (case, text, expected) in cases {
        let got = error_text(&text);
        assert!(got.contains(expected), "{case}: {got}");
    }
}

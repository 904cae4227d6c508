//! `kubectl apply` of a whole manifest on the embedded cluster, as on a real
//! one (issue 34): the node agent fixture (a Namespace, a ServiceAccount,
//! RBAC, a ConfigMap, a Secret, a Service, a CRD and one of its custom
//! resources, two DaemonSets) applies client-side and server-side, again
//! without changing anything, every kind is listed by `kubectl get` and
//! `kubectl api-resources`, and `kubectl delete -f` removes it all.

mod common;

type Sim = common::sim::InProcess;

const CRD: &str = "customresourcedefinition.apiextensions.k8s.io/agentpolicies.agent.example.com";

fn fixture(file: &str) -> String {
    common::fixture_path(&format!("manifests/node-agent/{file}"))
}

impl Sim {
    async fn ok(&self, args: &[&str]) -> String {
        self.kubectl_stdout(args).await
    }

    async fn fails(&self, args: &[&str]) -> (String, String) {
        let output = self.kubectl_output(args).await;
        assert!(!output.status.success(), "kubectl {args:?} succeeded");
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// The resourceVersion of every object the manifest holds, but the
    /// DaemonSets' generation (their controller writes their status).
    async fn versions(&self) -> String {
        let dir = common::fixture_path("manifests/node-agent");
        self.ok(&[
            "get",
            "-f",
            &dir,
            "-o",
            "go-template={{range .items}}{{.kind}}/{{.metadata.name}}=\
             {{if eq .kind \"DaemonSet\"}}{{.metadata.generation}}{{else}}{{.metadata.resourceVersion}}{{end}} {{end}}",
        ])
        .await
    }

    /// Applies the CRD first and waits until it is established, as charts
    /// and install scripts do.
    async fn install_crd(&self, extra: &[&str]) {
        let crds = fixture("crds.yaml");
        let mut args = vec!["apply", "-f", crds.as_str()];
        args.extend_from_slice(extra);
        self.ok(&args).await;
        self.ok(&[
            "wait",
            "--for=condition=established",
            "--timeout=10s",
            "crd/agentpolicies.agent.example.com",
        ])
        .await;
    }

    async fn check_every_kind_is_served(&self) {
        let names = self
            .ok(&[
                "get",
                "ns,sa,cm,secret,svc,clusterrole,clusterrolebinding,crd,apol,ds",
                "-n",
                "node-agent",
                "-o",
                "name",
            ])
            .await;
        for expected in [
            "namespace/node-agent",
            "serviceaccount/node-agent",
            "configmap/node-agent-config",
            "secret/node-agent-token",
            "service/node-agent-metrics",
            "clusterrole.rbac.authorization.k8s.io/node-agent",
            "clusterrolebinding.rbac.authorization.k8s.io/node-agent",
            CRD,
            "agentpolicy.agent.example.com/default",
            "daemonset.apps/node-agent",
            "daemonset.apps/log-shipper",
        ] {
            assert!(names.contains(expected), "{expected} in {names}");
        }
        let all = self.ok(&["get", "all", "-n", "node-agent"]).await;
        assert!(
            all.contains("service/node-agent-metrics")
                && all.contains("daemonset.apps/log-shipper"),
            "{all}"
        );
        let config_maps = self.ok(&["get", "configmaps", "-A"]).await;
        assert!(
            config_maps.contains("node-agent   node-agent-config   2"),
            "NAMESPACE, NAME, DATA: {config_maps}"
        );
        self.check_metadata().await;
        self.check_discovery_and_errors().await;
    }

    async fn check_metadata(&self) {
        let policy = self
            .ok(&[
                "get",
                "agentpolicy",
                "default",
                "-n",
                "node-agent",
                "-o",
                "json",
            ])
            .await;
        let policy: serde_json::Value = serde_json::from_str(&policy).expect("json");
        let meta = &policy["metadata"];
        assert!(
            meta["uid"].is_string()
                && meta["resourceVersion"].is_string()
                && meta["creationTimestamp"].is_string()
                && meta["generation"] == 1,
            "{meta}"
        );
        assert_eq!(policy["spec"]["collectors"][2], "disk", "stored as applied");
        let secret = self
            .ok(&[
                "get",
                "secret",
                "node-agent-token",
                "-n",
                "node-agent",
                "-o",
                "json",
            ])
            .await;
        assert!(
            secret.contains("\"token\": \"bm90LWEtcmVhbC10b2tlbg==\""),
            "{secret}"
        );
    }

    async fn check_discovery_and_errors(&self) {
        let resources = self.ok(&["api-resources", "--no-headers"]).await;
        for (name, api_version, namespaced, kind) in [
            (
                "agentpolicies",
                "agent.example.com/v1",
                "true",
                "AgentPolicy",
            ),
            (
                "clusterroles",
                "rbac.authorization.k8s.io/v1",
                "false",
                "ClusterRole",
            ),
            ("configmaps", "v1", "true", "ConfigMap"),
            (
                "customresourcedefinitions",
                "apiextensions.k8s.io/v1",
                "false",
                "CustomResourceDefinition",
            ),
            (
                "poddisruptionbudgets",
                "policy/v1",
                "true",
                "PodDisruptionBudget",
            ),
            (
                "validatingwebhookconfigurations",
                "admissionregistration.k8s.io/v1",
                "false",
                "ValidatingWebhookConfiguration",
            ),
        ] {
            let line = resources
                .lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("{name} in {resources}"));
            let columns: Vec<&str> = line.split_whitespace().rev().take(3).collect();
            assert_eq!(columns, [kind, namespaced, api_version], "{line}");
        }
        let (_, missing) = self.fails(&["get", "cm", "nope", "-n", "node-agent"]).await;
        assert!(
            missing.contains("Error from server (NotFound): configmaps \"nope\" not found"),
            "{missing}"
        );
        let (_, clash) = self.fails(&["create", "-f", &fixture("crds.yaml")]).await;
        assert!(clash.contains("(AlreadyExists)"), "{clash}");
    }

    async fn check_delete_removes_everything(&self) {
        let dir = common::fixture_path("manifests/node-agent");
        let deleted = self.ok(&["delete", "-f", &dir]).await;
        assert_eq!(deleted.lines().count(), 11, "{deleted}");
        let left = self
            .ok(&["get", "ns,crd,clusterroles,configmaps", "-A", "-o", "name"])
            .await;
        assert!(!left.contains("node-agent"), "{left}");
        let resources = self.ok(&["api-resources", "--no-headers"]).await;
        assert!(!resources.contains("agentpolicies"), "{resources}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_manifest_applies_client_side_as_on_a_real_cluster() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", 1.0).await;
    let dir = common::fixture_path("manifests/node-agent");
    // One invocation with the CRD and its resource: kubectl maps every
    // object before applying any, so the resource fails as on any cluster,
    // and everything else is applied.
    let (created, refused) = sim.fails(&["apply", "-f", &dir]).await;
    assert!(
        refused.contains("no matches for kind \"AgentPolicy\" in version \"agent.example.com/v1\"")
            && refused.contains("ensure CRDs are installed first"),
        "{refused}"
    );
    assert!(
        created.contains(&format!("{CRD} created"))
            && created.contains("daemonset.apps/log-shipper created"),
        "{created}"
    );
    let again = sim.ok(&["apply", "-f", &dir]).await;
    assert!(
        again.contains("agentpolicy.agent.example.com/default created"),
        "{again}"
    );
    let versions = sim.versions().await;
    let unchanged = sim.ok(&["apply", "-f", &dir]).await;
    // A Secret applied with `stringData` is "configured" every time, as on
    // a real cluster: `stringData` is never stored, so kubectl's three-way
    // diff always finds it missing (the server's write is then a no-op).
    for line in unchanged.lines() {
        let expected = if line.starts_with("secret/") {
            " configured"
        } else {
            " unchanged"
        };
        assert!(line.ends_with(expected), "{unchanged}");
    }
    assert_eq!(unchanged.lines().count(), 11, "{unchanged}");
    assert_eq!(
        sim.versions().await,
        versions,
        "an idempotent apply writes nothing"
    );
    sim.check_every_kind_is_served().await;
    sim.check_delete_removes_everything().await;
    sim.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_manifest_applies_server_side_again_without_a_write() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", 1.0).await;
    let dir = common::fixture_path("manifests/node-agent");
    sim.install_crd(&["--server-side"]).await;
    let applied = sim.ok(&["apply", "--server-side", "-f", &dir]).await;
    assert_eq!(
        applied
            .lines()
            .filter(|l| l.ends_with(" serverside-applied"))
            .count(),
        11,
        "{applied}"
    );
    let versions = sim.versions().await;
    sim.ok(&["apply", "--server-side", "-f", &dir]).await;
    assert_eq!(
        sim.versions().await,
        versions,
        "an idempotent apply writes nothing"
    );
    let managers = sim
        .ok(&[
            "get",
            "cm/node-agent-config",
            "-n",
            "node-agent",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}/{.metadata.managedFields[*].operation}",
        ])
        .await;
    assert_eq!(managers, "kubectl/Apply");

    // Another manager's change is a conflict, as upstream, until forced.
    sim.ok(&[
        "patch",
        "cm/node-agent-config",
        "-n",
        "node-agent",
        "--type=merge",
        "-p",
        r#"{"data":{"log-level":"debug"}}"#,
    ])
    .await;
    let (_, conflict) = sim.fails(&["apply", "--server-side", "-f", &dir]).await;
    assert!(
        conflict.contains("conflict with \"kubectl-patch\"")
            && conflict.contains(".data.log-level"),
        "{conflict}"
    );
    sim.ok(&["apply", "--server-side", "--force-conflicts", "-f", &dir])
        .await;
    let level = sim
        .ok(&[
            "get",
            "cm/node-agent-config",
            "-n",
            "node-agent",
            "-o",
            "jsonpath={.data.log-level}",
        ])
        .await;
    assert_eq!(level, "info");
    sim.check_every_kind_is_served().await;
    sim.check_delete_removes_everything().await;
    sim.cluster.shutdown().await;
}

//! The image list a node reports in `status.images`: the images a typical
//! cloud node has pulled (system pods, agents, a few workloads), each with a
//! digest reference, a tag reference and a size. Digests come from the seeded
//! generator, so a scenario always produces the same nodes.

use rand::{Rng, rngs::StdRng};
use serde_json::{Map, Value};

/// Images commonly cached on a node: (repository, tag, size in bytes).
const CATALOGUE: &[(&str, &str, u64)] = &[
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni",
        "v1.19.0-eksbuild.1",
        52_418_221,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni-init",
        "v1.19.0-eksbuild.1",
        61_853_214,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy",
        "v1.32.0-minimal-eksbuild.2",
        38_812_436,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/pause",
        "3.10",
        299_513,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns",
        "v1.11.3-eksbuild.2",
        18_562_004,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/aws-ebs-csi-driver",
        "v1.37.0",
        79_811_642,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/csi-node-driver-registrar",
        "v2.12.0-eks-1-32-1",
        10_264_851,
    ),
    (
        "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/livenessprobe",
        "v2.14.0-eks-1-32-1",
        9_831_203,
    ),
    (
        "registry.k8s.io/metrics-server/metrics-server",
        "v0.7.2",
        19_494_617,
    ),
    ("quay.io/prometheus/node-exporter", "v1.8.2", 12_069_325),
    (
        "quay.io/prometheus-operator/prometheus-config-reloader",
        "v0.78.2",
        14_287_540,
    ),
    ("cr.fluentbit.io/fluent/fluent-bit", "3.1.9", 41_207_188),
    (
        "registry.example.com/platform/node-agent",
        "1.4.2",
        33_718_902,
    ),
    ("docker.io/calico/node", "v3.29.1", 147_232_871),
    ("docker.io/calico/cni", "v3.29.1", 94_311_287),
    ("ghcr.io/aquasecurity/trivy-operator", "0.23.0", 51_624_001),
    ("public.ecr.aws/karpenter/controller", "1.1.0", 44_810_367),
    (
        "public.ecr.aws/aws-observability/aws-for-fluent-bit",
        "2.32.4",
        93_108_452,
    ),
    ("docker.io/grafana/promtail", "3.3.0", 82_412_745),
    ("docker.io/library/nginx", "1.27.3", 72_995_312),
    ("docker.io/library/redis", "7.4.1", 45_112_079),
    ("docker.io/bitnami/kubectl", "1.32.0", 72_160_432),
    (
        "registry.k8s.io/ingress-nginx/controller",
        "v1.12.0",
        105_302_994,
    ),
    (
        "quay.io/jetstack/cert-manager-controller",
        "v1.16.2",
        20_402_332,
    ),
    ("quay.io/cilium/cilium", "v1.16.5", 194_372_912),
    ("docker.io/datadog/agent", "7.60.0", 390_224_710),
];

/// The `status.images` list for one node.
pub fn node_images(rng: &mut StdRng) -> Value {
    let images = CATALOGUE
        .iter()
        .map(|(repository, tag, size)| {
            let digest = format!(
                "sha256:{:016x}{:016x}{:016x}{:016x}",
                rng.random::<u64>(),
                rng.random::<u64>(),
                rng.random::<u64>(),
                rng.random::<u64>()
            );
            // Built directly: `json!` would copy each name it is given.
            let names = vec![
                Value::String(format!("{repository}@{digest}")),
                Value::String(format!("{repository}:{tag}")),
            ];
            let mut image = Map::new();
            image.insert("names".to_owned(), Value::Array(names));
            image.insert("sizeBytes".to_owned(), Value::from(*size));
            Value::Object(image)
        })
        .collect();
    Value::Array(images)
}

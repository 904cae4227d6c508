//! Kubelet version skew among a DaemonSet's nodes, for `status`: a rollout
//! across kubelet minor versions is a known cause of sandbox failures, so
//! the report says when the nodes run more than one minor and which nodes.
//!
//! Pure: node names and their `status.nodeInfo.kubeletVersion`.

use std::collections::BTreeMap;

use serde::Serialize;

/// The kubelet minor versions of the DaemonSet's nodes, when more than one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeletSkew {
    /// Nodes per minor version (`{"v1.30": 9, "v1.29": 5}`); nodes that
    /// report no version are not counted.
    pub versions: BTreeMap<String, usize>,
    /// The nodes of every minor but the newest, oldest minor first.
    pub behind: Vec<MinorNodes>,
}

/// The nodes on one kubelet minor version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MinorNodes {
    /// `v1.29`.
    pub version: String,
    /// The nodes, by name.
    pub nodes: Vec<String>,
}

/// `v1.29` of `v1.29.5-eks-1234`, `1.29.0` or `v1.29`; `None` when the text
/// has no major.minor.
pub fn minor_version(version: &str) -> Option<String> {
    minor_numbers(version).map(|(major, minor)| format!("v{major}.{minor}"))
}

/// `(1, 29)` of `v1.29.5-eks-1234`: the major and minor numbers, for
/// counting nodes per minor without keeping the text.
pub fn minor_numbers(version: &str) -> Option<(u16, u16)> {
    let bare = version.trim().trim_start_matches('v');
    let mut parts = bare.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The skew among `nodes` (name, kubelet version), `None` when they run at
/// most one minor version.
pub fn kubelet_skew<'a>(
    nodes: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Option<KubeletSkew> {
    let mut by_minor: BTreeMap<(u16, u16), (String, Vec<String>)> = BTreeMap::new();
    for (name, version) in nodes {
        let Some(minor) = version.and_then(minor_version) else {
            continue;
        };
        let key = sort_key(&minor);
        by_minor
            .entry(key)
            .or_insert_with(|| (minor, Vec::new()))
            .1
            .push(name.to_owned());
    }
    if by_minor.len() < 2 {
        return None;
    }
    let versions = by_minor
        .values()
        .map(|(minor, nodes)| (minor.clone(), nodes.len()))
        .collect();
    let count = by_minor.len();
    let behind = by_minor
        .into_values()
        .take(count - 1)
        .map(|(version, mut nodes)| {
            nodes.sort();
            MinorNodes { version, nodes }
        })
        .collect();
    Some(KubeletSkew { versions, behind })
}

fn sort_key(minor: &str) -> (u16, u16) {
    minor_numbers(minor).unwrap_or_default()
}

impl KubeletSkew {
    /// One line: `v1.30 on 9 nodes, v1.29 on 5 (n3, n4, …)`.
    pub fn describe(&self) -> String {
        let mut versions: Vec<(&String, &usize)> = self.versions.iter().collect();
        versions.sort_by_key(|(version, _)| std::cmp::Reverse(sort_key(version)));
        let mut parts: Vec<String> = Vec::new();
        for (version, count) in versions {
            let names = self
                .behind
                .iter()
                .find(|b| &b.version == version)
                .map(|b| format!(" ({})", super::status_node::names(&b.nodes)))
                .unwrap_or_default();
            let noun = if *count == 1 { "node" } else { "nodes" };
            parts.push(format!("{version} on {count} {noun}{names}"));
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_versions_as_distributions_write_them() {
        let cases = [
            ("v1.29.5", Some("v1.29")),
            ("v1.30.2-eks-1234567", Some("v1.30")),
            ("1.28.0+k3s1", Some("v1.28")),
            ("v1.31", Some("v1.31")),
            ("", None),
            ("vX.Y", None),
        ];
        for (text, want) in cases {
            assert_eq!(minor_version(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn skew_names_the_nodes_behind_the_newest_minor() {
        let nodes = [
            ("a", Some("v1.30.1")),
            ("b", Some("v1.30.2")),
            ("c", Some("v1.29.9")),
            ("d", None),
            ("e", Some("v1.9.0")),
        ];
        let skew = kubelet_skew(nodes).expect("three minors");
        assert_eq!(
            serde_json::to_value(&skew.versions).unwrap(),
            serde_json::json!({"v1.30": 2, "v1.29": 1, "v1.9": 1})
        );
        assert_eq!(
            skew.behind,
            vec![
                MinorNodes {
                    version: "v1.9".into(),
                    nodes: vec!["e".into()]
                },
                MinorNodes {
                    version: "v1.29".into(),
                    nodes: vec!["c".into()]
                },
            ]
        );
        assert_eq!(
            skew.describe(),
            "v1.30 on 2 nodes, v1.29 on 1 node (c), v1.9 on 1 node (e)"
        );
        assert!(kubelet_skew([("a", Some("v1.30.1")), ("b", Some("v1.30.9"))]).is_none());
    }
}

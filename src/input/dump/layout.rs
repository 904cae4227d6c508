//! What a file's name says in the dump layouts rollcall knows: whether to
//! read it (documents), open it (archives) or skip it, and which kind its
//! kind-less objects are. Must-gathers name files after resources
//! (`namespaces/<ns>/apps/daemonsets.yaml`, `cluster-scoped-resources/core/nodes/<name>.yaml`),
//! Sonobuoy after kinds (`resources/cluster/Nodes.json`,
//! `resources/ns/<ns>/DaemonSets.json`), support bundles after resources
//! (`yamls/cluster/v1/nodes.yaml`), `cluster-info dump --output-directory`
//! too (`nodes.json`, `<ns>/pods.json`). Pure.

/// What to do with a file found in a directory or an archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileClass {
    /// `.json`, `.yaml` or `.yml`: read its documents.
    Document,
    /// `.tar`, `.tar.gz`, `.tgz`, `.tar.xz`, `.txz`, `.gz`, `.xz` or `.zip`: open it.
    Archive,
    /// Anything else (logs, text, binaries): skipped.
    Other,
}

/// The class of a file by its name (case-insensitive).
pub fn classify(name: &str) -> FileClass {
    let lower = file_name(name).to_ascii_lowercase();
    if [".json", ".yaml", ".yml"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        FileClass::Document
    } else if [".tar", ".tgz", ".gz", ".xz", ".txz", ".zip"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        FileClass::Archive
    } else {
        FileClass::Other
    }
}

/// The name without its compression suffix (`nodes.json.gz` → `nodes.json`,
/// `dump.tgz` → `dump.tar`).
pub fn decompressed_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    for (suffix, replacement) in [(".tgz", ".tar"), (".txz", ".tar"), (".gz", ""), (".xz", "")] {
        if lower.ends_with(suffix) {
            return format!("{}{replacement}", &name[..name.len() - suffix.len()]);
        }
    }
    name.to_owned()
}

/// The kind of the objects in the file at `path` (an archive entry or a file
/// path) that carry no `kind` of their own, from the file's name or, failing
/// that, its folder's (`nodes/<name>.yaml`).
pub fn kind_hint(path: &str) -> Option<&'static str> {
    let mut parts = path.rsplit(['/', '\\']).filter(|p| !p.is_empty());
    let file = parts.next()?;
    let lower = file.to_ascii_lowercase();
    let stem = [".json", ".yaml", ".yml"]
        .iter()
        .find_map(|e| lower.strip_suffix(e))
        .unwrap_or(&lower);
    resource_kind(stem).or_else(|| {
        parts
            .next()
            .and_then(|dir| resource_kind(&dir.to_ascii_lowercase()))
    })
}

/// `nodes`, `Nodes`, `daemonsets.apps`, ... → the kind rollcall reads.
fn resource_kind(name: &str) -> Option<&'static str> {
    let resource = name.split('.').next().unwrap_or(name);
    match resource {
        "nodes" => Some("Node"),
        "pods" => Some("Pod"),
        "daemonsets" => Some("DaemonSet"),
        "controllerrevisions" => Some("ControllerRevision"),
        "events" => Some("Event"),
        _ => None,
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_name_the_kind() {
        let cases = [
            ("plugins/resources/cluster/Nodes.json", Some("Node")),
            (
                "resources/ns/kube-system/DaemonSets.json",
                Some("DaemonSet"),
            ),
            ("resources/ns/kube-system/Pods.json", Some("Pod")),
            (
                "resources/ns/kube-system/ControllerRevisions.json",
                Some("ControllerRevision"),
            ),
            ("bundle/yamls/cluster/v1/nodes.yaml", Some("Node")),
            (
                "bundle/yamls/namespaced/kube-system/apps/v1/daemonsets.yaml",
                Some("DaemonSet"),
            ),
            (
                "mg/namespaces/kube-system/apps/daemonsets.yaml",
                Some("DaemonSet"),
            ),
            (
                "mg/cluster-scoped-resources/core/nodes/node-a.yaml",
                Some("Node"),
            ),
            ("dump/kube-system/events.json", Some("Event")),
            ("mg/namespaces/kube-system/core/configmaps.yaml", None),
            ("mg/namespaces/kube-system/kube-system.yaml", None),
            ("events.events.k8s.io.yaml", Some("Event")),
        ];
        for (path, kind) in cases {
            assert_eq!(kind_hint(path), kind, "{path}");
        }
    }

    #[test]
    fn names_decide_what_is_read() {
        assert_eq!(classify("a/B.JSON"), FileClass::Document);
        assert_eq!(classify("a/b.yml"), FileClass::Document);
        assert_eq!(classify("must-gather.tar.xz"), FileClass::Archive);
        assert_eq!(classify("x.zip"), FileClass::Archive);
        assert_eq!(classify("logs/current.log"), FileClass::Other);
        assert_eq!(decompressed_name("a/nodes.json.gz"), "a/nodes.json");
        assert_eq!(decompressed_name("r.tgz"), "r.tar");
        assert_eq!(decompressed_name("r.tar.xz"), "r.tar");
    }
}

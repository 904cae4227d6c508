//! What to say when the DaemonSet asked for is not there: where one of that
//! name exists (another namespace), else the nearest name (a typo), as kubectl
//! users expect from `kubectl get ds NAME` in the wrong namespace.
//!
//! Pure: the DaemonSets that exist in, a sentence out.

use crate::model::Target;

/// Names closer than this (Jaro-Winkler similarity) are offered as "did you mean".
const SIMILAR: f64 = 0.85;

/// The hint for `asked`, given the DaemonSets that exist (`namespace`, `name`).
pub fn hint(asked: &Target, existing: &[Target]) -> Option<String> {
    let elsewhere: Vec<&str> = existing
        .iter()
        .filter(|t| t.name == asked.name && t.namespace != asked.namespace)
        .map(|t| t.namespace.as_str())
        .collect();
    if let Some(first) = elsewhere.first() {
        return Some(format!(
            "a DaemonSet named {} exists in namespace {} (use {first}/{} or -n {first})",
            asked.name,
            elsewhere.join(", "),
            asked.name
        ));
    }
    let nearest = existing
        .iter()
        .map(|t| {
            let same_namespace = t.namespace == asked.namespace;
            (
                strsim::jaro_winkler(&t.name, &asked.name),
                same_namespace,
                t,
            )
        })
        .filter(|(score, _, _)| *score >= SIMILAR)
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))?;
    Some(format!("did you mean {}?", nearest.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(key: &str) -> Target {
        Target::from_key(key).expect("ns/name")
    }

    fn existing() -> Vec<Target> {
        [
            "kube-system/node-agent",
            "kube-system/log-shipper",
            "monitoring/node-exporter",
        ]
        .map(target)
        .to_vec()
    }

    #[test]
    fn the_same_name_in_another_namespace_is_named_with_the_way_to_ask_for_it() {
        let hint = hint(&target("default/node-agent"), &existing()).expect("a hint");
        assert_eq!(
            hint,
            "a DaemonSet named node-agent exists in namespace kube-system (use kube-system/node-agent or -n kube-system)"
        );
    }

    #[test]
    fn a_typo_gets_the_nearest_name() {
        let hint = hint(&target("kube-system/node-agnet"), &existing()).expect("a hint");
        assert_eq!(hint, "did you mean kube-system/node-agent?");
    }

    #[test]
    fn nothing_close_gets_no_hint() {
        assert_eq!(hint(&target("kube-system/cilium"), &existing()), None);
    }
}

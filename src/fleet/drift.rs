//! Drift: a cluster whose template differs from the fleet's reference — the
//! template most clusters run, or the one of `--reference CONTEXT` — and
//! which fields differ, in words (`image`: `agent: agent:1.8 vs agent:1.9`,
//! `tolerations`: `tolerations differ`). Each message names this cluster's
//! value first, then the reference's. Pure, over normalised templates
//! ([`TemplateIdentity`]).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::template::TemplateIdentity;

/// One field in which a cluster's template differs from the reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// Which field: `image`, `containers`, a container field (`env`,
    /// `resources`, …), a pod spec field (`tolerations`, `nodeSelector`, …),
    /// `labels` or `annotations`.
    pub field: String,
    /// What differs, this cluster first.
    pub message: String,
}

/// The reference identity: the digest most clusters run (a tie goes to the
/// one met first, so the order of the contexts decides, as given).
pub fn majority<'a>(
    identities: impl IntoIterator<Item = &'a TemplateIdentity>,
) -> Option<&'a TemplateIdentity> {
    let mut counted: Vec<(&TemplateIdentity, usize)> = Vec::new();
    for identity in identities {
        match counted
            .iter_mut()
            .find(|(known, _)| known.digest == identity.digest)
        {
            Some((_, count)) => *count += 1,
            None => counted.push((identity, 1)),
        }
    }
    let most = counted.iter().map(|(_, count)| *count).max()?;
    counted
        .into_iter()
        .find(|(_, count)| *count == most)
        .map(|(identity, _)| identity)
}

/// How `here` differs from `reference`; empty when the digests agree.
pub fn drift(here: &TemplateIdentity, reference: &TemplateIdentity) -> Vec<Drift> {
    if here.digest == reference.digest {
        return Vec::new();
    }
    let (a, b) = (&here.normalized, &reference.normalized);
    let mut found = Vec::new();
    for key in ["labels", "annotations"] {
        let (x, y) = (
            a.pointer(&format!("/metadata/{key}")),
            b.pointer(&format!("/metadata/{key}")),
        );
        if x != y {
            found.push(Drift {
                field: key.to_owned(),
                message: format!("template {key} differ: {}", differing_keys(x, y)),
            });
        }
    }
    containers(a, b, "containers", &mut found);
    containers(a, b, "initContainers", &mut found);
    let spec = |v: &Value| {
        v.get("spec")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (x, y) = (spec(a), spec(b));
    let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    for key in keys {
        if matches!(key.as_str(), "containers" | "initContainers") || x.get(key) == y.get(key) {
            continue;
        }
        found.push(Drift {
            field: key.clone(),
            message: value_difference(key, x.get(key), y.get(key)),
        });
    }
    if found.is_empty() {
        // Same fields, different digests: only the normalisation can tell.
        found.push(Drift {
            field: "template".to_owned(),
            message: "templates differ".to_owned(),
        });
    }
    found
}

/// The containers (or init containers) of both, matched by name.
fn containers(here_template: &Value, reference: &Value, key: &str, found: &mut Vec<Drift>) {
    let list = |v: &Value| -> Vec<Value> {
        v.pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (mine, theirs) = (list(here_template), list(reference));
    let name = |c: &Value| {
        c.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let names: BTreeSet<String> = mine.iter().chain(theirs.iter()).map(name).collect();
    for container in names {
        let here = mine.iter().find(|c| name(c) == container);
        let there = theirs.iter().find(|c| name(c) == container);
        let (Some(here), Some(there)) = (here, there) else {
            let side = if here.is_some() {
                "only here"
            } else {
                "missing here"
            };
            found.push(Drift {
                field: key.to_owned(),
                message: format!("{container}: {side}"),
            });
            continue;
        };
        let fields: BTreeSet<&String> = [here, there]
            .into_iter()
            .filter_map(Value::as_object)
            .flat_map(|m| m.keys())
            .collect();
        for field in fields {
            let (hv, tv) = (here.get(field), there.get(field));
            if field == "name" || hv == tv {
                continue;
            }
            let message = if field == "image" {
                format!("{container}: {} vs {}", shown(hv), shown(tv))
            } else {
                format!("{container}: {}", value_difference(field, hv, tv))
            };
            found.push(Drift {
                field: field.clone(),
                message,
            });
        }
    }
}

/// `hostNetwork: true vs unset` for scalars, `tolerations differ` otherwise.
fn value_difference(key: &str, here: Option<&Value>, there: Option<&Value>) -> String {
    let scalar = |v: Option<&Value>| v.is_none_or(|v| !v.is_object() && !v.is_array());
    if scalar(here) && scalar(there) {
        format!("{key}: {} vs {}", shown(here), shown(there))
    } else {
        format!("{key} differ")
    }
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "unset".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// The keys whose values differ between two label or annotation maps.
fn differing_keys(here: Option<&Value>, there: Option<&Value>) -> String {
    let map = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let (x, y) = (map(here), map(there));
    let keys: Vec<&str> = x
        .keys()
        .chain(y.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|key| x.get(*key) != y.get(*key))
        .map(String::as_str)
        .collect();
    keys.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn identity(image: &str, extra: &Value) -> TemplateIdentity {
        let mut spec = json!({
            "containers": [{"name": "agent", "image": image}],
            "tolerations": [{"operator": "Exists"}]
        });
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        TemplateIdentity::of_value(&json!({"metadata": {"labels": {"app": "agent"}}, "spec": spec}))
    }

    #[test]
    fn the_majority_wins_and_a_tie_goes_to_the_first() {
        let a = identity("agent:1.9", &json!({}));
        let b = identity("agent:1.8", &json!({}));
        assert_eq!(majority([&b, &a, &a]).unwrap().digest, a.digest);
        assert_eq!(majority([&b, &a]).unwrap().digest, b.digest);
        assert!(majority(std::iter::empty()).is_none());
    }

    type Case = (
        &'static str,
        TemplateIdentity,
        Vec<(&'static str, &'static str)>,
    );

    #[test]
    fn differences_are_named_by_field() {
        let reference = identity("agent:1.9", &json!({}));
        let cases: [Case; 5] = [
            ("same", identity("agent:1.9", &json!({})), vec![]),
            (
                "image",
                identity("agent:1.8", &json!({})),
                vec![("image", "agent: agent:1.8 vs agent:1.9")],
            ),
            (
                "tolerations",
                identity(
                    "agent:1.9",
                    &json!({"tolerations": [{"key": "gpu", "operator": "Exists"}]}),
                ),
                vec![("tolerations", "tolerations differ")],
            ),
            (
                "a scalar",
                identity("agent:1.9", &json!({"hostNetwork": true})),
                vec![("hostNetwork", "hostNetwork: true vs unset")],
            ),
            (
                "a sidecar",
                TemplateIdentity::of_value(
                    &json!({"metadata": {"labels": {"app": "agent"}}, "spec": {
                        "containers": [{"name": "agent", "image": "agent:1.9"}, {"name": "proxy", "image": "envoy:1"}],
                        "tolerations": [{"operator": "Exists"}]
                    }}),
                ),
                vec![("containers", "proxy: only here")],
            ),
        ];
        for (name, here, expected) in cases {
            let found: Vec<(String, String)> = drift(&here, &reference)
                .into_iter()
                .map(|d| (d.field, d.message))
                .collect();
            let expected: Vec<(String, String)> = expected
                .into_iter()
                .map(|(f, m)| (f.to_owned(), m.to_owned()))
                .collect();
            assert_eq!(found, expected, "{name}");
        }
    }

    #[test]
    fn labels_name_the_keys_that_differ() {
        let reference = identity("agent:1.9", &json!({}));
        let here = TemplateIdentity::of_value(&json!({
            "metadata": {"labels": {"app": "agent", "tier": "edge"}},
            "spec": {"containers": [{"name": "agent", "image": "agent:1.9"}], "tolerations": [{"operator": "Exists"}]}
        }));
        assert_eq!(
            drift(&here, &reference),
            [Drift {
                field: "labels".to_owned(),
                message: "template labels differ: tier".to_owned()
            }]
        );
    }
}

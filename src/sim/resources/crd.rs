//! What a CustomResourceDefinition (apiextensions.k8s.io/v1) makes of its
//! custom resources: their [`KindInfo`] from `spec.group`, `spec.names`,
//! `spec.scope` and `spec.versions` (served ones, the storage version
//! preferred), the checks upstream's CRD validation makes that the sim needs
//! to stay consistent (the name is `<plural>.<group>`, one storage version,
//! no clash with a built-in kind), and the status the API server reports once
//! the names are accepted (`Established`). Schemas are not read: custom
//! resources are stored unvalidated. Pure functions over JSON.

use serde_json::{Value, json};

use super::info::{InertKind, KindInfo};

/// Why a CRD cannot register its kind: `(field, message)` for a 422.
pub type Refusal = (&'static str, String);

/// The kind a CRD defines, or why it is invalid.
pub fn kind_info(crd: &Value) -> Result<KindInfo, Refusal> {
    let spec = &crd["spec"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let group = text(&spec["group"]);
    let names = &spec["names"];
    let (kind, plural) = (text(&names["kind"]), text(&names["plural"]));
    if group.is_empty() || !group.contains('.') {
        return Err((
            "spec.group",
            format!("Invalid value: {group:?}: should be a domain with at least one dot"),
        ));
    }
    if plural.is_empty() || plural != plural.to_ascii_lowercase() {
        return Err(("spec.names.plural", "Required value".to_owned()));
    }
    if kind.is_empty() {
        return Err(("spec.names.kind", "Required value".to_owned()));
    }
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    if name != format!("{plural}.{group}") {
        return Err((
            "metadata.name",
            format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => {
            return Err((
                "spec.scope",
                format!(
                    "Unsupported value: {:?}: supported values: \"Cluster\", \"Namespaced\"",
                    other.unwrap_or_default()
                ),
            ));
        }
    };
    let versions = spec["versions"].as_array().map_or(&[][..], Vec::as_slice);
    let storage: Vec<&Value> = versions.iter().filter(|v| v["storage"] == true).collect();
    if storage.len() != 1 {
        return Err((
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version".to_owned(),
        ));
    }
    let served: Vec<&Value> = versions.iter().filter(|v| v["served"] == true).collect();
    if served.is_empty() {
        return Err((
            "spec.versions",
            "Invalid value: must have at least one served version".to_owned(),
        ));
    }
    // The storage version first when served (it is what objects are kept as).
    let mut ordered: Vec<&str> = served.iter().filter_map(|v| v["name"].as_str()).collect();
    if let Some(at) = storage[0]["name"]
        .as_str()
        .and_then(|s| ordered.iter().position(|v| *v == s))
    {
        let preferred = ordered.remove(at);
        ordered.insert(0, preferred);
    }
    let mut info = KindInfo::new(&group, &ordered, &kind, &plural, namespaced);
    if let Some(singular) = names["singular"].as_str().filter(|s| !s.is_empty()) {
        singular.clone_into(&mut info.singular);
    }
    if let Some(list_kind) = names["listKind"].as_str().filter(|s| !s.is_empty()) {
        list_kind.clone_into(&mut info.list_kind);
    }
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    info.short_names = strings(&names["shortNames"]);
    info.categories = strings(&names["categories"]);
    info.has_status = served
        .iter()
        .any(|v| v["subresources"]["status"].is_object());
    if super::info::built_in(&info.group, &info.plural).is_some() {
        return Err((
            "spec.names.plural",
            format!("Invalid value: {plural:?}: a built-in resource has that name"),
        ));
    }
    Ok(info)
}

/// The kind `crd` registers (interned), or why it cannot.
pub fn register(crd: &Value) -> Result<InertKind, Refusal> {
    kind_info(crd).map(KindInfo::intern)
}

/// What the API server reports for an accepted CRD: `acceptedNames`, the
/// `NamesAccepted` and `Established` conditions and `storedVersions`.
pub fn established_status(crd: &Value, now: &str) -> Value {
    let storage: Vec<&Value> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["storage"] == true)
        .map(|v| &v["name"])
        .collect();
    let condition = |type_: &str, reason: &str, message: &str| {
        json!({"type": type_, "status": "True", "lastTransitionTime": now,
            "reason": reason, "message": message})
    };
    json!({
        "acceptedNames": crd["spec"]["names"],
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "storedVersions": storage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(scope: &str) -> Value {
        json!({"metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": scope,
                "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"],
                    "categories": ["all"]},
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false},
                    {"name": "v1", "served": true, "storage": true,
                        "subresources": {"status": {}}},
                    {"name": "v1alpha1", "served": false, "storage": false}]}})
    }

    #[test]
    fn a_crd_defines_its_kind() {
        let info = kind_info(&crd("Namespaced")).unwrap();
        assert_eq!(info.group, "example.com");
        assert_eq!(
            info.versions,
            ["v1", "v1beta1"],
            "storage first, unserved left out"
        );
        assert_eq!(info.api_version, "example.com/v1");
        assert_eq!(info.kind, "Widget");
        assert_eq!(info.list_kind, "WidgetList");
        assert_eq!(info.singular, "widget");
        assert!(info.namespaced);
        assert!(info.has_status);
        assert_eq!(info.short_names, ["wd"]);
        assert_eq!(info.categories, ["all"]);
        assert!(info.accepts_api_version("example.com/v1beta1"));
        assert!(!info.accepts_api_version("example.com/v1alpha1"));
        assert!(!kind_info(&crd("Cluster")).unwrap().namespaced);
    }

    #[test]
    fn invalid_crds_are_refused_with_the_field() {
        type Edit = fn(&mut Value);
        let cases: [(&str, Edit, &str); 6] = [
            (
                "wrong name",
                |c| c["metadata"]["name"] = json!("widgets"),
                "metadata.name",
            ),
            (
                "no dot",
                |c| {
                    c["spec"]["group"] = json!("example");
                    c["metadata"]["name"] = json!("widgets.example");
                },
                "spec.group",
            ),
            (
                "bad scope",
                |c| c["spec"]["scope"] = json!("Global"),
                "spec.scope",
            ),
            (
                "two storage",
                |c| c["spec"]["versions"][0]["storage"] = json!(true),
                "spec.versions",
            ),
            (
                "none served",
                |c| {
                    for v in c["spec"]["versions"].as_array_mut().unwrap() {
                        v["served"] = json!(false);
                    }
                },
                "spec.versions",
            ),
            (
                "no kind",
                |c| c["spec"]["names"]["kind"] = json!(""),
                "spec.names.kind",
            ),
        ];
        for (name, edit, field) in cases {
            let mut c = crd("Namespaced");
            edit(&mut c);
            assert_eq!(kind_info(&c).unwrap_err().0, field, "{name}");
        }
    }

    #[test]
    fn accepted_crds_are_established() {
        let status = established_status(&crd("Cluster"), "2026-01-01T00:00:00Z");
        assert_eq!(status["conditions"][1]["type"], "Established");
        assert_eq!(status["conditions"][1]["status"], "True");
        assert_eq!(status["storedVersions"], json!(["v1"]));
        assert_eq!(status["acceptedNames"]["kind"], "Widget");
    }
}

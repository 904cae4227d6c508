//! Table columns and cells for the inert kinds, as the upstream printers
//! (1.32) show the common ones — Service, ConfigMap, Secret, ServiceAccount,
//! Deployment/ReplicaSet/StatefulSet, CustomResourceDefinition — and NAME,
//! AGE for every other kind (custom resources included: their CRD's
//! `additionalPrinterColumns` are not read). The sim acts on none of these,
//! so a Deployment's counters show what its status holds (nothing, unless a
//! client wrote it). Pure functions of the object and `now`.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::cells::{age, name, selector_text, text_or};
use crate::sim::resources::KindInfo;

/// `(name, type, priority)`, as in `table.rs`.
type Column = (&'static str, &'static str, u8);

const NAME_AGE: &[Column] = &[("Name", "string", 0), ("Age", "string", 0)];

/// The columns of an inert kind's Table.
pub fn columns(info: &KindInfo) -> &'static [Column] {
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "services") => &[
            ("Name", "string", 0),
            ("Type", "string", 0),
            ("Cluster-IP", "string", 0),
            ("External-IP", "string", 0),
            ("Port(s)", "string", 0),
            ("Age", "string", 0),
            ("Selector", "string", 1),
        ],
        ("", "configmaps") => &[
            ("Name", "string", 0),
            ("Data", "integer", 0),
            ("Age", "string", 0),
        ],
        ("", "secrets") => &[
            ("Name", "string", 0),
            ("Type", "string", 0),
            ("Data", "integer", 0),
            ("Age", "string", 0),
        ],
        ("", "serviceaccounts") => &[
            ("Name", "string", 0),
            ("Secrets", "integer", 0),
            ("Age", "string", 0),
        ],
        ("apps", "deployments" | "statefulsets") => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Age", "string", 0),
        ],
        ("apps", "replicasets") => &[
            ("Name", "string", 0),
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Age", "string", 0),
        ],
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            &[("Name", "string", 0), ("Created At", "date", 0)]
        }
        _ => NAME_AGE,
    }
}

/// The cells of one row, in the order of [`columns`].
pub fn cells(info: &KindInfo, object: &Value, now: Timestamp) -> Vec<Value> {
    let count = |v: &Value| v.as_object().map_or(0, serde_json::Map::len);
    let status = |field: &str| object["status"][field].as_i64().unwrap_or(0);
    let replicas = object["spec"]["replicas"].as_i64().unwrap_or(1);
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "services") => service_cells(object, now),
        ("", "configmaps") => vec![
            json!(name(object)),
            json!(count(&object["data"]) + count(&object["binaryData"])),
            json!(age(object, now)),
        ],
        ("", "secrets") => vec![
            json!(name(object)),
            json!(text_or(&object["type"], "Opaque")),
            json!(count(&object["data"]) + count(&object["stringData"])),
            json!(age(object, now)),
        ],
        ("", "serviceaccounts") => vec![
            json!(name(object)),
            json!(object["secrets"].as_array().map_or(0, Vec::len)),
            json!(age(object, now)),
        ],
        ("apps", "deployments" | "statefulsets") => vec![
            json!(name(object)),
            json!(format!("{}/{replicas}", status("readyReplicas"))),
            json!(status("updatedReplicas")),
            json!(status("availableReplicas")),
            json!(age(object, now)),
        ],
        ("apps", "replicasets") => vec![
            json!(name(object)),
            json!(replicas),
            json!(status("replicas")),
            json!(status("readyReplicas")),
            json!(age(object, now)),
        ],
        ("apiextensions.k8s.io", "customresourcedefinitions") => vec![
            json!(name(object)),
            object["metadata"]["creationTimestamp"].clone(),
        ],
        _ => vec![json!(name(object)), json!(age(object, now))],
    }
}

/// Upstream `printService`: the sim allocates no cluster IP, so an object
/// without one shows `<none>`.
fn service_cells(svc: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &svc["spec"];
    let ports: Vec<String> = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p["port"].as_i64().unwrap_or_default();
            let protocol = text_or(&p["protocol"], "TCP");
            match p["nodePort"].as_i64() {
                Some(node_port) => format!("{port}:{node_port}/{protocol}"),
                None => format!("{port}/{protocol}"),
            }
        })
        .collect();
    let external: Vec<&str> = spec["externalIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let selector = json!({"matchLabels": spec["selector"]});
    vec![
        json!(name(svc)),
        json!(text_or(&spec["type"], "ClusterIP")),
        json!(text_or(&spec["clusterIP"], "<none>")),
        json!(if external.is_empty() {
            "<none>".to_owned()
        } else {
            external.join(",")
        }),
        json!(if ports.is_empty() {
            "<none>".to_owned()
        } else {
            ports.join(",")
        }),
        json!(age(svc, now)),
        json!(if spec["selector"].is_object() {
            selector_text(&selector)
        } else {
            "<none>".to_owned()
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceKind;

    fn info(group: &str, plural: &str) -> &'static KindInfo {
        ResourceKind::from_group_plural(group, plural)
            .and_then(ResourceKind::inert)
            .unwrap()
    }

    #[test]
    fn every_row_has_one_cell_per_column() {
        let now = Timestamp::UNIX_EPOCH;
        let svc = json!({"metadata": {"name": "dns"}, "spec": {"selector": {"app": "dns"},
            "ports": [{"port": 53, "protocol": "UDP"}, {"port": 9153}]}});
        let info_svc = info("", "services");
        let row = cells(info_svc, &svc, now);
        assert_eq!(row.len(), columns(info_svc).len());
        assert_eq!(row[1], "ClusterIP");
        assert_eq!(row[4], "53/UDP,9153/TCP");
        assert_eq!(row[6], "app=dns");
        let cm = json!({"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}});
        assert_eq!(cells(info("", "configmaps"), &cm, now)[1], 2);
        for (group, plural) in [
            ("", "secrets"),
            ("", "serviceaccounts"),
            ("apps", "deployments"),
            ("apps", "replicasets"),
            ("apiextensions.k8s.io", "customresourcedefinitions"),
            ("rbac.authorization.k8s.io", "clusterroles"),
        ] {
            let kind = info(group, plural);
            assert_eq!(cells(kind, &cm, now).len(), columns(kind).len(), "{plural}");
        }
    }
}

//! Revisions of a DaemonSet: which ControllerRevision is current, the number
//! behind each pod's `controller-revision-hash`, and whether a pod is "updated".
//!
//! Follows the upstream controller's `constructHistory`/`Match`/`getPatch` (current
//! = the revision whose data equals the template patch) and `util.IsPodUpdated`.
//! Reads only; never creates, relabels or deduplicates revisions (upstream does).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde::Serialize;
use serde_json::{Map, Value};

use super::ownership::revision_controlled_by;
use crate::model::{ControllerRevision, DaemonSet, Pod, REVISION_HASH_LABEL};

/// DaemonSet annotation holding the legacy template generation.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
/// Pod label holding the legacy template generation the pod was made from.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// The alphabet upstream `rand.SafeEncodeString` maps hash digits onto (no vowels,
/// no look-alike characters, so a hash never spells a word).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// One ControllerRevision of a DaemonSet, reduced to what the console shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RevisionInfo {
    /// Object name (`<ds>-<hash>`).
    pub name: String,
    /// The `controller-revision-hash` label (the name, if the label is missing,
    /// as upstream `constructHistory` fills it in).
    pub hash: String,
    /// `revision`: the monotonically increasing revision number.
    pub number: i64,
    /// The pod template stored in the revision (`data.spec.template` without `$patch`).
    pub template: Value,
    /// When the revision object was created.
    pub created: Option<jiff::Timestamp>,
}

/// The revisions a DaemonSet controls, sorted by number, and which is current.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RevisionIndex {
    revisions: Vec<RevisionInfo>,
    current: Option<usize>,
    current_matches_template: bool,
    by_hash: BTreeMap<String, usize>,
    template_generation: Option<i64>,
}

impl RevisionIndex {
    /// Indexes the revisions controlled by `ds` (others are ignored).
    ///
    /// The current revision is the one whose data equals the DaemonSet's template
    /// patch (upstream `Match`; if several match, the highest number wins as in
    /// `dedupCurHistories`). When none matches (the controller has not yet
    /// snapshotted a changed template), the labelled revision with the highest
    /// number stands in and [`RevisionIndex::current_matches_template`] is false.
    pub fn new(ds: &DaemonSet, revisions: &[ControllerRevision]) -> Self {
        let mut list: Vec<RevisionInfo> = revisions
            .iter()
            .filter(|r| revision_controlled_by(r, ds))
            .map(revision_info)
            .collect();
        list.sort_by(|a, b| a.number.cmp(&b.number).then_with(|| a.name.cmp(&b.name)));
        let wanted = ds.spec.as_ref().map(|s| revision_data(&s.template));
        let matching = revisions
            .iter()
            .filter(|r| revision_controlled_by(r, ds))
            .filter(|r| {
                wanted
                    .as_ref()
                    .zip(r.data.as_ref())
                    .is_some_and(|(wanted, data)| same_when_comparable(&data.0, wanted))
            })
            .filter_map(|r| r.metadata.name.clone())
            .collect::<Vec<_>>();
        let matched = list.iter().rposition(|info| matching.contains(&info.name));
        let current = matched.or_else(|| (!list.is_empty()).then(|| list.len() - 1));
        let by_hash = list
            .iter()
            .enumerate()
            .map(|(i, info)| (info.hash.clone(), i))
            .collect();
        Self {
            revisions: list,
            current,
            current_matches_template: matched.is_some(),
            by_hash,
            template_generation: template_generation(ds),
        }
    }

    /// The current revision, if any revision exists.
    pub fn current(&self) -> Option<&RevisionInfo> {
        self.current.and_then(|i| self.revisions.get(i))
    }

    /// Whether [`RevisionIndex::current`] holds exactly the DaemonSet's template
    /// (false while it is only the newest revision standing in).
    pub fn current_matches_template(&self) -> bool {
        self.current_matches_template
    }

    /// The revision number behind a `controller-revision-hash`.
    pub fn number_for_hash(&self, hash: &str) -> Option<i64> {
        self.by_hash
            .get(hash)
            .and_then(|&i| self.revisions.get(i))
            .map(|r| r.number)
    }

    /// The revision with this hash.
    pub fn by_hash(&self, hash: &str) -> Option<&RevisionInfo> {
        self.by_hash.get(hash).and_then(|&i| self.revisions.get(i))
    }

    /// The revision with this number.
    pub fn by_number(&self, number: i64) -> Option<&RevisionInfo> {
        self.revisions.iter().find(|r| r.number == number)
    }

    /// Whether `hash` is the current revision's hash.
    pub fn is_current_hash(&self, hash: &str) -> bool {
        !hash.is_empty() && self.current().is_some_and(|c| c.hash == hash)
    }

    /// All revisions, sorted by number (oldest first).
    pub fn list(&self) -> &[RevisionInfo] {
        &self.revisions
    }

    /// The number a new current revision gets: one more than the highest number
    /// among the non-current revisions (upstream `constructHistory`), and never
    /// below the current one's.
    pub fn next_number(&self) -> i64 {
        let highest_old = self
            .revisions
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.current_matches_template || Some(*i) != self.current)
            .map(|(_, r)| r.number)
            .max()
            .unwrap_or(0);
        highest_old + 1
    }

    /// Old revisions to delete to keep `limit` of them (upstream `cleanupHistory`):
    /// oldest first, never the current one, never one whose hash a live pod
    /// carries.
    pub fn to_prune(&self, limit: i32, live_hashes: &BTreeSet<String>) -> Vec<&RevisionInfo> {
        let old: Vec<&RevisionInfo> = self
            .revisions
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.current_matches_template || Some(*i) != self.current)
            .map(|(_, r)| r)
            .collect();
        let keep = usize::try_from(limit.max(0)).unwrap_or(0);
        let excess = old.len().saturating_sub(keep);
        old.into_iter()
            .filter(|r| !live_hashes.contains(&r.hash))
            .take(excess)
            .collect()
    }

    /// The revision `kubectl rollout undo` without `--to-revision` goes back to:
    /// the second-highest number (kubectl's `findHistory`), which is the one before
    /// the current once the controller has numbered the current revision highest.
    pub fn previous(&self) -> Option<&RevisionInfo> {
        self.revisions
            .len()
            .checked_sub(2)
            .and_then(|i| self.revisions.get(i))
    }

    /// Whether `pod` runs the current template, as upstream `util.IsPodUpdated`:
    /// its hash label equals the current hash, or (legacy) its
    /// `pod-template-generation` label equals the DaemonSet's template generation.
    pub fn is_pod_updated(&self, pod: &Pod) -> bool {
        let hash_matches = pod.revision_hash().is_some_and(|h| self.is_current_hash(h));
        let generation_matches = self.template_generation.is_some_and(|g| {
            pod.labels
                .get(TEMPLATE_GENERATION_LABEL)
                .is_some_and(|label| label == g.to_string())
        });
        hash_matches || generation_matches
    }
}

/// The DaemonSet's legacy template generation annotation, if it parses
/// (upstream `GetTemplateGeneration`; a parse error counts as absent).
fn template_generation(ds: &DaemonSet) -> Option<i64> {
    ds.metadata
        .annotations
        .as_ref()?
        .get(TEMPLATE_GENERATION_ANNOTATION)?
        .parse()
        .ok()
}

fn revision_info(r: &ControllerRevision) -> RevisionInfo {
    let name = r.metadata.name.clone().unwrap_or_default();
    let hash = r
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_HASH_LABEL))
        .cloned()
        .unwrap_or_else(|| name.clone());
    let mut template = r
        .data
        .as_ref()
        .and_then(|d| d.0.get("spec"))
        .and_then(|s| s.get("template"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Value::Object(map) = &mut template {
        map.remove("$patch");
    }
    RevisionInfo {
        name,
        hash,
        number: r.revision,
        template,
        created: r.metadata.creation_timestamp.as_ref().map(|t| t.0),
    }
}

/// The ControllerRevision `data` for a template: a strategic-merge patch that
/// replaces `spec.template` (upstream `getPatch`).
pub fn revision_data(template: &PodTemplateSpec) -> Value {
    let mut template = serde_json::to_value(template).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut template {
        map.insert("$patch".into(), Value::String("replace".into()));
    } else {
        let mut map = Map::new();
        map.insert("$patch".into(), Value::String("replace".into()));
        template = Value::Object(map);
    }
    let mut spec = Map::new();
    spec.insert("template".into(), template);
    let mut root = Map::new();
    root.insert("spec".into(), Value::Object(spec));
    Value::Object(root)
}

/// Drops `null` members recursively: Go writes `"creationTimestamp": null` into
/// stored revisions where the Rust types write nothing, and neither means a value.
fn normalized(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, normalized(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalized).collect()),
        other => other,
    }
}

/// The form two templates are compared in for `Match`: nulls, empty objects and
/// empty arrays dropped recursively, since Go and the Rust types disagree on
/// writing `{}`/`[]` for empty structs and lists (`resources: {}`) while both
/// mean "unset" to the API server.
#[cfg(test)]
fn comparable(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, comparable(v)))
                .filter(|(_, v)| !is_empty_value(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(comparable).collect()),
        other => other,
    }
}

#[cfg(test)]
fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// `comparable(a) == comparable(b)`, read in place: the index is built on
/// every decision of a run, and copying each revision's template to
/// compare it was a tenth of a rehearsal's CPU.
fn same_when_comparable(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            kept_members(x) == kept_members(y)
                && x.iter()
                    .filter(|(_, v)| !empty_when_comparable(v))
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_when_comparable(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_when_comparable(v, w))
        }
        _ => a == b,
    }
}

/// How many members of `map` `comparable` keeps.
fn kept_members(map: &Map<String, Value>) -> usize {
    map.values().filter(|v| !empty_when_comparable(v)).count()
}

/// Whether `comparable(value)` is empty (null, `{}` or `[]`), so an object
/// member holding it is dropped.
fn empty_when_comparable(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.values().all(empty_when_comparable),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// A stable short hash of a template: FNV-1a 32 over its canonical JSON (object
/// keys sorted, nulls dropped), then the collision count as 4 little-endian bytes
/// when present, printed in decimal and mapped digit by digit onto the upstream
/// safe alphabet. This is what the embedded controller writes; the real
/// controller hashes Go's in-memory form, so hashes from a real cluster differ and
/// are only ever compared, never recomputed.
pub fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let value = normalized(serde_json::to_value(template).unwrap_or(Value::Null));
    let mut canonical = String::new();
    write_canonical(&value, &mut canonical);
    let mut hash = fnv1a32(0x811c_9dc5, canonical.as_bytes());
    if let Some(count) = collision_count {
        hash = fnv1a32(hash, &count.to_le_bytes());
    }
    hash.to_string()
        .bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

fn fnv1a32(mut hash: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// Writes JSON with object keys in sorted order, whatever map order `serde_json`
/// uses, without spaces (the revision hash's and the fleet digest's input).
pub fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{}:", Value::String(key.clone()));
                if let Some(v) = map.get(key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => {
            let _ = write!(out, "{scalar}");
        }
    }
}

#[cfg(test)]
mod tests;

//! What a load found, counted: the summary `explain`, `audit` and `sim`
//! print on stderr after the warnings, and the words of the "nothing found"
//! error. Pure data and text; never prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::Snapshot;

/// Counts gathered while loading.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadSummary {
    /// Files (or archive entries, or stdin) whose documents were read.
    pub files_read: usize,
    /// Files not read, per reason.
    pub files_skipped: BTreeMap<String, usize>,
    /// Objects of kinds rollcall does not read, per kind.
    pub skipped_kinds: BTreeMap<String, usize>,
    /// Objects skipped because neither they, their List nor their file name a kind.
    pub without_kind: usize,
    /// JSON or YAML documents that are not API objects (no kind, no metadata).
    pub not_objects: usize,
    /// Documents in Kubernetes' internal form (capitalised `Items`, `Spec`,
    /// `Status`, no `kind`), as `kubectl cluster-info dump` before 1.14 wrote them.
    pub internal_types: usize,
    /// Objects excluded because a field rollcall needs is malformed, or past
    /// the size Kubernetes allows.
    pub excluded: usize,
    /// Malformed fields rollcall does not need, ignored.
    pub fields_dropped: usize,
    /// Identical copies of an object, merged.
    pub duplicates_merged: usize,
    /// Different copies of an object (the later one kept).
    pub conflicts: usize,
    /// `kubectl cluster-info dump` container-log sections skipped.
    pub log_sections: usize,
}

impl LoadSummary {
    /// The summary lines for stderr: what was loaded, then what was not.
    pub fn lines(&self, snapshot: &Snapshot) -> Vec<String> {
        let loaded = [
            ("Node", snapshot.nodes.len()),
            ("DaemonSet", snapshot.daemonsets.len()),
            ("Pod", snapshot.pods.len()),
            ("ControllerRevision", snapshot.revisions.len()),
            ("Event", snapshot.events.len()),
        ];
        let counts: Vec<String> = loaded
            .iter()
            .map(|(kind, n)| format!("{n} {kind}{}", plural(*n)))
            .collect();
        let files = self.files_read;
        let mut lines = vec![format!(
            "loaded {} from {files} file{}",
            counts.join(", "),
            plural(files)
        )];
        if !self.files_skipped.is_empty() {
            let reasons: Vec<String> = self
                .files_skipped
                .iter()
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            lines.push(format!("files skipped: {}", reasons.join("; ")));
        }
        let mut objects = String::new();
        for (n, what) in [
            (
                self.excluded,
                "excluded (a needed field is malformed or past its limit)",
            ),
            (self.without_kind, "without a kind"),
            (
                self.not_objects,
                if self.not_objects == 1 {
                    "document that is not an API object"
                } else {
                    "documents that are not API objects"
                },
            ),
            (
                self.internal_types,
                if self.internal_types == 1 {
                    "document in Kubernetes' internal form (not read)"
                } else {
                    "documents in Kubernetes' internal form (not read)"
                },
            ),
            (self.conflicts, "duplicates that differ (the last one kept)"),
            (self.duplicates_merged, "identical duplicates merged"),
            (self.fields_dropped, "malformed fields ignored"),
        ] {
            if n > 0 {
                let sep = if objects.is_empty() { "" } else { "; " };
                let _ = write!(objects, "{sep}{n} {what}");
            }
        }
        if !objects.is_empty() {
            lines.push(format!("objects: {objects}"));
        }
        if !self.skipped_kinds.is_empty() {
            lines.push(format!(
                "skipped {} (kinds rollcall does not read)",
                self.kinds_not_read()
            ));
        }
        if self.log_sections > 0 {
            lines.push(format!(
                "container log sections skipped: {}",
                self.log_sections
            ));
        }
        lines
    }

    /// `12 Service, 3 ConfigMap`: most first, then by name.
    fn kinds_not_read(&self) -> String {
        let mut kinds: Vec<(&String, &usize)> = self.skipped_kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let kinds: Vec<String> = kinds
            .iter()
            .map(|(kind, n)| format!("{n} {kind}"))
            .collect();
        kinds.join(", ")
    }

    /// What the input held when nothing of a kind rollcall reads was found.
    pub fn found_instead(&self) -> String {
        let mut parts = vec![format!(
            "read {} file{}",
            self.files_read,
            plural(self.files_read)
        )];
        if !self.files_skipped.is_empty() {
            let skipped: usize = self.files_skipped.values().sum();
            parts.push(format!("skipped {skipped} other file{}", plural(skipped)));
        }
        if self.without_kind > 0 {
            parts.push(format!(
                "{} object{} without a kind (name the kind with apiVersion/kind, a typed List, or a file name such as nodes.json)",
                self.without_kind,
                plural(self.without_kind)
            ));
        }
        if self.not_objects > 0 {
            parts.push(format!(
                "{} document{} that {} not API objects",
                self.not_objects,
                plural(self.not_objects),
                if self.not_objects == 1 { "is" } else { "are" }
            ));
        }
        if self.internal_types > 0 {
            parts.push(format!(
                "{} document{} look{} like Kubernetes internal types (capitalised Items/Spec/Status, no kind), as kubectl before 1.14 wrote them in `cluster-info dump`: re-dump with a newer kubectl, or use `kubectl get nodes,pods,daemonsets,controllerrevisions -A -o json`",
                self.internal_types,
                plural(self.internal_types),
                if self.internal_types == 1 { "s" } else { "" }
            ));
        }
        if self.excluded > 0 {
            parts.push(format!(
                "{} malformed object{}",
                self.excluded,
                plural(self.excluded)
            ));
        }
        if !self.skipped_kinds.is_empty() {
            parts.push(format!(
                "only kinds rollcall does not read ({})",
                self.kinds_not_read()
            ));
        }
        if parts.len() == 1 && self.files_read > 0 {
            parts.push("no objects".to_owned());
        }
        parts.join(", ")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

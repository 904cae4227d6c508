//! Semantic checks a scenario must pass after it parses: names that must refer
//! to something (pools, nodes), budgets and indexes in range. Serde values carry
//! no positions, so a problem's line is found by searching the source for the
//! offending value; when that fails the error names only the file.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::error::Problem;
use super::{DaemonSetSpec, ImageRule, Scenario, StrategyKind, TimelineAction, TimelineEntry};
use crate::input::limits::MAX_SIM_NODES;

/// Checks `scenario`; `text` is its source, used to find line numbers.
pub(super) fn validate(scenario: &Scenario, text: &str) -> Result<(), Problem> {
    let checker = Checker { scenario, text };
    // First: later checks walk every node a pool would create.
    checker.node_budget()?;
    checker.pools()?;
    checker.node_overrides()?;
    for ds in &scenario.daemon_sets {
        checker.daemon_set(ds)?;
    }
    for rule in &scenario.images {
        checker.image_rule(rule)?;
    }
    checker.workloads()?;
    for entry in &scenario.timeline {
        checker.timeline_entry(entry)?;
    }
    if !(0.0..=1.0).contains(&scenario.timing.jitter) {
        return Err(checker.problem("jitter", "timing.jitter must be between 0 and 1"));
    }
    Ok(())
}

impl Checker<'_> {
    /// A priority class name a pod may use: a scenario class or a system one.
    fn knows_priority_class(&self, name: Option<&str>) -> Result<(), Problem> {
        let Some(name) = name else { return Ok(()) };
        let known = self
            .scenario
            .priority_classes
            .iter()
            .any(|c| c.name == name)
            || crate::sim::store::SYSTEM_PRIORITY_CLASSES
                .iter()
                .any(|(n, ..)| *n == name);
        if known {
            Ok(())
        } else {
            Err(self.problem(name, format!("unknown priorityClassName {name:?}")))
        }
    }

    /// Workloads name known pools, nodes and classes; classes are in range.
    fn workloads(&self) -> Result<(), Problem> {
        for class in &self.scenario.priority_classes {
            if i64::from(class.value) > crate::sim::store::HIGHEST_USER_DEFINABLE_PRIORITY {
                return Err(self.problem(
                    &class.name,
                    format!(
                        "priorityClasses: {:?}: value above the highest user-definable priority, {}",
                        class.name,
                        crate::sim::store::HIGHEST_USER_DEFINABLE_PRIORITY
                    ),
                ));
            }
        }
        for workload in &self.scenario.workloads {
            let here = |message: String| self.problem(&workload.name, message);
            if let Some(pool) = workload.pools.iter().find(|p| !self.knows_pool(p)) {
                return Err(self.problem(
                    pool,
                    format!("workloads: {:?}: unknown pool {pool:?}", workload.name),
                ));
            }
            if let Some(node) = workload.nodes.iter().find(|n| !self.knows_node(n)) {
                return Err(self.problem(
                    node,
                    format!("workloads: {:?}: unknown node {node:?}", workload.name),
                ));
            }
            if !(1..=110).contains(&workload.per_node) {
                return Err(here(format!(
                    "workloads: {:?}: perNode must be between 1 and 110",
                    workload.name
                )));
            }
            self.knows_priority_class(workload.priority_class_name.as_deref())?;
        }
        for ds in &self.scenario.daemon_sets {
            for revision in &ds.revisions {
                self.knows_priority_class(revision.priority_class_name.as_deref())?;
            }
        }
        Ok(())
    }
}

/// Upstream's rule for extended resources: a qualified `domain/name`
/// outside the `kubernetes.io` domains (`IsExtendedResourceName`).
fn is_extended_resource_name(name: &str) -> bool {
    let Some((domain, rest)) = name.split_once('/') else {
        return false;
    };
    let kubernetes = domain == "kubernetes.io" || domain.ends_with(".kubernetes.io");
    !kubernetes
        && !domain.is_empty()
        && !rest.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'))
}

/// `vMAJOR.MINOR.PATCH`, optionally with a suffix (`v1.30.6-eks-1234`).
fn is_kubelet_version(version: &str) -> bool {
    let Some(rest) = version.strip_prefix('v') else {
        return false;
    };
    let core = rest.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

struct Checker<'a> {
    scenario: &'a Scenario,
    text: &'a str,
}

impl Checker<'_> {
    /// A problem located at the first line that mentions `needle`.
    fn problem(&self, needle: &str, message: impl Into<String>) -> Problem {
        Problem {
            line: line_of(self.text, needle),
            message: message.into(),
        }
    }

    /// Pools and timeline joins together create at most [`MAX_SIM_NODES`] nodes.
    fn node_budget(&self) -> Result<(), Problem> {
        let pools = self.scenario.pools.iter().map(|p| p.count);
        let joins = self
            .scenario
            .timeline
            .iter()
            .filter(|e| e.action == TimelineAction::Join)
            .map(|e| e.count.unwrap_or(1));
        let total = pools.chain(joins).fold(0_usize, usize::saturating_add);
        if total > MAX_SIM_NODES {
            return Err(self.problem(
                "count",
                format!(
                    "the pools and timeline joins create {total} nodes, more than the limit of {MAX_SIM_NODES}"
                ),
            ));
        }
        Ok(())
    }

    fn pools(&self) -> Result<(), Problem> {
        let mut seen = BTreeSet::new();
        for pool in &self.scenario.pools {
            if !seen.insert(pool.name.as_str()) {
                return Err(
                    self.problem(&pool.name, format!("pool {:?} is defined twice", pool.name))
                );
            }
            if !matches!(pool.arch.as_str(), "amd64" | "arm64") {
                return Err(self.problem(
                    &pool.arch,
                    format!(
                        "pool {:?}: arch must be amd64 or arm64, not {:?}",
                        pool.name, pool.arch
                    ),
                ));
            }
            self.capacity_facts(pool)?;
        }
        Ok(())
    }

    /// A pool's `pods`, `extendedResources` and `kubeletVersion`.
    fn capacity_facts(&self, pool: &super::Pool) -> Result<(), Problem> {
        if pool.pods == 0 {
            return Err(self.problem(
                "pods:",
                format!("pool {:?}: pods must be at least 1", pool.name),
            ));
        }
        for name in pool.extended_resources.keys() {
            if !is_extended_resource_name(name) {
                return Err(self.problem(
                    name,
                    format!(
                        "pool {:?}: extended resource {name:?} must be a domain-qualified name outside kubernetes.io (like nvidia.com/gpu)",
                        pool.name
                    ),
                ));
            }
        }
        self.kubelet_version(pool.kubelet_version.as_deref())
    }

    fn kubelet_version(&self, version: Option<&str>) -> Result<(), Problem> {
        match version {
            Some(version) if !is_kubelet_version(version) => Err(self.problem(
                version,
                format!("kubeletVersion {version:?} must look like v1.30.6"),
            )),
            _ => Ok(()),
        }
    }

    fn knows_node(&self, node: &str) -> bool {
        self.scenario.pool_of_node(node).is_some()
    }

    fn knows_pool(&self, pool: &str) -> bool {
        self.scenario.pools.iter().any(|p| p.name == pool)
    }

    fn node_overrides(&self) -> Result<(), Problem> {
        for node in &self.scenario.nodes {
            let generated = self.scenario.pool_of_node(&node.name).is_some_and(|pool| {
                (1..=pool.count).any(|index| pool.node_name(index) == node.name)
            });
            if !generated {
                return Err(self.problem(
                    &node.name,
                    format!("nodes: {:?} is not a node any pool generates", node.name),
                ));
            }
            self.kubelet_version(node.kubelet_version.as_deref())?;
        }
        Ok(())
    }

    fn daemon_set(&self, ds: &DaemonSetSpec) -> Result<(), Problem> {
        let here = |message: String| self.problem(&ds.name, message);
        let duplicates = self
            .scenario
            .daemon_sets
            .iter()
            .filter(|other| other.name == ds.name && other.namespace == ds.namespace)
            .count();
        if duplicates > 1 {
            return Err(here(format!(
                "daemonSet {}/{} is defined twice",
                ds.namespace, ds.name
            )));
        }
        if !is_dns_label(&ds.name) || !is_dns_label(&ds.namespace) {
            return Err(here(format!(
                "daemonSet {}/{}: names must be lowercase DNS labels",
                ds.namespace, ds.name
            )));
        }
        if ds.revisions.is_empty() {
            return Err(here(format!(
                "daemonSet {}: revisions must not be empty",
                ds.name
            )));
        }
        if let Some(bad) = ds.revisions.iter().find(|r| !is_image_reference(&r.image)) {
            return Err(self.problem(
                &bad.image,
                format!("daemonSet {}: bad image {:?}", ds.name, bad.image),
            ));
        }
        if let Some(at) = ds.pods_at
            && !(1..=ds.revisions.len()).contains(&at)
        {
            return Err(self.problem(
                "podsAt",
                format!(
                    "daemonSet {}: podsAt {at} is not a revision (1..={})",
                    ds.name,
                    ds.revisions.len()
                ),
            ));
        }
        self.budgets(ds)
    }

    fn budgets(&self, ds: &DaemonSetSpec) -> Result<(), Problem> {
        let has_budget = ds.max_unavailable.is_some() || ds.max_surge.is_some();
        if ds.update_strategy == StrategyKind::OnDelete && has_budget {
            return Err(self.problem(
                "max",
                format!(
                    "daemonSet {}: maxUnavailable/maxSurge need updateStrategy RollingUpdate",
                    ds.name
                ),
            ));
        }
        for (field, value) in [
            ("maxUnavailable", &ds.max_unavailable),
            ("maxSurge", &ds.max_surge),
        ] {
            if let Some(value) = value
                && !is_valid_budget(value)
            {
                return Err(self.problem(
                    field,
                    format!(
                        "daemonSet {}: {field} must be a count or a percentage like 10%",
                        ds.name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn image_rule(&self, rule: &ImageRule) -> Result<(), Problem> {
        if !is_image_reference(&rule.image) {
            return Err(self.problem(&rule.image, format!("images: bad image {:?}", rule.image)));
        }
        if let Some(pool) = rule.pools.iter().find(|pool| !self.knows_pool(pool)) {
            return Err(self.problem(
                pool,
                format!("images: unknown pool {pool:?} for {}", rule.image),
            ));
        }
        if let Some(node) = rule.nodes.iter().find(|node| !self.knows_node(node)) {
            return Err(self.problem(
                node,
                format!("images: unknown node {node:?} for {}", rule.image),
            ));
        }
        Ok(())
    }

    fn timeline_entry(&self, entry: &TimelineEntry) -> Result<(), Problem> {
        let at = humantime::format_duration(entry.at).to_string();
        if entry.action == TimelineAction::Join {
            let Some(pool) = &entry.pool else {
                return Err(self.problem("join", format!("timeline at {at}: join needs a pool")));
            };
            if !self.knows_pool(pool) {
                return Err(self.problem(pool, format!("timeline at {at}: unknown pool {pool:?}")));
            }
            return Ok(());
        }
        match &entry.node {
            None => Err(self.problem(
                "action",
                format!("timeline at {at}: {:?} needs a node", entry.action),
            )),
            Some(node) if !self.knows_node(node) => {
                Err(self.problem(node, format!("timeline at {at}: unknown node {node:?}")))
            }
            Some(_) => Ok(()),
        }
    }
}

/// The first line (1-based) containing `needle`.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    text.lines()
        .position(|line| line.contains(needle))
        .map(|index| index + 1)
}

/// A lowercase RFC 1123 label (what DaemonSet and namespace names must be).
fn is_dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A plausible image reference: non-empty, no whitespace or control characters.
fn is_image_reference(image: &str) -> bool {
    !image.is_empty() && !image.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A non-negative count, or a percentage such as `25%`.
fn is_valid_budget(value: &IntOrString) -> bool {
    match value {
        IntOrString::Int(count) => *count >= 0,
        IntOrString::String(text) => text
            .strip_suffix('%')
            .and_then(|number| number.parse::<u32>().ok())
            .is_some_and(|percent| percent <= 100),
    }
}

//! Which pod the simulated kubelet evicts under node pressure, and the words
//! it uses (upstream `pkg/kubelet/eviction`). Pure: each candidate carries its
//! requests, its simulated usage and its priority, read from the pod by the
//! caller.
//!
//! The ranking is upstream's `rankMemoryPressure` (and, for ephemeral
//! storage, `rankDiskPressureFunc`): `orderedBy(exceedMemoryRequests,
//! priority, memory)` — pods whose usage exceeds their requests first, then
//! lower priority first, then the larger usage above requests first. QoS
//! class is not an input, as upstream.
//!
//! The sim has no real usage, so each container gets a simulated one
//! ([`simulated_usage`]): without a request for the resource it uses a fixed
//! amount (128Mi of memory, 1Gi of ephemeral storage); with a request below
//! its limit it uses halfway between the two, with a request and no limit a
//! quarter above the request; at its limit (a Guaranteed container) it uses
//! exactly its request. The pod annotation `sim.rollcall.dev/memory-usage`
//! (or `disk-usage`) sets the first container's usage instead.

use std::cmp::Ordering;
use std::fmt::Write as _;

use crate::model::quantity::format_bytes_exact;

/// Memory a container without a memory request uses in the sim.
pub const UNREQUESTED_MEMORY: u64 = 128 << 20;
/// Ephemeral storage a container without such a request uses in the sim.
pub const UNREQUESTED_STORAGE: u64 = 1 << 30;

/// One container's request, limit and simulated usage of the resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerUse {
    /// Container name.
    pub name: String,
    /// Its request (0 when none).
    pub request: u64,
    /// Its simulated usage.
    pub usage: u64,
}

/// A pod the kubelet may evict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate<K> {
    /// Whatever identifies the pod to the caller.
    pub key: K,
    /// `spec.priority` (0 when unset, as upstream `corev1helpers.PodPriority`).
    pub priority: i32,
    /// The pod's effective request of the resource (upstream `podRequest`,
    /// the model's `spec.requests`).
    pub request: u64,
    /// Per container: request and usage of the resource under pressure.
    pub containers: Vec<ContainerUse>,
}

impl<K> Candidate<K> {
    /// The pod's usage: its containers' summed.
    pub fn usage(&self) -> u64 {
        self.containers.iter().map(|c| c.usage).sum()
    }

    fn above_request(&self) -> i128 {
        i128::from(self.usage()) - i128::from(self.request)
    }
}

/// A container's simulated usage from its request and limit (see the module
/// docs); `unrequested` is what a container without a request uses.
pub fn simulated_usage(request: Option<u64>, limit: Option<u64>, unrequested: u64) -> u64 {
    match (request, limit) {
        (None | Some(0), None) => unrequested,
        (None | Some(0), Some(limit)) => limit,
        (Some(request), Some(limit)) if limit > request => request + (limit - request) / 2,
        (Some(request), Some(_)) => request,
        (Some(request), None) => request.saturating_add(request / 4),
    }
}

/// Upstream's eviction order: exceeds requests, then priority, then usage
/// above requests. Stable, so equal pods keep the caller's order.
pub fn rank<K>(candidates: &mut [Candidate<K>]) {
    candidates.sort_by(compare);
}

fn compare<K>(a: &Candidate<K>, b: &Candidate<K>) -> Ordering {
    let exceeds = |c: &Candidate<K>| c.usage() > c.request;
    // exceedMemoryRequests: a pod over its requests goes before one within them.
    exceeds(b)
        .cmp(&exceeds(a))
        // priority: the lower priority goes first.
        .then(a.priority.cmp(&b.priority))
        // memory: the larger consumption above requests goes first.
        .then(b.above_request().cmp(&a.above_request()))
}

/// Upstream `evictionMessage`: the resource, the threshold met (when known,
/// as `(threshold, available)`), and each container using more than it
/// requested. Upstream's sentences end with a space; so do these.
pub fn eviction_message<K>(
    resource: &str,
    threshold: Option<(&str, &str)>,
    pod: &Candidate<K>,
) -> String {
    let mut message = format!("The node was low on resource: {resource}. ");
    if let Some((quantity, available)) = threshold {
        let _ = write!(
            message,
            "Threshold quantity: {quantity}, available: {available}. "
        );
    }
    for c in pod.containers.iter().filter(|c| c.usage > c.request) {
        let _ = write!(
            message,
            "Container {} was using {}, request is {}, has larger consumption of {resource}. ",
            c.name,
            bytes(c.usage),
            bytes(c.request),
        );
    }
    message
}

/// A byte count as upstream prints a `BinarySI` quantity (`128Mi`).
pub fn bytes(amount: u64) -> String {
    format_bytes_exact(i64::try_from(amount).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MI: u64 = 1 << 20;

    fn pod(key: &'static str, priority: i32, request: u64, usage: u64) -> Candidate<&'static str> {
        Candidate {
            key,
            priority,
            request,
            containers: vec![ContainerUse {
                name: "c".to_owned(),
                request,
                usage,
            }],
        }
    }

    /// Rows after upstream `helpers_test.go` `TestOrderedByExceedsRequestMemory`,
    /// `TestOrderedByPriority` and `TestOrderedbyMemory`, combined as
    /// `rankMemoryPressure` combines them.
    #[test]
    fn ranks_as_rank_memory_pressure() {
        type Row = (
            &'static str,
            Vec<Candidate<&'static str>>,
            Vec<&'static str>,
        );
        let cases: Vec<Row> = vec![
            (
                "exceeding requests goes first, whatever the priority",
                vec![
                    pod("within", 0, 100 * MI, 50 * MI),
                    pod("over", 1000, 10 * MI, 20 * MI),
                ],
                vec!["over", "within"],
            ),
            (
                "both over requests: lower priority first",
                vec![pod("high", 100, 0, 10 * MI), pod("low", -10, 0, 5 * MI)],
                vec!["low", "high"],
            ),
            (
                "same priority: the larger usage above requests first",
                vec![
                    pod("small", 0, 100 * MI, 110 * MI),
                    pod("big", 0, 0, 50 * MI),
                ],
                vec!["big", "small"],
            ),
            (
                "all within requests: priority, then the least below requests",
                vec![
                    pod("guaranteed-low", 0, 100 * MI, 100 * MI),
                    pod("roomy", 0, 200 * MI, 100 * MI),
                    pod("critical", 2_000_001_000, 10 * MI, 10 * MI),
                ],
                vec!["guaranteed-low", "roomy", "critical"],
            ),
            (
                "a best-effort pod (no request) before a burstable one over its request",
                vec![
                    pod("burstable", 0, 64 * MI, 80 * MI),
                    pod("besteffort", 0, 0, 128 * MI),
                ],
                vec!["besteffort", "burstable"],
            ),
        ];
        for (name, mut pods, expected) in cases {
            rank(&mut pods);
            let order: Vec<&str> = pods.iter().map(|p| p.key).collect();
            assert_eq!(order, expected, "{name}");
        }
    }

    #[test]
    fn simulated_usage_follows_requests_and_limits() {
        let cases = [
            ("no request, no limit", None, None, UNREQUESTED_MEMORY),
            (
                "limit only (request defaults to it)",
                None,
                Some(256 * MI),
                256 * MI,
            ),
            (
                "request below limit: halfway",
                Some(64 * MI),
                Some(128 * MI),
                96 * MI,
            ),
            (
                "request at limit: the request",
                Some(64 * MI),
                Some(64 * MI),
                64 * MI,
            ),
            (
                "request, no limit: a quarter above",
                Some(64 * MI),
                None,
                80 * MI,
            ),
        ];
        for (name, request, limit, expected) in cases {
            assert_eq!(
                simulated_usage(request, limit, UNREQUESTED_MEMORY),
                expected,
                "{name}"
            );
        }
    }

    /// Upstream `evictionMessage`'s sentences (`nodeLowMessageFmt`,
    /// `thresholdMetMessageFmt`, `containerMessageFmt`).
    #[test]
    fn message_names_the_threshold_and_each_container_over_its_request() {
        let mut candidate = pod("p", 0, 0, 128 * MI);
        candidate.request = 64 * MI;
        candidate.containers.push(ContainerUse {
            name: "sidecar".to_owned(),
            request: 64 * MI,
            usage: 64 * MI,
        });
        assert_eq!(
            eviction_message("memory", Some(("100Mi", "84375Ki")), &candidate),
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 84375Ki. \
             Container c was using 128Mi, request is 0, has larger consumption of memory. "
        );
    }
}

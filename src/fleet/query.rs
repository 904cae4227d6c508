//! `fleet status --where`: a question about nodes answered across the fleet,
//! the matching nodes grouped by reason with their cluster and node names.
//! Pure: a parsed [`Query`] over each cluster's status nodes.
//!
//! - `digest!=D`: nodes that should run the DaemonSet and do not run template
//!   D (a digest or its first characters), grouped by the template they run
//!   (`runs c69834…`) or `no pod`;
//! - `digest=D`: nodes whose pod runs template D;
//! - `not-ready`: nodes that should run it and whose pod is not Ready (or
//!   missing), grouped by the pod's problem;
//! - `reason=TEXT`: nodes whose eligibility reason or pod problem contains
//!   TEXT (any case), grouped by that reason.

use serde::Serialize;

use super::template::TemplateIdentity;
use crate::ops::status_node::NodeStatus;

/// A question about nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// Nodes that should run the pod and do not run this template.
    NotOnDigest(String),
    /// Nodes whose pod runs this template.
    OnDigest(String),
    /// Nodes that should run the pod and whose pod is not Ready (or missing).
    NotReady,
    /// Nodes whose eligibility reason or pod problem contains this text.
    Reason(String),
}

/// The shortest digest prefix accepted (shorter would match by accident).
const MIN_DIGEST: usize = 4;

impl std::str::FromStr for Query {
    type Err = String;

    fn from_str(text: &str) -> Result<Query, String> {
        let text = text.trim();
        let digest = |d: &str| {
            let d = d.trim().to_ascii_lowercase();
            if d.len() >= MIN_DIGEST && d.chars().all(|c| c.is_ascii_hexdigit()) {
                Ok(d)
            } else {
                Err(format!(
                    "{d:?} is not a digest (at least {MIN_DIGEST} hex digits)"
                ))
            }
        };
        if let Some(d) = text.strip_prefix("digest!=") {
            return digest(d).map(Query::NotOnDigest);
        }
        if let Some(d) = text.strip_prefix("digest=") {
            return digest(d).map(Query::OnDigest);
        }
        if let Some(reason) = text
            .strip_prefix("reason=")
            .filter(|r| !r.trim().is_empty())
        {
            return Ok(Query::Reason(reason.trim().to_lowercase()));
        }
        if text == "not-ready" {
            return Ok(Query::NotReady);
        }
        Err(format!(
            "unknown --where {text:?}: digest!=D, digest=D, not-ready or reason=TEXT"
        ))
    }
}

/// The nodes that match, grouped by reason.
#[derive(Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The question, as asked.
    pub query: String,
    /// How many nodes match, fleet-wide.
    pub nodes: usize,
    /// One group per reason, most nodes first.
    pub groups: Vec<Group>,
}

/// The nodes that match for one reason.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    /// Why they match.
    pub reason: String,
    /// Each node with its cluster, in cluster order then node order.
    pub nodes: Vec<ClusterNode>,
}

/// A node and the cluster it is in.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct ClusterNode {
    /// The context.
    pub context: String,
    /// The node.
    pub node: String,
}

impl Answer {
    /// Starts an answer to `query` (its text as asked).
    pub fn new(query: &str) -> Answer {
        Answer {
            query: query.to_owned(),
            ..Answer::default()
        }
    }

    /// Adds one cluster's matching nodes; `revisions` maps its revision
    /// numbers to template identities.
    pub fn add(
        &mut self,
        query: &Query,
        context: &str,
        nodes: &[NodeStatus],
        revisions: &[(i64, TemplateIdentity)],
    ) {
        let digest_of = |node: &NodeStatus| {
            let number = node.revision?;
            revisions
                .iter()
                .find(|(n, _)| *n == number)
                .map(|(_, identity)| identity.digest.as_str())
        };
        for node in nodes {
            if let Some(reason) = matches(query, node, digest_of(node)) {
                self.push(reason, context, &node.name);
            }
        }
        self.groups
            .sort_by_key(|g| std::cmp::Reverse(g.nodes.len()));
    }

    fn push(&mut self, reason: String, context: &str, node: &str) {
        self.nodes += 1;
        let entry = ClusterNode {
            context: context.to_owned(),
            node: node.to_owned(),
        };
        match self.groups.iter_mut().find(|g| g.reason == reason) {
            Some(group) => group.nodes.push(entry),
            None => self.groups.push(Group {
                reason,
                nodes: vec![entry],
            }),
        }
    }
}

/// Why `node` matches `query`, or `None`.
fn matches(query: &Query, node: &NodeStatus, digest: Option<&str>) -> Option<String> {
    let problem = || {
        node.problem
            .as_ref()
            .map_or_else(|| "not Ready".to_owned(), |p| p.reason.clone())
    };
    match query {
        Query::NotOnDigest(wanted) => {
            if !node.eligible {
                return None;
            }
            match (node.pod.is_some(), digest) {
                (false, _) => Some("no pod".to_owned()),
                (true, Some(d)) if d.starts_with(wanted.as_str()) => None,
                (true, Some(d)) => Some(format!("runs {d}")),
                (true, None) => Some("runs an unknown revision".to_owned()),
            }
        }
        Query::OnDigest(wanted) => digest
            .filter(|d| node.pod.is_some() && d.starts_with(wanted.as_str()))
            .map(|d| format!("runs {d}")),
        Query::NotReady => match (node.eligible, node.pod.is_some(), node.ready) {
            (true, false, _) => Some("no pod".to_owned()),
            (true, true, false) => Some(problem()),
            _ => None,
        },
        Query::Reason(text) => node
            .reasons
            .iter()
            .cloned()
            .chain(node.problem.as_ref().map(|p| p.reason.clone()))
            .find(|reason| reason.to_lowercase().contains(text.as_str())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, eligible: bool, revision: Option<i64>, ready: bool) -> NodeStatus {
        NodeStatus {
            name: name.to_owned(),
            eligible,
            eligibility: crate::engine::vocabulary::Eligibility::Yes,
            should_continue_running: eligible,
            reasons: if eligible {
                Vec::new()
            } else {
                vec!["taint dedicated=gpu:NoSchedule not tolerated".to_owned()]
            },
            pod: revision.map(|r| format!("agent-{name}-{r}")),
            revision,
            updated: revision == Some(2),
            ready,
            available: ready,
            problem: None,
            failure: None,
            pod_count: usize::from(revision.is_some()),
            fit: None,
            canary: false,
        }
    }

    fn identity(image: &str) -> TemplateIdentity {
        TemplateIdentity::of_value(
            &json!({"spec": {"containers": [{"name": "a", "image": image}]}}),
        )
    }

    #[test]
    fn queries_parse_or_say_what_they_take() {
        assert_eq!(
            "digest!=ABCD12".parse(),
            Ok(Query::NotOnDigest("abcd12".into()))
        );
        assert_eq!("digest=abcd".parse(), Ok(Query::OnDigest("abcd".into())));
        assert_eq!(" not-ready ".parse(), Ok(Query::NotReady));
        assert_eq!("reason=Taint".parse(), Ok(Query::Reason("taint".into())));
        for bad in ["digest!=ab", "digest=xyzw", "reason=", "ready", ""] {
            assert!(bad.parse::<Query>().is_err(), "{bad}");
        }
    }

    /// A query (`NEW`: the new template's digest) and the groups it finds.
    type Case = (&'static str, Vec<(String, Vec<&'static str>)>);

    #[test]
    fn answers_group_nodes_by_reason_across_clusters() {
        let (old, new) = (identity("agent:1"), identity("agent:2"));
        let revisions = vec![(1, old.clone()), (2, new.clone())];
        let east = [
            node("e1", true, Some(2), true),
            node("e2", true, Some(1), true),
            node("e3", true, None, false),
            node("gpu", false, None, false),
        ];
        let west = [node("w1", true, Some(1), false)];
        let short = new.digest[..6].to_owned();
        let cases: [Case; 4] = [
            (
                "digest!=NEW",
                vec![
                    (format!("runs {}", old.digest), vec!["east/e2", "west/w1"]),
                    ("no pod".to_owned(), vec!["east/e3"]),
                ],
            ),
            (
                "digest=NEW",
                vec![(format!("runs {}", new.digest), vec!["east/e1"])],
            ),
            (
                "not-ready",
                vec![
                    ("no pod".to_owned(), vec!["east/e3"]),
                    ("not Ready".to_owned(), vec!["west/w1"]),
                ],
            ),
            (
                "reason=dedicated",
                vec![(
                    "taint dedicated=gpu:NoSchedule not tolerated".to_owned(),
                    vec!["east/gpu"],
                )],
            ),
        ];
        for (text, expected) in cases {
            let text = text.replace("NEW", &short);
            let query: Query = text.parse().unwrap();
            let mut answer = Answer::new(&text);
            answer.add(&query, "east", &east, &revisions);
            answer.add(&query, "west", &west, &revisions);
            let found: Vec<(String, Vec<String>)> = answer
                .groups
                .iter()
                .map(|g| {
                    let nodes = g
                        .nodes
                        .iter()
                        .map(|n| format!("{}/{}", n.context, n.node))
                        .collect();
                    (g.reason.clone(), nodes)
                })
                .collect();
            let expected: Vec<(String, Vec<String>)> = expected
                .into_iter()
                .map(|(r, n)| (r, n.into_iter().map(str::to_owned).collect()))
                .collect();
            assert_eq!(found, expected, "{text}");
            assert_eq!(
                answer.nodes,
                expected.iter().map(|(_, n)| n.len()).sum::<usize>()
            );
        }
    }
}

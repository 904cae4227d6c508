//! Which scenario image rule, if any, applies to an image on a node.

use crate::sim::scenario::{ImageRule, Scenario};

/// The first rule for `image` whose pools and nodes include this node
/// (empty lists include every pool / node).
pub fn rule_for<'a>(
    scenario: &'a Scenario,
    image: &str,
    node: &str,
    pool: Option<&str>,
) -> Option<&'a ImageRule> {
    scenario.images.iter().find(|rule| {
        rule.image == image
            && (rule.pools.is_empty() || pool.is_some_and(|p| rule.pools.iter().any(|r| r == p)))
            && (rule.nodes.is_empty() || rule.nodes.iter().any(|n| n == node))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_image_pool_and_node() {
        let scenario = Scenario::load("small").expect("small");
        let crash = "registry.example.com/platform/node-agent:1.5.0";
        assert!(rule_for(&scenario, crash, "edge-01", Some("edge")).is_some());
        assert!(rule_for(&scenario, crash, "general-01", Some("general")).is_none());
        assert!(rule_for(&scenario, crash, "edge-01", None).is_none());
        let pull = "registry.example.com/platform/node-agent:9.9.9";
        assert!(rule_for(&scenario, pull, "general-01", Some("general")).is_some());
    }
}

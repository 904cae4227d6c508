//! The fleet plan file (`fleet.yaml`): the DaemonSet, the fleet's contexts
//! (globs), the exclusions, the failure budget and the ordered waves, each
//! with what to do inside its clusters (canary selector, batch, soak, Ready
//! timeout, bake after the wave passes, clusters in parallel). Unknown fields
//! are refused with their line and column, so a typo (`bach: 5`) is never a
//! silent default. Pure: text in, a checked [`PlanFile`] or an error out.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::selector::Selector;
use crate::model::DsRef;

/// A parsed, checked plan file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// The DaemonSet, `NAMESPACE/NAME` (or any form the commands accept).
    pub daemonset: String,
    /// The fleet: context names or globs of the kubeconfig.
    pub clusters: Vec<String>,
    /// Contexts (or globs) the fleet leaves out on purpose.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Failures allowed before the run stops.
    #[serde(default)]
    pub budget: Budget,
    /// The waves, in order.
    pub waves: Vec<Wave>,
}

/// How many failures the fleet tolerates before it stops everywhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Failed nodes allowed fleet-wide (the next one stops the run).
    #[serde(default)]
    pub nodes: usize,
    /// Failed clusters allowed (a cluster fails with its first failed node).
    #[serde(default)]
    pub clusters: usize,
}

/// One wave: its clusters and how each is rolled.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Wave {
    /// Its name, unique in the plan.
    pub name: String,
    /// Context names or globs; a glob takes only contexts no earlier wave named.
    pub clusters: Vec<String>,
    /// Canary nodes by label selector, as `rollcall auto --canary`.
    #[serde(default)]
    pub canary: Option<String>,
    /// Nodes per batch inside each cluster.
    #[serde(default = "one")]
    pub batch: usize,
    /// How long a batch stays Ready without restarts before the next.
    #[serde(default = "default_soak")]
    pub soak: Span,
    /// How long a replacement may take to become Ready.
    #[serde(default = "default_timeout")]
    pub timeout: Span,
    /// How long to wait after the wave passes, before the next wave.
    #[serde(default)]
    pub bake: Span,
    /// How many of the wave's clusters roll at once.
    #[serde(default = "one")]
    pub parallel: usize,
}

/// A duration written as `30s`, `5m`, `1h30m` (as the commands' flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span(pub Duration);

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(self.0.as_millis()).unwrap_or(u64::MAX))
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        humantime::parse_duration(text.trim())
            .map(Span)
            .map_err(|e| {
                serde::de::Error::custom(format!("{text:?}: {e} (examples: 30s, 5m, 1h30m)"))
            })
    }
}

fn one() -> usize {
    1
}

fn default_soak() -> Span {
    Span(Duration::from_secs(30))
}

fn default_timeout() -> Span {
    Span(Duration::from_secs(300))
}

/// Why a plan file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanFileError {
    /// Not YAML, or not the plan's shape (the parser's words carry the position).
    #[error("{0}")]
    Syntax(String),
    /// The shape is right; a value is not.
    #[error("{0}")]
    Invalid(String),
}

impl PlanFile {
    /// Parses and checks `text` (`source` names it in errors).
    pub fn parse(text: &str, source: &str) -> Result<PlanFile, PlanFileError> {
        let plan: PlanFile = serde_norway::from_str(text)
            .map_err(|e| PlanFileError::Syntax(format!("{source}: {e}")))?;
        plan.check()
            .map_err(|e| PlanFileError::Invalid(format!("{source}: {e}")))?;
        Ok(plan)
    }

    /// The DaemonSet named.
    pub fn daemonset(&self) -> Result<DsRef, String> {
        self.daemonset
            .parse::<DsRef>()
            .map_err(|e| format!("daemonset {:?}: {e}", self.daemonset))
    }

    fn check(&self) -> Result<(), String> {
        self.daemonset()?;
        if self.clusters.is_empty() {
            return Err("clusters: name at least one context or glob".to_owned());
        }
        if self.waves.is_empty() {
            return Err("waves: at least one wave".to_owned());
        }
        for (index, wave) in self.waves.iter().enumerate() {
            let at = format!("waves[{index}] ({:?})", wave.name);
            if wave.name.trim().is_empty() {
                return Err(format!("waves[{index}]: a wave needs a name"));
            }
            if self.waves[..index].iter().any(|w| w.name == wave.name) {
                return Err(format!("{at}: two waves are named {:?}", wave.name));
            }
            if wave.clusters.is_empty() {
                return Err(format!("{at}: clusters: name at least one context or glob"));
            }
            if wave.batch == 0 {
                return Err(format!("{at}: batch must be at least 1"));
            }
            if wave.parallel == 0 {
                return Err(format!("{at}: parallel must be at least 1"));
            }
            if wave.timeout.0.is_zero() {
                return Err(format!("{at}: timeout must be more than 0s"));
            }
            if let Some(canary) = &wave.canary {
                Selector::parse(canary).map_err(|e| format!("{at}: canary {canary:?}: {e}"))?;
            }
        }
        Ok(())
    }

    /// A digest of the plan's meaning (its parsed form, not its spelling):
    /// a second run of the same plan recognises the members it left paused.
    pub fn digest(&self) -> String {
        // Field order is the struct's, so the JSON is the same for the same meaning.
        let text = serde_json::to_string(self).unwrap_or_default();
        let mut hasher = fnv::Fnv::default();
        hasher.write(text.as_bytes());
        format!("{:016x}", hasher.finish())
    }
}

/// A stable 64-bit FNV-1a hash (std's hasher may change between releases;
/// the digest is stored on clusters and compared by later runs).
mod fnv {
    /// FNV-1a, 64 bits.
    pub struct Fnv(u64);

    impl Default for Fnv {
        fn default() -> Self {
            Fnv(0xcbf2_9ce4_8422_2325)
        }
    }

    impl Fnv {
        pub fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 ^= u64::from(b);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
        }

        pub fn finish(&self) -> u64 {
            self.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE_EXAMPLE: &str = r#"
daemonset: kube-system/node-agent
clusters: ["prod-*"]
exclude: [prod-legacy]
budget: {nodes: 0}
waves:
  - name: canary
    clusters: [prod-eu-1]
    canary: node-pool=general
    batch: 5
    soak: 30s
    timeout: 5m
    bake: 10m
  - name: rest
    clusters: ["prod-*"]
    parallel: 3
"#;

    #[test]
    fn the_issue_example_parses_with_defaults_filled_in() {
        let plan = PlanFile::parse(ISSUE_EXAMPLE, "fleet.yaml").unwrap();
        assert_eq!(plan.exclude, ["prod-legacy"]);
        assert_eq!(plan.budget, Budget::default());
        assert_eq!(plan.waves[0].batch, 5);
        assert_eq!(plan.waves[0].bake.0, Duration::from_secs(600));
        assert_eq!(plan.waves[1].batch, 1);
        assert_eq!(plan.waves[1].soak.0, Duration::from_secs(30));
        assert_eq!(plan.waves[1].timeout.0, Duration::from_secs(300));
        assert_eq!(plan.waves[1].bake.0, Duration::ZERO);
        assert_eq!(plan.waves[1].parallel, 3);
        assert_eq!(plan.digest(), plan.clone().digest());
    }

    #[test]
    fn refusals_say_where_and_what() {
        let unknown = ISSUE_EXAMPLE.replace("batch: 5", "bach: 5");
        let cases: [(&str, String, &[&str]); 8] = [
            (
                "unknown field",
                unknown,
                &["bach", "waves[0]", "line 10 column 5"],
            ),
            (
                "not yaml",
                "daemonset: [\n".to_owned(),
                &["fleet.yaml", "line"],
            ),
            (
                "bad duration",
                ISSUE_EXAMPLE.replace("soak: 30s", "soak: soon"),
                &["soon", "examples: 30s"],
            ),
            (
                "no waves",
                "daemonset: a/b\nclusters: [x]\nwaves: []\n".to_owned(),
                &["at least one wave"],
            ),
            (
                "batch 0",
                ISSUE_EXAMPLE.replace("batch: 5", "batch: 0"),
                &["waves[0] (\"canary\")", "batch"],
            ),
            (
                "bad selector",
                ISSUE_EXAMPLE.replace("node-pool=general", "node-pool in (a"),
                &["canary", "node-pool in (a"],
            ),
            (
                "duplicate wave",
                ISSUE_EXAMPLE.replace("name: rest", "name: canary"),
                &["two waves are named \"canary\""],
            ),
            (
                "unknown budget field",
                ISSUE_EXAMPLE.replace("{nodes: 0}", "{node: 0}"),
                &["node", "line 5"],
            ),
        ];
        for (name, text, words) in cases {
            let err = PlanFile::parse(&text, "fleet.yaml")
                .unwrap_err()
                .to_string();
            for word in words {
                assert!(err.contains(word), "{name}: {err:?} lacks {word:?}");
            }
        }
    }

    #[test]
    fn the_digest_follows_meaning_not_spelling() {
        let a = PlanFile::parse(ISSUE_EXAMPLE, "a").unwrap();
        let spaced = ISSUE_EXAMPLE.replace("budget: {nodes: 0}", "budget:\n  nodes: 0");
        let b = PlanFile::parse(&spaced, "b").unwrap();
        assert_eq!(a.digest(), b.digest());
        let other = ISSUE_EXAMPLE.replace("batch: 5", "batch: 4");
        assert_ne!(a.digest(), PlanFile::parse(&other, "c").unwrap().digest());
    }
}

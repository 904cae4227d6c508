//! How the members of an embedded fleet (`rollcall sim --clusters N`) differ
//! when no `--scenario` is named: the same scenario, varied per member so the
//! fleet view has something to show — clusters mid-rollout, clusters already
//! on the new revision, one whose template drifted, one whose new pods fail,
//! one paused. Pure: a [`Scenario`] in, the member's [`Scenario`] out.

use crate::sim::scenario::{DaemonSetSpec, Failure, ImageRule, Scenario};

/// Who paused the paused member's rollout, as `rollcall pause` records it.
pub const PAUSED_BY: &str = "fleet-sim";

/// What one member of an embedded fleet is like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The scenario as written (mid-rollout where it is).
    AsScenario,
    /// Every DaemonSet's pods already run its newest template.
    Rolled,
    /// The focus DaemonSet's newest template names another image tag: a
    /// cluster someone patched by hand.
    Drifted,
    /// The focus DaemonSet's pods run its newest template, which crash-loops on every node.
    Failing,
    /// The focus DaemonSet's rollout is paused (the `rollcall.dev/paused-*` annotations).
    Paused,
}

/// The first members, in order; every member after them is [`Variant::Rolled`]
/// (most of a fleet has finished a rollout when a few clusters have not).
const FIRST: [Variant; 5] = [
    Variant::AsScenario,
    Variant::Rolled,
    Variant::Drifted,
    Variant::Failing,
    Variant::Paused,
];

impl Variant {
    /// The variant of member `index` (1-based, as in the context `rollcall-sim-INDEX`).
    pub fn of(index: usize) -> Variant {
        index
            .checked_sub(1)
            .and_then(|i| FIRST.get(i))
            .copied()
            .unwrap_or(Variant::Rolled)
    }

    /// A few words for the start banner.
    pub fn describe(self) -> &'static str {
        match self {
            Variant::AsScenario => "as the scenario",
            Variant::Rolled => "on the newest revision",
            Variant::Drifted => "template drifted (another image tag)",
            Variant::Failing => "newest revision crash-looping everywhere",
            Variant::Paused => "rollout paused",
        }
    }

    /// The scenario for a member of this variant.
    pub fn apply(self, mut scenario: Scenario) -> Scenario {
        let Some(focus) = focus_index(&scenario) else {
            return scenario;
        };
        match self {
            Variant::AsScenario => {}
            Variant::Rolled => {
                for ds in &mut scenario.daemon_sets {
                    ds.pods_at = None;
                }
            }
            Variant::Drifted => {
                if let Some(newest) = scenario.daemon_sets[focus].revisions.last_mut() {
                    newest.image = drifted_image(&newest.image);
                }
            }
            Variant::Failing => {
                let ds = &mut scenario.daemon_sets[focus];
                ds.pods_at = None;
                if let Some(newest) = ds.revisions.last() {
                    // First matching rule wins: ahead of the scenario's own.
                    scenario.images.insert(0, crash_loop(&newest.image));
                }
            }
            Variant::Paused => pause(&mut scenario.daemon_sets[focus]),
        }
        scenario
    }
}

/// The DaemonSet the members vary in (`rollcall demo --fleet` opens the
/// matrix on it).
pub fn focus(scenario: &Scenario) -> Option<crate::model::Target> {
    focus_index(scenario).map(|i| crate::model::Target {
        namespace: scenario.daemon_sets[i].namespace.clone(),
        name: scenario.daemon_sets[i].name.clone(),
    })
}

/// The DaemonSet the variation is about: the first with a pending or past
/// update (more than one revision), else the first.
fn focus_index(scenario: &Scenario) -> Option<usize> {
    let daemon_sets = &scenario.daemon_sets;
    daemon_sets
        .iter()
        .position(|ds| ds.revisions.len() > 1)
        .or_else(|| (!daemon_sets.is_empty()).then_some(0))
}

/// `agent:1.5.0` → `agent:1.5.1`; a tag without a number at its end (or no
/// tag) gets `-hotfix`.
fn drifted_image(image: &str) -> String {
    if let Some((name, _digest)) = image.split_once('@') {
        return format!("{name}:hotfix");
    }
    let tag_start = image.rfind(':').filter(|&at| !image[at..].contains('/'));
    let Some(at) = tag_start else {
        return format!("{image}:hotfix");
    };
    let (name, tag) = (&image[..at], &image[at + 1..]);
    let (stem, number) = tag.split_at(tag.trim_end_matches(|c: char| c.is_ascii_digit()).len());
    match number.parse::<u64>() {
        Ok(n) => format!("{name}:{stem}{}", n.saturating_add(1)),
        Err(_) => format!("{image}-hotfix"),
    }
}

fn crash_loop(image: &str) -> ImageRule {
    ImageRule {
        image: image.to_owned(),
        failure: Failure::CrashLoopBackOff,
        pools: Vec::new(),
        nodes: Vec::new(),
        exit_code: Some(1),
        message: Some("panic: config key \"pipeline\" missing".to_owned()),
    }
}

fn pause(ds: &mut DaemonSetSpec) {
    ds.annotations
        .insert("rollcall.dev/paused-by".to_owned(), PAUSED_BY.to_owned());
    ds.annotations.insert(
        "rollcall.dev/pause-reason".to_owned(),
        "waiting for the change window".to_owned(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Scenario {
        Scenario::load("small").unwrap()
    }

    #[test]
    fn the_first_members_vary_and_the_rest_are_rolled() {
        let variants: Vec<Variant> = (1..=7).map(Variant::of).collect();
        assert_eq!(
            variants,
            [
                Variant::AsScenario,
                Variant::Rolled,
                Variant::Drifted,
                Variant::Failing,
                Variant::Paused,
                Variant::Rolled,
                Variant::Rolled
            ]
        );
        assert_eq!(Variant::of(0), Variant::Rolled);
    }

    #[test]
    fn images_drift_by_one_patch_version() {
        let cases = [
            (
                "registry.example.com/platform/node-agent:1.5.0",
                "registry.example.com/platform/node-agent:1.5.1",
            ),
            ("agent:1.9", "agent:1.10"),
            ("agent:latest", "agent:latest-hotfix"),
            ("registry:5000/agent", "registry:5000/agent:hotfix"),
            ("agent", "agent:hotfix"),
            ("agent@sha256:0123", "agent:hotfix"),
        ];
        for (image, drifted) in cases {
            assert_eq!(drifted_image(image), drifted, "{image}");
        }
    }

    #[test]
    fn each_variant_changes_only_what_it_says() {
        let base = small();
        let agent = |s: &Scenario| s.daemon_sets[0].clone();
        let as_is = Variant::AsScenario.apply(small());
        assert_eq!(agent(&as_is).pods_at, Some(1));
        let rolled = Variant::Rolled.apply(small());
        assert!(rolled.daemon_sets.iter().all(|ds| ds.pods_at.is_none()));
        let drifted = Variant::Drifted.apply(small());
        assert_eq!(
            agent(&drifted).revisions[1].image,
            "registry.example.com/platform/node-agent:1.5.1"
        );
        assert_eq!(agent(&drifted).pods_at, Some(1));
        let failing = Variant::Failing.apply(small());
        assert_eq!(failing.images[0].image, agent(&base).revisions[1].image);
        assert!(failing.images[0].pools.is_empty());
        assert_eq!(agent(&failing).pods_at, None);
        let paused = Variant::Paused.apply(small());
        assert_eq!(
            agent(&paused)
                .annotations
                .get("rollcall.dev/paused-by")
                .map(String::as_str),
            Some(PAUSED_BY)
        );
        assert_eq!(
            paused.daemon_sets[1].annotations,
            base.daemon_sets[1].annotations
        );
    }
}

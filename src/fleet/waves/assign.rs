//! Which contexts each wave takes. The fleet is every kubeconfig context
//! matched by the plan's `clusters:`; `exclude:` leaves some out; each wave
//! takes the fleet contexts its names and globs match, a glob only those no
//! earlier wave took. Every fleet context must end in exactly one wave or in
//! `exclude:` — a context left out is refused by name, never rolled (or
//! forgotten) by accident. Pure.

use super::file::PlanFile;
use super::glob::{is_glob, matches};

/// The contexts of each wave, and those excluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// `(wave name, contexts)`, in the plan's order.
    pub waves: Vec<(String, Vec<String>)>,
    /// Fleet contexts left out by `exclude:`, in kubeconfig order.
    pub excluded: Vec<String>,
}

impl Assignment {
    /// Every context of every wave, wave by wave.
    pub fn contexts(&self) -> impl Iterator<Item = &String> {
        self.waves.iter().flat_map(|(_, contexts)| contexts)
    }
}

/// Assigns `available` (the kubeconfig's contexts, in order) to the plan's waves.
pub fn assign(plan: &PlanFile, available: &[String]) -> Result<Assignment, String> {
    let literal_exists = |pattern: &str, at: &str| {
        if is_glob(pattern) || available.iter().any(|c| c == pattern) {
            Ok(())
        } else {
            Err(format!(
                "{at}: no context {pattern:?} in the kubeconfig (`kubectl config get-contexts` lists them)"
            ))
        }
    };
    for pattern in &plan.clusters {
        literal_exists(pattern, "clusters")?;
    }
    for pattern in &plan.exclude {
        literal_exists(pattern, "exclude")?;
    }
    let matched = |patterns: &[String], context: &str| patterns.iter().any(|p| matches(p, context));
    let fleet: Vec<&String> = available
        .iter()
        .filter(|c| matched(&plan.clusters, c))
        .collect();
    if fleet.is_empty() {
        return Err(format!(
            "clusters {:?}: no context of the kubeconfig matches",
            plan.clusters
        ));
    }
    let excluded: Vec<String> = fleet
        .iter()
        .filter(|c| matched(&plan.exclude, c))
        .map(|c| (*c).clone())
        .collect();
    let mut taken: Vec<String> = Vec::new();
    let mut waves = Vec::with_capacity(plan.waves.len());
    for wave in &plan.waves {
        let at = format!("wave {:?}", wave.name);
        let mut mine: Vec<String> = Vec::new();
        for pattern in &wave.clusters {
            literal_exists(pattern, &at)?;
            if !is_glob(pattern) {
                let why = if taken.contains(pattern) {
                    Some("is already in an earlier wave")
                } else if excluded.contains(pattern) {
                    Some("is excluded")
                } else if !fleet.contains(&pattern) {
                    Some("is not in the plan's clusters")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(format!("{at}: context {pattern:?} {why}"));
                }
            }
            for context in &fleet {
                let free = !taken.contains(context) && !excluded.contains(context);
                if free && !mine.contains(context) && matches(pattern, context) {
                    mine.push((*context).clone());
                }
            }
        }
        if mine.is_empty() {
            return Err(format!(
                "{at}: takes no cluster (its {:?} match only contexts taken or excluded)",
                wave.clusters
            ));
        }
        taken.extend(mine.iter().cloned());
        waves.push((wave.name.clone(), mine));
    }
    let left: Vec<&str> = fleet
        .iter()
        .filter(|c| !taken.contains(c) && !excluded.contains(c))
        .map(|c| c.as_str())
        .collect();
    if !left.is_empty() {
        return Err(format!(
            "context(s) {} match clusters {:?} but are in no wave: add them to a wave or to exclude",
            left.join(", "),
            plan.clusters
        ));
    }
    Ok(Assignment { waves, excluded })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn plan(clusters: &[&str], exclude: &[&str], waves: &[(&str, &[&str])]) -> PlanFile {
        let list = |items: &[&str]| {
            items
                .iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!(
            "daemonset: kube-system/agent\nclusters: [{}]\nexclude: [{}]\nwaves:\n",
            list(clusters),
            list(exclude)
        );
        for (name, contexts) in waves {
            let _ = write!(
                text,
                "  - name: {name}\n    clusters: [{}]\n",
                list(contexts)
            );
        }
        PlanFile::parse(&text, "test").unwrap()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    const KUBECONFIG: [&str; 6] = [
        "prod-eu-1",
        "prod-eu-2",
        "prod-us-1",
        "prod-legacy",
        "staging",
        "dev",
    ];

    #[test]
    fn a_later_glob_takes_only_what_earlier_waves_left() {
        let assigned = assign(
            &plan(
                &["prod-*"],
                &["prod-legacy"],
                &[
                    ("canary", &["prod-eu-1"]),
                    ("eu", &["prod-eu-*"]),
                    ("rest", &["prod-*"]),
                ],
            ),
            &names(&KUBECONFIG),
        )
        .unwrap();
        assert_eq!(
            assigned.waves,
            vec![
                ("canary".to_owned(), names(&["prod-eu-1"])),
                ("eu".to_owned(), names(&["prod-eu-2"])),
                ("rest".to_owned(), names(&["prod-us-1"])),
            ]
        );
        assert_eq!(assigned.excluded, names(&["prod-legacy"]));
    }

    #[test]
    fn refusals_name_the_context() {
        type Case<'a> = (&'a str, PlanFile, &'a str);
        let cases: Vec<Case> = vec![
            (
                "left out",
                plan(&["prod-*"], &[], &[("eu", &["prod-eu-*"])]),
                "prod-us-1, prod-legacy match clusters",
            ),
            (
                "typo in a wave",
                plan(
                    &["prod-*"],
                    &["prod-legacy"],
                    &[("all", &["prod-eu-3", "prod-*"])],
                ),
                "no context \"prod-eu-3\"",
            ),
            (
                "typo in exclude",
                plan(&["prod-*"], &["prod-legasy"], &[("all", &["prod-*"])]),
                "exclude: no context \"prod-legasy\"",
            ),
            (
                "named twice",
                plan(
                    &["prod-*"],
                    &["prod-legacy"],
                    &[("a", &["prod-*"]), ("b", &["prod-eu-1"])],
                ),
                "context \"prod-eu-1\" is already in an earlier wave",
            ),
            (
                "outside the fleet",
                plan(
                    &["prod-*"],
                    &["prod-legacy"],
                    &[("a", &["prod-*", "staging"])],
                ),
                "context \"staging\" is not in the plan's clusters",
            ),
            (
                "excluded and named",
                plan(
                    &["prod-*"],
                    &["prod-legacy"],
                    &[("a", &["prod-*", "prod-legacy"])],
                ),
                "\"prod-legacy\" is excluded",
            ),
            (
                "empty wave",
                plan(
                    &["prod-*"],
                    &["prod-legacy"],
                    &[("a", &["prod-*"]), ("b", &["prod-eu-*"])],
                ),
                "wave \"b\": takes no cluster",
            ),
            (
                "no fleet",
                plan(&["qa-*"], &[], &[("a", &["qa-*"])]),
                "no context of the kubeconfig matches",
            ),
        ];
        for (name, plan, words) in cases {
            let err = assign(&plan, &names(&KUBECONFIG)).unwrap_err();
            assert!(err.contains(words), "{name}: {err}");
        }
    }
}

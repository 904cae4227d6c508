//! Which contexts make the fleet: `--contexts a,b,c` (in that order, each
//! must exist), `--all-contexts` (every context, in kubeconfig order) or
//! `--context-regex RE` (the contexts whose whole name matches). Pure.

/// How the clusters were chosen.
#[derive(Clone, Debug)]
pub enum Selection {
    /// These, in this order.
    Listed(Vec<String>),
    /// Every context of the kubeconfig.
    All,
    /// The contexts whose whole name matches.
    Matching(regex::Regex),
}

/// Why no fleet could be chosen.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectionError {
    /// A listed context is not in the kubeconfig.
    #[error("no context {name:?} in the kubeconfig (`kubectl config get-contexts` lists them)")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// Nothing was chosen.
    #[error("no context {0}")]
    Empty(String),
}

/// The chosen contexts' names, each once.
pub fn choose(available: &[String], selection: &Selection) -> Result<Vec<String>, SelectionError> {
    let mut chosen: Vec<String> = Vec::new();
    match selection {
        Selection::Listed(names) => {
            for name in names {
                if !available.contains(name) {
                    return Err(SelectionError::Unknown { name: name.clone() });
                }
                if !chosen.contains(name) {
                    chosen.push(name.clone());
                }
            }
        }
        Selection::All => chosen.extend(available.iter().cloned()),
        Selection::Matching(pattern) => chosen.extend(
            available
                .iter()
                .filter(|name| {
                    pattern
                        .find(name)
                        .is_some_and(|m| m.len() == name.len() && m.start() == 0)
                })
                .cloned(),
        ),
    }
    if chosen.is_empty() {
        let why = match selection {
            Selection::Listed(_) => "was named".to_owned(),
            Selection::All => "in the kubeconfig".to_owned(),
            Selection::Matching(pattern) => format!("matches {:?}", pattern.as_str()),
        };
        return Err(SelectionError::Empty(why));
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    type Case = (&'static str, Selection, Result<Vec<String>, SelectionError>);

    #[test]
    fn selections() {
        let available = names(&["prod-eu", "prod-us", "staging", "prod-eu-2"]);
        let regex = |re: &str| Selection::Matching(regex::Regex::new(re).unwrap());
        let cases: [Case; 6] = [
            (
                "listed, in order",
                Selection::Listed(names(&["staging", "prod-eu", "staging"])),
                Ok(names(&["staging", "prod-eu"])),
            ),
            (
                "unknown",
                Selection::Listed(names(&["nope"])),
                Err(SelectionError::Unknown {
                    name: "nope".into(),
                }),
            ),
            ("all", Selection::All, Ok(available.clone())),
            (
                "whole-name match",
                regex("prod-.."),
                Ok(names(&["prod-eu", "prod-us"])),
            ),
            (
                "alternation",
                regex("staging|prod-eu-2"),
                Ok(names(&["staging", "prod-eu-2"])),
            ),
            (
                "nothing",
                regex("dev.*"),
                Err(SelectionError::Empty("matches \"dev.*\"".into())),
            ),
        ];
        for (name, selection, expected) in cases {
            assert_eq!(choose(&available, &selection), expected, "{name}");
        }
    }
}

//! A DaemonSet's identity: [`DsRef`], how a person names it on the command
//! line, parsed once; and [`Target`], the one resolved identity (namespace and
//! name) the console, the watches and the operations use.
//!
//! kubectl users write `NAME` (with `-n NS`), `ds/NAME`, `daemonset/NAME`,
//! `daemonsets.apps/NAME`; rollcall also takes `NS/NAME`. This module only
//! parses and resolves names; it does no I/O and knows no cluster.

use std::fmt;
use std::str::FromStr;

/// A DaemonSet as named by the user: a name and, when the text said so, a namespace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DsRef {
    /// The namespace from `NS/NAME`; `None` for `NAME` and `ds/NAME` (then `-n`
    /// or the context's namespace decides).
    pub namespace: Option<String>,
    /// The DaemonSet's name.
    pub name: String,
}

/// Why a DaemonSet reference cannot be parsed or resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DsRefError {
    /// The text has no usable shape.
    #[error(
        "bad DaemonSet {text:?}: expected NAME, NAMESPACE/NAME, ds/NAME, daemonset/NAME or daemonsets.apps/NAME"
    )]
    Malformed {
        /// What was given.
        text: String,
    },
    /// `NS/NAME` and `-n OTHER` disagree.
    #[error("DaemonSet {text:?} is in namespace {named:?}, but -n says {flag:?}")]
    NamespaceConflict {
        /// What was given.
        text: String,
        /// The namespace in the text.
        named: String,
        /// The `-n` namespace.
        flag: String,
    },
}

/// A DaemonSet resolved to its namespace and name: the one identity every
/// part uses (no `namespace/name` strings split apart). Its text form
/// `namespace/name` ([`Target::key`], `Display`) is the cache's key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Target {
    /// `namespace/name`, the cache key.
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// The identity of `ds` as the API server names it.
    pub fn of(ds: &crate::model::DaemonSet) -> Self {
        Self {
            namespace: ds.metadata.namespace.clone().unwrap_or_default(),
            name: ds.metadata.name.clone().unwrap_or_default(),
        }
    }

    /// Parses a cache key `namespace/name` (both parts required).
    pub fn from_key(key: &str) -> Option<Self> {
        let parsed: DsRef = key.parse().ok()?;
        let namespace = parsed.namespace?;
        Some(Self {
            namespace,
            name: parsed.name,
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Whether `prefix` names the DaemonSet resource the way kubectl accepts it:
/// `ds`, `daemonset`, `daemonsets`, each optionally with `.apps` or `.v1.apps`.
fn is_daemonset_type(prefix: &str) -> bool {
    let lower = prefix.to_ascii_lowercase();
    let base = lower
        .strip_suffix(".v1.apps")
        .or_else(|| lower.strip_suffix(".apps"))
        .unwrap_or(&lower);
    matches!(base, "ds" | "daemonset" | "daemonsets")
}

/// A namespace or name as the API allows it: non-empty, no `/`, no blanks or control characters.
fn plausible(part: &str) -> bool {
    !part.is_empty()
        && !part
            .chars()
            .any(|c| c == '/' || c.is_whitespace() || c.is_control())
}

impl FromStr for DsRef {
    type Err = DsRefError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let malformed = || DsRefError::Malformed {
            text: text.to_owned(),
        };
        let (namespace, name) = match text.split_once('/') {
            None => (None, text),
            Some((prefix, name)) if is_daemonset_type(prefix) => (None, name),
            Some((namespace, name)) => (Some(namespace), name),
        };
        if !plausible(name) || namespace.is_some_and(|ns| !plausible(ns)) {
            return Err(malformed());
        }
        Ok(Self {
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        })
    }
}

impl DsRef {
    /// `(namespace, name)`: the text's namespace, else `flag` (`-n`), else
    /// `default` (the context's namespace). A text namespace that differs from
    /// `-n` is an error rather than a silent choice.
    pub fn resolve(&self, flag: Option<&str>, default: &str) -> Result<Target, DsRefError> {
        let namespace = match (&self.namespace, flag) {
            (Some(named), Some(flag)) if named != flag => {
                return Err(DsRefError::NamespaceConflict {
                    text: self.to_string(),
                    named: named.clone(),
                    flag: flag.to_owned(),
                });
            }
            (Some(named), _) => named.clone(),
            (None, Some(flag)) => flag.to_owned(),
            (None, None) => default.to_owned(),
        };
        Ok(Target {
            namespace,
            name: self.name.clone(),
        })
    }
}

impl fmt::Display for DsRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kubectl_form_parses() {
        let cases = [
            ("node-agent", None, "node-agent"),
            ("kube-system/node-agent", Some("kube-system"), "node-agent"),
            ("ds/node-agent", None, "node-agent"),
            ("daemonset/node-agent", None, "node-agent"),
            ("daemonsets/node-agent", None, "node-agent"),
            ("daemonset.apps/node-agent", None, "node-agent"),
            ("daemonsets.apps/node-agent", None, "node-agent"),
            ("daemonsets.v1.apps/node-agent", None, "node-agent"),
            ("DaemonSet/node-agent", None, "node-agent"),
            ("dsx/node-agent", Some("dsx"), "node-agent"),
        ];
        for (text, namespace, name) in cases {
            let parsed: DsRef = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                (parsed.namespace.as_deref(), parsed.name.as_str()),
                (namespace, name),
                "{text}"
            );
        }
    }

    #[test]
    fn malformed_names_are_rejected() {
        for bad in ["", "/x", "ns/", "a/b/c", "ds/", "ds/a/b", "a b", "ns/a\tb"] {
            assert!(bad.parse::<DsRef>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_target_round_trips_through_its_key() {
        let target = Target::from_key("kube-system/agent").unwrap();
        assert_eq!(
            (target.namespace.as_str(), target.name.as_str()),
            ("kube-system", "agent")
        );
        assert_eq!(target.key(), "kube-system/agent");
        for bad in ["agent", "ds/agent", "/agent", "ns/", "a/b/c", ""] {
            assert_eq!(Target::from_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn resolution_prefers_the_text_then_the_flag_then_the_context() {
        let named: DsRef = "kube-system/agent".parse().unwrap();
        let bare: DsRef = "ds/agent".parse().unwrap();
        let pair = |ns: &str| Target {
            namespace: ns.to_owned(),
            name: "agent".to_owned(),
        };
        assert_eq!(named.resolve(None, "default"), Ok(pair("kube-system")));
        assert_eq!(
            named.resolve(Some("kube-system"), "default"),
            Ok(pair("kube-system"))
        );
        assert!(matches!(
            named.resolve(Some("ops"), "default"),
            Err(DsRefError::NamespaceConflict { .. })
        ));
        assert_eq!(bare.resolve(Some("ops"), "default"), Ok(pair("ops")));
        assert_eq!(bare.resolve(None, "default"), Ok(pair("default")));
        assert_eq!(named.to_string(), "kube-system/agent");
        assert_eq!(bare.to_string(), "agent");
    }
}

//! Label and field selectors as the server parses them from `labelSelector`
//! and `fieldSelector` (apimachinery `labels.Parse` / `fields.ParseSelector`
//! grammar: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
//! comma for AND). Matching runs against a stored object's index, so lists
//! never parse object JSON to filter.

use crate::model::Labels;
use crate::sim::store::StoredObject;

/// A selector that does not parse (400 BadRequest).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse requirement: {0}")]
pub struct SelectorError(pub String);

/// One label requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LabelTerm {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector (terms AND'ed; empty matches everything).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    terms: Vec<LabelTerm>,
}

impl LabelSelector {
    /// Parses the `labelSelector` query value.
    pub fn parse(text: &str) -> Result<LabelSelector, SelectorError> {
        let mut terms = Vec::new();
        for part in split_outside_parens(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            terms.push(parse_label_term(part)?);
        }
        Ok(LabelSelector { terms })
    }

    /// Whether the labels satisfy every term.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.terms.iter().all(|term| match term {
            LabelTerm::Equals(k, v) => labels.get(k) == Some(v.as_str()),
            LabelTerm::NotEquals(k, v) => labels.get(k) != Some(v.as_str()),
            LabelTerm::In(k, vs) => labels.get(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            LabelTerm::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.iter().any(|v| v == l)),
            LabelTerm::Exists(k) => labels.get(k).is_some(),
            LabelTerm::DoesNotExist(k) => labels.get(k).is_none(),
        })
    }

    /// Whether it has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// Splits on commas that are not inside parentheses.
fn split_outside_parens(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_label_term(part: &str) -> Result<LabelTerm, SelectorError> {
    let bad = || SelectorError(part.to_owned());
    if let Some(key) = part.strip_prefix('!') {
        return valid_key(key.trim())
            .map(LabelTerm::DoesNotExist)
            .ok_or_else(bad);
    }
    for (op, is_in) in [(" notin ", false), (" in ", true)] {
        if let Some((key, rest)) = part.split_once(op) {
            let values = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(bad)?
                .split(',')
                .map(|v| v.trim().to_owned())
                .collect::<Vec<_>>();
            if values.iter().any(|v| !valid_value(v)) {
                return Err(bad());
            }
            let key = valid_key(key.trim()).ok_or_else(bad)?;
            return Ok(if is_in {
                LabelTerm::In(key, values)
            } else {
                LabelTerm::NotIn(key, values)
            });
        }
    }
    for (op, make) in [
        (
            "!=",
            LabelTerm::NotEquals as fn(String, String) -> LabelTerm,
        ),
        ("==", LabelTerm::Equals),
        ("=", LabelTerm::Equals),
    ] {
        if let Some((key, value)) = part.split_once(op) {
            let value = value.trim();
            if !valid_value(value) {
                return Err(bad());
            }
            return valid_key(key.trim())
                .map(|k| make(k, value.to_owned()))
                .ok_or_else(bad);
        }
    }
    valid_key(part).map(LabelTerm::Exists).ok_or_else(bad)
}

/// A qualified label key: optional DNS prefix and `/`, then a name of
/// alphanumerics, `-`, `_`, `.` (at most 63 characters).
fn valid_key(key: &str) -> Option<String> {
    let name = key.rsplit_once('/').map_or(key, |(_, name)| name);
    let ok = !name.is_empty()
        && name.len() <= 63
        && key.len() <= 316
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    ok.then(|| key.to_owned())
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// A parsed field selector: `field=value` / `field!=value` terms AND'ed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query value.
    pub fn parse(text: &str) -> Result<FieldSelector, SelectorError> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(SelectorError(part.to_owned()));
            };
            terms.push((field.trim().to_owned(), equal, value.trim().to_owned()));
        }
        Ok(FieldSelector { terms })
    }

    /// The first field this kind cannot select on, if any (upstream answers
    /// such a selector with 400).
    pub fn unsupported_field(&self, supported: &[&str]) -> Option<&str> {
        self.terms
            .iter()
            .map(|(field, _, _)| field.as_str())
            .find(|field| !supported.contains(field))
    }

    /// Whether the object's indexed fields satisfy every term.
    pub fn matches(&self, object: &StoredObject) -> bool {
        self.terms.iter().all(|(field, equal, value)| {
            let found = object.field(field).unwrap_or_default();
            (found == value) == *equal
        })
    }

    /// Whether it has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().copied().collect()
    }

    #[test]
    fn label_selector_forms() {
        let l = labels(&[
            ("app", "agent"),
            ("tier", "log"),
            ("kubernetes.io/os", "linux"),
        ]);
        let cases = [
            ("", true),
            ("app=agent", true),
            ("app==agent", true),
            ("app!=agent", false),
            ("app=agent,tier=log", true),
            ("app=agent,tier=web", false),
            ("tier in (web,log)", true),
            ("tier in (web, db)", false),
            ("tier notin (web,db)", true),
            ("zone notin (a)", true),
            ("app", true),
            ("!app", false),
            ("!zone", true),
            ("kubernetes.io/os=linux,app in (agent),!zone", true),
        ];
        for (text, expected) in cases {
            let selector = LabelSelector::parse(text).unwrap();
            assert_eq!(selector.matches(&l), expected, "{text}");
        }
    }

    #[test]
    fn bad_label_selectors_are_errors() {
        for text in ["app in web", "a b", "app=(x)", "=x", "app in (a", "!"] {
            assert!(LabelSelector::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn field_selector_terms() {
        use crate::sim::resources::ResourceKind;
        let pod = serde_json::json!({"metadata":{"name":"p","namespace":"ns"},
            "spec":{"nodeName":"node-a"},"status":{"phase":"Running"}});
        let stored = StoredObject::from_value(ResourceKind::Pod, &pod).unwrap();
        let cases = [
            (
                "spec.nodeName=node-a,status.phase!=Succeeded,status.phase!=Failed",
                true,
            ),
            ("metadata.name==p", true),
            ("metadata.namespace=other", false),
            ("spec.nodeName=", false),
        ];
        for (text, expected) in cases {
            assert_eq!(
                FieldSelector::parse(text).unwrap().matches(&stored),
                expected,
                "{text}"
            );
        }
        let bogus = FieldSelector::parse("spec.bogus=1").unwrap();
        let supported = StoredObject::supported_fields(ResourceKind::Pod);
        assert_eq!(bogus.unsupported_field(&supported), Some("spec.bogus"));
        assert!(FieldSelector::parse("nonsense").is_err());
    }
}

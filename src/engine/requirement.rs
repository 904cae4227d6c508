//! One label requirement (`key op values`) with the upstream validation and
//! matching rules of `k8s.io/apimachinery/pkg/labels` (`NewRequirement`,
//! `Requirement.Matches`), shared by label selectors and node affinity.
//!
//! Owns key/value validation and matching only; it knows nothing of selectors'
//! string syntax or of nodes.

use std::fmt;

use crate::model::LabelSet;

/// A requirement operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key=value` / `key==value`.
    Equals,
    /// `key!=value`.
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)`.
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>n` (integer label values only).
    Gt,
    /// `key<n` (integer label values only).
    Lt,
}

/// Why a requirement is invalid (upstream rejects it, so it matches nothing).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequirementError {
    /// The key is not a qualified name.
    #[error("invalid label key {key:?}: {why}")]
    InvalidKey {
        /// The offending key.
        key: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A value is not a valid label value.
    #[error("invalid label value {value:?}: {why}")]
    InvalidValue {
        /// The offending value.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The operator takes a different number of values.
    #[error("operator {operator} needs {needs}, got {got}")]
    ValueCount {
        /// The operator.
        operator: String,
        /// What it needs, in words.
        needs: &'static str,
        /// How many values were given.
        got: usize,
    },
    /// `Gt`/`Lt` with a value that is not a base-10 int64.
    #[error("operator {operator} needs an integer value, got {value:?}")]
    NotAnInteger {
        /// The operator.
        operator: String,
        /// The value.
        value: String,
    },
}

/// A validated requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Validates like upstream `labels.NewRequirement`: a qualified-name key,
    /// label-syntax values, one value for `=`/`!=`/`Gt`/`Lt`, at least one for
    /// `In`/`NotIn`, none for `Exists`/`DoesNotExist`, integers for `Gt`/`Lt`.
    pub fn new(
        key: &str,
        operator: Operator,
        values: Vec<String>,
    ) -> Result<Self, RequirementError> {
        validate_key(key)?;
        let count_error = |needs| RequirementError::ValueCount {
            operator: operator.to_string(),
            needs,
            got: values.len(),
        };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(count_error("at least one value"));
            }
            Operator::Equals | Operator::NotEquals | Operator::Gt | Operator::Lt
                if values.len() != 1 =>
            {
                return Err(count_error("exactly one value"));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(count_error("no values"));
            }
            _ => {}
        }
        for value in &values {
            if matches!(operator, Operator::Gt | Operator::Lt) && parse_int(value).is_none() {
                return Err(RequirementError::NotAnInteger {
                    operator: operator.to_string(),
                    value: value.clone(),
                });
            }
            validate_value(value)?;
        }
        Ok(Self {
            key: key.to_owned(),
            operator,
            values,
        })
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, in the order given.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether a label set satisfies the requirement (upstream `Requirement.Matches`):
    /// `NotIn`/`!=` hold when the label is missing; `Gt`/`Lt` need the label to be
    /// an integer.
    pub fn matches<L: LabelSet + ?Sized>(&self, labels: Option<&L>) -> bool {
        let value = labels.and_then(|l| l.label(&self.key));
        let listed = |v: &str| self.values.iter().any(|w| w == v);
        match self.operator {
            Operator::Equals | Operator::In => value.is_some_and(listed),
            Operator::NotEquals | Operator::NotIn => !value.is_some_and(listed),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt | Operator::Lt => self.compare(value),
        }
    }

    fn compare(&self, value: Option<&str>) -> bool {
        let (Some(have), Some(want)) = (
            value.and_then(parse_int),
            self.values.first().and_then(|v| parse_int(v)),
        ) else {
            return false;
        };
        match self.operator {
            Operator::Gt => have > want,
            _ => have < want,
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Equals => "=",
            Self::NotEquals => "!=",
            Self::In => "In",
            Self::NotIn => "NotIn",
            Self::Exists => "Exists",
            Self::DoesNotExist => "DoesNotExist",
            Self::Gt => "Gt",
            Self::Lt => "Lt",
        })
    }
}

/// A base-10 int64 as Go's `strconv.ParseInt(s, 10, 64)` reads it (optional sign,
/// digits only).
pub fn parse_int(text: &str) -> Option<i64> {
    text.parse().ok()
}

/// Upstream `IsQualifiedName`: `[prefix/]name`, the prefix a DNS-1123 subdomain,
/// the name at most 63 characters of `[A-Za-z0-9_.-]` starting and ending
/// alphanumeric.
pub fn validate_key(key: &str) -> Result<(), RequirementError> {
    let invalid = |why| RequirementError::InvalidKey {
        key: key.to_owned(),
        why,
    };
    let name = match key.split_once('/') {
        None => key,
        Some((prefix, name)) => {
            if name.contains('/') {
                return Err(invalid("at most one '/' is allowed"));
            }
            if !is_dns1123_subdomain(prefix) {
                return Err(invalid("the prefix must be a DNS-1123 subdomain"));
            }
            name
        }
    };
    if name.is_empty() {
        return Err(invalid("the name part must not be empty"));
    }
    if name.len() > 63 {
        return Err(invalid("the name part must be at most 63 characters"));
    }
    if !is_label_token(name) {
        return Err(invalid(
            "the name part must be alphanumeric, '-', '_' or '.', starting and ending alphanumeric",
        ));
    }
    Ok(())
}

/// Upstream `IsValidLabelValue`: empty, or at most 63 characters of
/// `[A-Za-z0-9_.-]` starting and ending alphanumeric.
pub fn validate_value(value: &str) -> Result<(), RequirementError> {
    let invalid = |why| RequirementError::InvalidValue {
        value: value.to_owned(),
        why,
    };
    if value.len() > 63 {
        return Err(invalid("must be at most 63 characters"));
    }
    if !value.is_empty() && !is_label_token(value) {
        return Err(invalid(
            "must be alphanumeric, '-', '_' or '.', starting and ending alphanumeric",
        ));
    }
    Ok(())
}

fn is_label_token(text: &str) -> bool {
    let bytes = text.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn is_dns1123_subdomain(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|part| {
            let bytes = part.as_bytes();
            matches!(bytes.first(), Some(b) if b.is_ascii_lowercase() || b.is_ascii_digit())
                && matches!(bytes.last(), Some(b) if b.is_ascii_lowercase() || b.is_ascii_digit())
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        })
}

#[cfg(test)]
mod tests;

//! Label selectors: the API's `LabelSelector` (matchLabels + matchExpressions)
//! and kubectl's selector strings (`pool=gpu,zone!=a,tier in (x,y),!legacy`).
//!
//! Follows `metav1.LabelSelectorAsSelector` and `labels.Parse`; invalid selectors
//! match nothing, as upstream callers treat the conversion error. Pure; knows
//! nothing of nodes or DaemonSets.

use std::fmt;

use crate::model::LabelSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::requirement::{Operator, Requirement, RequirementError};

/// Whether `labels` satisfy an API `LabelSelector`: every matchLabels pair and
/// every matchExpression (`In`, `NotIn`, `Exists`, `DoesNotExist`) must hold;
/// an empty selector matches everything. A selector upstream would reject
/// (bad key, unknown operator, `In` without values) matches nothing.
pub fn label_selector_matches<L: LabelSet + ?Sized>(
    selector: &LabelSelector,
    labels: Option<&L>,
) -> bool {
    match label_selector_requirements(selector) {
        Ok(requirements) => requirements.iter().all(|r| r.matches(labels)),
        Err(_) => false,
    }
}

/// The requirements of an API `LabelSelector`, validated as upstream does.
pub fn label_selector_requirements(
    selector: &LabelSelector,
) -> Result<Vec<Requirement>, SelectorError> {
    let mut requirements = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        requirements.push(Requirement::new(
            key,
            Operator::Equals,
            vec![value.clone()],
        )?);
    }
    for expression in selector.match_expressions.iter().flatten() {
        let operator = match expression.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => return Err(SelectorError::UnknownOperator(other.to_owned())),
        };
        let values = expression.values.clone().unwrap_or_default();
        requirements.push(Requirement::new(&expression.key, operator, values)?);
    }
    Ok(requirements)
}

/// Why a selector is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A requirement breaks the label rules.
    #[error(transparent)]
    Requirement(#[from] RequirementError),
    /// A matchExpressions operator that label selectors do not know.
    #[error("unknown label selector operator {0:?}")]
    UnknownOperator(String),
    /// The selector string does not parse.
    #[error("cannot parse selector {text:?} at character {at}: {why}")]
    Syntax {
        /// The whole selector string.
        text: String,
        /// Zero-based character offset of the problem.
        at: usize,
        /// What was expected.
        why: String,
    },
}

/// A kubectl-style selector string, parsed: requirements joined by commas, all
/// of which must hold. The empty selector matches everything.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// Parses `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`,
    /// `key`, `!key`, `key>n`, `key<n`, separated by commas (upstream `labels.Parse`).
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let tokens = lex(text);
        let mut parser = Parser {
            text,
            tokens: &tokens,
            next: 0,
        };
        let mut requirements = Vec::new();
        if tokens.is_empty() {
            return Ok(Self { requirements });
        }
        loop {
            requirements.push(parser.requirement()?);
            match parser.advance() {
                None => break,
                Some((_, Token::Comma)) => {}
                Some((at, token)) => {
                    return Err(parser.error(at, &format!("expected ',' but found {token}")));
                }
            }
        }
        Ok(Self { requirements })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches<L: LabelSet + ?Sized>(&self, labels: Option<&L>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// The parsed requirements, in order.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }
}

impl std::str::FromStr for Selector {
    type Err = SelectorError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, requirement) in self.requirements.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write_requirement(f, requirement)?;
        }
        Ok(())
    }
}

fn write_requirement(f: &mut fmt::Formatter<'_>, requirement: &Requirement) -> fmt::Result {
    let key = requirement.key();
    let values = requirement.values().join(",");
    match requirement.operator() {
        Operator::Equals => write!(f, "{key}={values}"),
        Operator::NotEquals => write!(f, "{key}!={values}"),
        Operator::In => write!(f, "{key} in ({values})"),
        Operator::NotIn => write!(f, "{key} notin ({values})"),
        Operator::Exists => write!(f, "{key}"),
        Operator::DoesNotExist => write!(f, "!{key}"),
        Operator::Gt => write!(f, "{key}>{values}"),
        Operator::Lt => write!(f, "{key}<{values}"),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Equals,
    DoubleEquals,
    NotEquals,
    Bang,
    Greater,
    Less,
    Open,
    Close,
    Comma,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Word(word) => write!(f, "{word:?}"),
            Self::Equals => f.write_str("'='"),
            Self::DoubleEquals => f.write_str("'=='"),
            Self::NotEquals => f.write_str("'!='"),
            Self::Bang => f.write_str("'!'"),
            Self::Greater => f.write_str("'>'"),
            Self::Less => f.write_str("'<'"),
            Self::Open => f.write_str("'('"),
            Self::Close => f.write_str("')'"),
            Self::Comma => f.write_str("','"),
        }
    }
}

fn is_special(c: char) -> bool {
    c.is_whitespace() || matches!(c, '=' | '!' | '<' | '>' | '(' | ')' | ',')
}

fn lex(text: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    while let Some(&c) = chars.get(index) {
        let next = chars.get(index + 1).copied();
        let (token, width) = match (c, next) {
            (c, _) if c.is_whitespace() => {
                index += 1;
                continue;
            }
            ('=', Some('=')) => (Token::DoubleEquals, 2),
            ('=', _) => (Token::Equals, 1),
            ('!', Some('=')) => (Token::NotEquals, 2),
            ('!', _) => (Token::Bang, 1),
            ('>', _) => (Token::Greater, 1),
            ('<', _) => (Token::Less, 1),
            ('(', _) => (Token::Open, 1),
            (')', _) => (Token::Close, 1),
            (',', _) => (Token::Comma, 1),
            _ => {
                let word: String = chars[index..]
                    .iter()
                    .take_while(|c| !is_special(**c))
                    .collect();
                let width = word.chars().count();
                (Token::Word(word), width)
            }
        };
        tokens.push((index, token));
        index += width;
    }
    tokens
}

struct Parser<'a> {
    text: &'a str,
    tokens: &'a [(usize, Token)],
    next: usize,
}

impl Parser<'_> {
    fn error(&self, at: usize, why: &str) -> SelectorError {
        SelectorError::Syntax {
            text: self.text.to_owned(),
            at,
            why: why.to_owned(),
        }
    }

    fn end(&self) -> usize {
        self.text.chars().count()
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next).map(|(_, t)| t)
    }

    fn advance(&mut self) -> Option<(usize, Token)> {
        let token = self.tokens.get(self.next).cloned();
        self.next += 1;
        token
    }

    fn word(&mut self, what: &str) -> Result<String, SelectorError> {
        match self.advance() {
            Some((_, Token::Word(word))) => Ok(word),
            Some((at, token)) => Err(self.error(at, &format!("expected {what} but found {token}"))),
            None => Err(self.error(self.end(), &format!("expected {what}"))),
        }
    }

    /// A value after `=`, `==` or `!=`: may be empty (`key=`), as upstream allows.
    fn optional_value(&mut self) -> String {
        if let Some(Token::Word(word)) = self.peek() {
            let word = word.clone();
            self.next += 1;
            word
        } else {
            String::new()
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        if self.peek() == Some(&Token::Bang) {
            self.next += 1;
            let key = self.word("a label key after '!'")?;
            return Ok(Requirement::new(&key, Operator::DoesNotExist, Vec::new())?);
        }
        let key = self.word("a label key")?;
        let (operator, values) = match self.peek().cloned() {
            None | Some(Token::Comma) => (Operator::Exists, Vec::new()),
            Some(token) => {
                self.next += 1;
                match token {
                    Token::Equals | Token::DoubleEquals => {
                        (Operator::Equals, vec![self.optional_value()])
                    }
                    Token::NotEquals => (Operator::NotEquals, vec![self.optional_value()]),
                    Token::Greater => (Operator::Gt, vec![self.word("an integer after '>'")?]),
                    Token::Less => (Operator::Lt, vec![self.word("an integer after '<'")?]),
                    Token::Word(word) if word == "in" => (Operator::In, self.value_list()?),
                    Token::Word(word) if word == "notin" => (Operator::NotIn, self.value_list()?),
                    other => {
                        let at = self.tokens.get(self.next - 1).map_or(0, |(at, _)| *at);
                        return Err(self.error(
                            at,
                            &format!("expected an operator after {key:?} but found {other}"),
                        ));
                    }
                }
            }
        };
        Ok(Requirement::new(&key, operator, values)?)
    }

    /// `( v1, v2, ... )`; empty items are empty values, as upstream reads them.
    fn value_list(&mut self) -> Result<Vec<String>, SelectorError> {
        match self.advance() {
            Some((_, Token::Open)) => {}
            Some((at, token)) => {
                return Err(self.error(at, &format!("expected '(' but found {token}")));
            }
            None => return Err(self.error(self.end(), "expected '('")),
        }
        let mut values = Vec::new();
        if self.peek() == Some(&Token::Close) {
            self.next += 1;
            return Ok(values);
        }
        loop {
            values.push(self.optional_value());
            match self.advance() {
                Some((_, Token::Comma)) => {}
                Some((_, Token::Close)) => return Ok(values),
                Some((at, token)) => {
                    return Err(self.error(at, &format!("expected ',' or ')' but found {token}")));
                }
                None => return Err(self.error(self.end(), "expected ')'")),
            }
        }
    }
}

#[cfg(test)]
mod tests;

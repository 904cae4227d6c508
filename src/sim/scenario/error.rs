//! Scenario errors: each names the file and, where known, the line.

use std::fmt;

use crate::input::limits::{InputError, shorten};

/// Longest message kept in a scenario error: messages quote values from the
/// file, and a 10 MB value must not make a 10 MB error.
const MAX_MESSAGE_CHARS: usize = 512;

/// A scenario that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The YAML does not parse or does not fit the format.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// The file (or built-in scenario) name.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The YAML parses but says something impossible (unknown pool, ...).
    #[error("{file}{}: {message}", LineSuffix(*line))]
    Invalid {
        /// The file (or built-in scenario) name.
        file: String,
        /// 1-based line, when it could be found.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// The file cannot be read.
    #[error("cannot read scenario file {file}")]
    Read {
        /// The path.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is a device, too large or not text.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Neither a built-in scenario nor a file.
    #[error("no scenario called {name:?} (built-in: {known}; or give a file path)")]
    UnknownName {
        /// What was asked for.
        name: String,
        /// The built-in names.
        known: String,
    },
}

struct LineSuffix(Option<usize>);

impl fmt::Display for LineSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(line) => write!(f, ":{line}"),
            None => Ok(()),
        }
    }
}

impl ScenarioError {
    /// Wraps a YAML error, keeping its location.
    pub(super) fn syntax(file: &str, err: &serde_norway::Error) -> ScenarioError {
        let (line, column) = err
            .location()
            .map_or((1, 1), |location| (location.line(), location.column()));
        // serde_norway appends " at line L column C"; the prefix already says it.
        let text = err.to_string();
        let message = shorten(
            text.rsplit_once(" at line ")
                .map_or(text.as_str(), |(head, _)| head),
            MAX_MESSAGE_CHARS,
        )
        .into_owned();
        ScenarioError::Syntax {
            file: file.to_owned(),
            line,
            column,
            message,
        }
    }
}

/// A semantic problem found by validation, before the file name is known.
#[derive(Debug, PartialEq)]
pub(super) struct Problem {
    pub line: Option<usize>,
    pub message: String,
}

impl Problem {
    pub(super) fn in_file(self, file: &str) -> ScenarioError {
        ScenarioError::Invalid {
            file: file.to_owned(),
            line: self.line,
            message: shorten(&self.message, MAX_MESSAGE_CHARS).into_owned(),
        }
    }
}

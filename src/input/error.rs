//! What can go wrong reading input, and the warnings a load gathers: the
//! error and warning values with their words, and the conversions from the
//! parsers' errors. Pure data; never prints.

use std::fmt;

/// Something the loader skipped or replaced; not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotWarning {
    /// The file (or `<stdin>`) it came from.
    pub source_name: String,
    /// What happened, in words.
    pub message: String,
}

impl fmt::Display for SnapshotWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.source_name.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.source_name, self.message)
        }
    }
}

/// Why a snapshot could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file (or stdin) could not be read.
    #[error("cannot read {source_name}: {error}")]
    Read {
        /// The file.
        source_name: String,
        /// The I/O error.
        #[source]
        error: std::io::Error,
    },
    /// The text is not valid JSON or YAML.
    #[error("{source_name}{}: invalid {format}: {message}", position(*line, *column))]
    Syntax {
        /// The file.
        source_name: String,
        /// `JSON` or `YAML`.
        format: &'static str,
        /// 1-based line, when the parser reports it.
        line: Option<usize>,
        /// 1-based column, when the parser reports it.
        column: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// Nothing of a kind rollcall reads was found.
    #[error("no Node, Pod, DaemonSet, ControllerRevision or Event in {inputs}: {found}")]
    Empty {
        /// The inputs as given.
        inputs: String,
        /// What was there instead, in words.
        found: String,
    },
    /// Objects were read, but no DaemonSet among them.
    #[error("no DaemonSets found in {inputs} ({found})")]
    NoDaemonSets {
        /// The inputs as given.
        inputs: String,
        /// `N objects of kinds …`.
        found: String,
    },
    /// An input was refused: not a file rollcall reads, hostile, too large
    /// or too deep.
    #[error("{source_name}: {message}")]
    Refused {
        /// The file, archive, or the entry in it.
        source_name: String,
        /// Which bound was hit, or what is wrong with it.
        message: String,
    },
}

fn position(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(": line {line}, column {column}"),
        (Some(line), None) => format!(": line {line}"),
        _ => String::new(),
    }
}

/// A [`SnapshotError::Read`].
pub(crate) fn read_error(source_name: &str, error: std::io::Error) -> SnapshotError {
    SnapshotError::Read {
        source_name: source_name.to_owned(),
        error,
    }
}

/// A [`SnapshotError::Refused`].
pub(crate) fn refused(source_name: &str, message: impl Into<String>) -> SnapshotError {
    SnapshotError::Refused {
        source_name: source_name.to_owned(),
        message: message.into(),
    }
}

/// serde_json's error, with the position as fields rather than words.
pub(crate) fn json_error(source_name: &str, error: serde_json::Error) -> SnapshotError {
    if error.is_io() {
        return read_error(source_name, error.into());
    }
    let (line, column) = (error.line(), error.column());
    let message = error.to_string();
    let suffix = format!(" at line {line} column {column}");
    SnapshotError::Syntax {
        source_name: source_name.to_owned(),
        format: "JSON",
        line: (line > 0).then_some(line),
        column: (line > 0).then_some(column),
        message: message.strip_suffix(&suffix).unwrap_or(&message).to_owned(),
    }
}

/// serde_norway's error, with the position as fields rather than words.
pub(crate) fn yaml_error(source_name: &str, error: &serde_norway::Error) -> SnapshotError {
    let location = error.location();
    let message = error.to_string();
    let message = match &location {
        Some(at) => {
            let suffix = format!(" at line {} column {}", at.line(), at.column());
            message.strip_suffix(&suffix).unwrap_or(&message).to_owned()
        }
        None => message,
    };
    SnapshotError::Syntax {
        source_name: source_name.to_owned(),
        format: "YAML",
        line: location.as_ref().map(serde_norway::Location::line),
        column: location.as_ref().map(serde_norway::Location::column),
        message,
    }
}

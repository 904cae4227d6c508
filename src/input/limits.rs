//! Bounded reading of input files (rosters, scenarios; usable by any reader):
//! a file is read up to a size limit and refused past it with an error naming
//! the limit, and devices (`/dev/zero`, `/dev/urandom`), sockets and
//! directories are refused before any byte is read. Pipes and FIFOs
//! (`<(cmd)`, `/dev/stdin` from a pipe) are read, bounded by the same limit.
//!
//! Also the limits on what the input may describe (node counts), so every
//! reader states its bounds in one place. Does nothing but read.

use std::io::Read as _;
use std::path::Path;

/// Largest roster file: a 65,000-node roster is about 6 MB.
pub const MAX_ROSTER_BYTES: u64 = 16 << 20;
/// Most nodes in a roster (the largest clusters have 65,000 nodes).
pub const MAX_ROSTER_NODES: usize = 100_000;
/// Largest kubeconfig file: real ones (hundreds of contexts) are well under 1 MB.
pub const MAX_KUBECONFIG_BYTES: u64 = 16 << 20;
/// Largest scenario file: the built-in ones are a few KB.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;
/// Most nodes a scenario or `--nodes` may create (pools plus joins).
pub const MAX_SIM_NODES: usize = 100_000;
/// Deepest nesting of YAML collections in a scenario (the format needs < 10).
pub const MAX_SCENARIO_DEPTH: usize = 64;

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file or pipe (a device, socket or directory).
    #[error("cannot read {path}: it is {kind}, not a regular file")]
    NotAFile {
        /// The path.
        path: String,
        /// `a character device`, `a directory`, ...
        kind: &'static str,
    },
    /// Longer than the limit.
    #[error("{path} is larger than the {} limit for {what}", human_bytes(*limit))]
    TooLarge {
        /// The path.
        path: String,
        /// What the file was read as (`a roster`, `a scenario`).
        what: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{path} is not UTF-8 text")]
    NotText {
        /// The path.
        path: String,
    },
}

/// Reads `path` as UTF-8 text of at most `limit` bytes; `what` names the
/// input in the error (`a roster`). Refuses devices, sockets and directories.
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, InputError> {
    let bytes = read_bytes(path, what, limit)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: path.display().to_string(),
    })
}

/// Reads `path` as bytes, at most `limit` of them; see [`read_text`].
pub fn read_bytes(path: &Path, what: &'static str, limit: u64) -> Result<Vec<u8>, InputError> {
    let label = || path.display().to_string();
    let io = |source| InputError::Io {
        path: label(),
        source,
    };
    // Check the kind before opening: opening a FIFO blocks until a writer
    // comes, which is expected; opening a device is not.
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if let Some(kind) = refused_kind(kind) {
        return Err(InputError::NotAFile {
            path: label(),
            kind,
        });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    read_bounded(file, limit)
        .map_err(io)?
        .ok_or_else(|| InputError::TooLarge {
            path: label(),
            what,
            limit,
        })
}

/// Checks, without reading it, that `path` may be handed to a reader that has
/// no bound of its own (kube's kubeconfig loader): a regular file of at most
/// `limit` bytes, or a pipe. Devices, sockets and directories are refused.
pub fn check_file(path: &Path, what: &'static str, limit: u64) -> Result<(), InputError> {
    let label = || path.display().to_string();
    let metadata = std::fs::metadata(path).map_err(|source| InputError::Io {
        path: label(),
        source,
    })?;
    if let Some(kind) = refused_kind(metadata.file_type()) {
        return Err(InputError::NotAFile {
            path: label(),
            kind,
        });
    }
    if metadata.is_file() && metadata.len() > limit {
        return Err(InputError::TooLarge {
            path: label(),
            what,
            limit,
        });
    }
    Ok(())
}

/// Reads all of `reader` if it holds at most `limit` bytes, else `None`
/// (having read `limit + 1`, never more).
pub fn read_bounded(reader: impl std::io::Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Cuts `text` to at most `max_chars` characters, marking the cut with `…`,
/// for echoing untrusted values in error messages.
pub fn shorten(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..cut])),
    }
}

#[cfg(unix)]
pub(crate) fn refused_kind(kind: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt as _;
    if kind.is_file() || kind.is_fifo() {
        None
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_dir() {
        Some("a directory")
    } else {
        Some("not a file")
    }
}

#[cfg(not(unix))]
pub(crate) fn refused_kind(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else {
        Some("not a file")
    }
}

/// `32 MiB`, `1 MiB`, `512 KiB`, `100 bytes`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_are_read_and_large_ones_refused_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.json");
        std::fs::write(&path, "x".repeat(2048)).unwrap();
        assert_eq!(read_text(&path, "a test", 2048).unwrap().len(), 2048);
        let err = read_text(&path, "a test", 1024).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} is larger than the 1 KiB limit for a test",
                path.display()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_directories_are_refused_before_reading() {
        let err = read_text(Path::new("/dev/zero"), "a test", 1 << 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read /dev/zero: it is a character device, not a regular file"
        );
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_text(dir.path(), "a test", 10),
            Err(InputError::NotAFile {
                kind: "a directory",
                ..
            })
        ));
    }

    #[test]
    fn an_endless_reader_stops_past_the_limit() {
        let endless = std::io::repeat(0);
        assert_eq!(read_bounded(endless, 4096).unwrap(), None);
        assert_eq!(
            read_bounded(&b"abc"[..], 3).unwrap().as_deref(),
            Some(&b"abc"[..])
        );
    }

    #[test]
    fn shorten_marks_the_cut() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("ノードノード", 2), "ノー…");
    }

    #[test]
    fn not_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_text(&path, "a test", 10),
            Err(InputError::NotText { .. })
        ));
    }
}

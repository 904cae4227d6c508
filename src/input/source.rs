//! One `-f` argument, opened for what it can be: stdin (`-`, `/dev/stdin`),
//! a directory, a regular file or a FIFO (`<(cmd)`). Every other special
//! file (`/dev/zero`, `/dev/urandom`, a socket) is refused by its kind,
//! before a byte is read: a device has no end.
//!
//! Also the first look at a stream: bytes that cannot start any format
//! rollcall reads (JSON, YAML, tar, zip, gzip, xz) are refused after the
//! first few KiB, not after reading a gigabyte of them. Does no parsing.

use std::fs::File;
use std::path::Path;

use crate::input::error::{SnapshotError, read_error, refused};
use crate::input::limits::refused_kind;

/// The source name used for `-f -`.
pub const STDIN_NAME: &str = "<stdin>";

/// The names that mean this process's stdin.
const STDIN_PATHS: [&str; 4] = ["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// What a `-f` argument names.
#[derive(Debug)]
pub enum Opened {
    /// This process's stdin.
    Stdin,
    /// A directory, to walk.
    Directory,
    /// A regular file (`size` known) or a FIFO (`size` unknown), open.
    File {
        /// The open file.
        file: File,
        /// Its length, for a regular file.
        size: Option<u64>,
    },
}

/// Opens `path` as an input, refusing special files other than FIFOs.
/// Opening a FIFO waits for its writer, as `cat` does.
pub fn open(path: &Path, name: &str) -> Result<Opened, SnapshotError> {
    if path.to_str().is_some_and(|p| STDIN_PATHS.contains(&p)) {
        return Ok(Opened::Stdin);
    }
    let metadata = std::fs::metadata(path).map_err(|e| read_error(name, e))?;
    if metadata.is_dir() {
        return Ok(Opened::Directory);
    }
    if let Some(kind) = refused_kind(metadata.file_type()) {
        return Err(refused(
            name,
            format!("not a regular file, FIFO or stdin (it is {kind})"),
        ));
    }
    let file = File::open(path).map_err(|e| read_error(name, e))?;
    let size = metadata.is_file().then_some(metadata.len());
    Ok(Opened::File { file, size })
}

/// How many bytes of a stream that starts with NUL bytes are looked at to
/// tell an empty tar archive (10 KiB of zeros, as GNU tar writes it) from
/// something that only starts like one.
pub const ZERO_PROBE: u64 = 16 << 10;

/// What the first bytes of a stream that is neither an archive nor
/// compressed say about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// It may be JSON or YAML: read it.
    Text,
    /// Only NUL bytes so far (an empty tar archive, or not input at all):
    /// look at up to [`ZERO_PROBE`] bytes before deciding.
    Zeros,
    /// It cannot be anything rollcall reads; the words say what it is.
    Refused(String),
}

/// Classifies the first bytes (at least a few hundred, when the stream has
/// them) of a stream that is not an archive or a compressed stream.
pub fn start(head: &[u8]) -> Start {
    if !head.is_empty() && head.iter().all(|&b| b == 0) {
        return Start::Zeros;
    }
    if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        return Start::Refused(
            "UTF-16 text; rollcall reads UTF-8 (PowerShell: `kubectl ... | Out-File -Encoding utf8`)"
                .to_owned(),
        );
    }
    for (magic, what, undo) in [
        (&b"BZh"[..], "bzip2", "bunzip2"),
        (&[0x28, 0xb5, 0x2f, 0xfd][..], "zstd", "zstd -d"),
        (&b"7z\xbc\xaf\x27\x1c"[..], "7-Zip", "7z x"),
    ] {
        if head.starts_with(magic) {
            return Start::Refused(format!(
                "{what}-compressed; rollcall reads gzip, xz, tar and zip (decompress it first: `{undo}`)"
            ));
        }
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    match text.iter().copied().find(|b| !b.is_ascii_whitespace()) {
        Some(byte) if byte < 0x20 || byte == 0x7f => Start::Refused(format!(
            "starts with the byte 0x{byte:02x}, which cannot start JSON, YAML, tar, zip, gzip or xz"
        )),
        _ => Start::Text,
    }
}

/// The words for a stream of NUL bytes longer than an empty archive.
pub fn zeros_refused() -> String {
    format!(
        "starts with more than {} KiB of NUL bytes: not JSON, YAML, tar, zip, gzip or xz",
        ZERO_PROBE >> 10
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_decide_whether_a_stream_can_be_input() {
        let cases: [(&str, &[u8], Option<&str>); 10] = [
            ("json", b"  {\"kind\":\"List\"}", None),
            ("yaml", b"apiVersion: v1\nkind: Node\n", None),
            ("yaml after a bom", b"\xef\xbb\xbfkind: Node", None),
            ("empty", b"", None),
            ("only whitespace", b" \n\t ", None),
            ("nul led", b"\0{\"kind\":\"Node\"}", Some("0x00")),
            ("control led", b"\x01\x02", Some("0x01")),
            ("utf-16", b"\xff\xfe{\0", Some("UTF-16")),
            ("zstd", b"\x28\xb5\x2f\xfd\x00", Some("zstd -d")),
            ("bzip2", b"BZh91AY&SY", Some("bunzip2")),
        ];
        for (name, head, refused) in cases {
            match (start(head), refused) {
                (Start::Text, None) => {}
                (Start::Refused(message), Some(word)) => {
                    assert!(message.contains(word), "{name}: {message}");
                }
                (other, _) => panic!("{name}: {other:?}"),
            }
        }
        assert_eq!(start(&[0; 512]), Start::Zeros);
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_by_kind_and_stdin_by_name() {
        let err = open(Path::new("/dev/zero"), "/dev/zero").unwrap_err();
        assert_eq!(
            err.to_string(),
            "/dev/zero: not a regular file, FIFO or stdin (it is a character device)"
        );
        for name in ["-", "/dev/stdin"] {
            assert!(matches!(open(Path::new(name), name), Ok(Opened::Stdin)));
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(open(dir.path(), "dir"), Ok(Opened::Directory)));
    }
}

//! How Kubernetes frames protobuf (k8s.io/apimachinery
//! `runtime/serializer/protobuf`): a body is the magic `k8s\0` and a
//! `runtime.Unknown` {1: typeMeta {1: apiVersion, 2: kind}, 2: raw (the
//! object's message), 3: contentEncoding, 4: contentType}; a list's raw is
//! {1: ListMeta, 2: items...}; a watch stream (`;stream=watch`) is frames,
//! each a 4-byte big-endian length and a `WatchEvent` {1: type, 2:
//! RawExtension {1: raw}} written *without* the envelope, whose raw is the
//! object *with* its envelope.

use super::wire::{Fields, Malformed, Value, put_bytes_field, put_nested};

/// The media type of a protobuf body.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The media type of a protobuf watch stream.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The 4-byte prefix of every protobuf body.
pub const MAGIC: &[u8] = b"k8s\0";

/// An opened envelope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// `apiVersion` of the object inside (`v1`).
    pub api_version: &'a str,
    /// Its kind (`NodeList`, `Pod`, `Status`).
    pub kind: &'a str,
    /// The object's message.
    pub raw: &'a [u8],
    /// How `raw` is encoded (empty: not at all).
    pub content_encoding: &'a str,
    /// What `raw` is (empty: protobuf).
    pub content_type: &'a str,
}

/// Why a body is not a usable envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvelopeError {
    /// It does not start with `k8s\0`.
    NoMagic,
    /// The protobuf is malformed.
    Malformed,
    /// The envelope says `raw` is encoded or typed in a way not read here.
    Unsupported(String),
}

impl std::fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoMagic => f.write_str("not a Kubernetes protobuf body (no k8s\\0 prefix)"),
            Self::Malformed => f.write_str("malformed protobuf"),
            Self::Unsupported(what) => write!(f, "unsupported protobuf envelope: {what}"),
        }
    }
}

impl std::error::Error for EnvelopeError {}

impl From<Malformed> for EnvelopeError {
    fn from(_: Malformed) -> Self {
        EnvelopeError::Malformed
    }
}

/// Opens a body: checks the magic and reads the `Unknown`.
pub fn open(body: &[u8]) -> Result<Unknown<'_>, EnvelopeError> {
    let message = body.strip_prefix(MAGIC).ok_or(EnvelopeError::NoMagic)?;
    let mut unknown = Unknown::default();
    for field in Fields::new(message) {
        match field? {
            (1, Value::Bytes(type_meta)) => {
                for part in Fields::new(type_meta) {
                    match part? {
                        (1, Value::Bytes(v)) => unknown.api_version = text(v)?,
                        (2, Value::Bytes(v)) => unknown.kind = text(v)?,
                        _ => {}
                    }
                }
            }
            (2, Value::Bytes(raw)) => unknown.raw = raw,
            (3, Value::Bytes(v)) => unknown.content_encoding = text(v)?,
            (4, Value::Bytes(v)) => unknown.content_type = text(v)?,
            _ => {}
        }
    }
    if !unknown.content_encoding.is_empty() {
        return Err(EnvelopeError::Unsupported(format!(
            "contentEncoding {}",
            unknown.content_encoding
        )));
    }
    if !unknown.content_type.is_empty() && unknown.content_type != MEDIA_TYPE {
        return Err(EnvelopeError::Unsupported(format!(
            "contentType {}",
            unknown.content_type
        )));
    }
    Ok(unknown)
}

fn text(bytes: &[u8]) -> Result<&str, EnvelopeError> {
    std::str::from_utf8(bytes).map_err(|_| EnvelopeError::Malformed)
}

/// Appends a sealed body: the magic, then the `Unknown` whose raw `write`
/// appends (with empty contentEncoding and contentType, as Go writes them).
pub fn seal(api_version: &str, kind: &str, out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(MAGIC);
    put_nested(out, 1, |type_meta| {
        put_bytes_field(type_meta, 1, api_version.as_bytes());
        put_bytes_field(type_meta, 2, kind.as_bytes());
    });
    put_nested(out, 2, write);
    put_bytes_field(out, 3, b"");
    put_bytes_field(out, 4, b"");
}

/// A list's parts: its `ListMeta` message and its items' messages.
pub fn list_parts(raw: &[u8]) -> Result<(&[u8], Vec<&[u8]>), EnvelopeError> {
    let mut meta: &[u8] = &[];
    let mut items = Vec::new();
    for field in Fields::new(raw) {
        match field? {
            (1, Value::Bytes(m)) => meta = m,
            (2, Value::Bytes(item)) => items.push(item),
            _ => {}
        }
    }
    Ok((meta, items))
}

/// One watch frame's event: its type (`ADDED`, `BOOKMARK`, `ERROR`) and the
/// object's envelope, opened.
pub fn watch_event(frame: &[u8]) -> Result<(&str, Unknown<'_>), EnvelopeError> {
    let (mut kind, mut object) = ("", None);
    for field in Fields::new(frame) {
        match field? {
            (1, Value::Bytes(t)) => kind = text(t)?,
            (2, Value::Bytes(extension)) => {
                for part in Fields::new(extension) {
                    if let (1, Value::Bytes(raw)) = part? {
                        object = Some(raw);
                    }
                }
            }
            _ => {}
        }
    }
    let object = object.ok_or(EnvelopeError::Malformed)?;
    Ok((kind, open(object)?))
}

/// Appends one watch frame: the length, then the event whose object is the
/// sealed body `object`.
pub fn put_watch_frame(out: &mut Vec<u8>, event_type: &str, object: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    put_bytes_field(out, 1, event_type.as_bytes());
    put_nested(out, 2, |extension| put_bytes_field(extension, 1, object));
    let len = u32::try_from(out.len() - start - 4).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_body_opens_to_what_went_in() {
        let mut body = Vec::new();
        seal("v1", "NodeList", &mut body, |raw| {
            raw.extend_from_slice(b"\x0a\x00");
        });
        assert!(body.starts_with(b"k8s\0"));
        let unknown = open(&body).unwrap();
        assert_eq!((unknown.api_version, unknown.kind), ("v1", "NodeList"));
        assert_eq!(unknown.raw, b"\x0a\x00");
        assert_eq!(
            open(b"{\"kind\":\"NodeList\"}"),
            Err(EnvelopeError::NoMagic)
        );
        assert_eq!(open(b"k8s\0\x12\x09"), Err(EnvelopeError::Malformed));
    }

    #[test]
    fn an_encoded_raw_is_refused_in_words() {
        let mut body = MAGIC.to_vec();
        put_bytes_field(&mut body, 3, b"gzip");
        let error = open(&body).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unsupported protobuf envelope: contentEncoding gzip"
        );
    }

    #[test]
    fn a_watch_frame_is_length_prefixed_and_reads_back() {
        let mut object = Vec::new();
        seal("v1", "Pod", &mut object, |_| {});
        let mut frames = Vec::new();
        put_watch_frame(&mut frames, "ADDED", &object);
        put_watch_frame(&mut frames, "DELETED", &object);
        let len = u32::from_be_bytes(frames[..4].try_into().unwrap()) as usize;
        let (kind, unknown) = watch_event(&frames[4..4 + len]).unwrap();
        assert_eq!((kind, unknown.kind), ("ADDED", "Pod"));
        let second = &frames[4 + len + 4..];
        assert_eq!(watch_event(second).unwrap().0, "DELETED");
    }
}

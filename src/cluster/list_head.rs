//! A list page's head (its `ListMeta`: continue token, resourceVersion,
//! remaining count) read from the page's body without decoding its items,
//! so the next page can be asked for before this one is decoded (the
//! pager's one page ahead). Both encodings put the head first as API
//! servers write them: JSON `{"kind":…,"apiVersion":…,"metadata":{…},
//! "items":[…]}`, protobuf `k8s\0` + `Unknown{typeMeta, raw: List{1:
//! ListMeta, 2: items…}}`; there the read stops at the head. A JSON body
//! whose head comes after its items is scanned to it; protobuf skips
//! items by their length.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::de::{Deserializer as _, Error as _, IgnoredAny, MapAccess, Visitor};

use crate::model::protobuf::envelope::{self, MAGIC};
use crate::model::protobuf::from_message;

/// The head of the page `bytes` (empty for a list without one); an error
/// for a malformed body.
pub fn read(bytes: &[u8]) -> Result<ListMeta, serde_json::Error> {
    if bytes.starts_with(MAGIC) {
        protobuf_head(bytes)
    } else {
        json_head(bytes)
    }
}

fn malformed(what: impl std::fmt::Display) -> serde_json::Error {
    serde_json::Error::custom(format!("protobuf: {what}"))
}

fn protobuf_head(bytes: &[u8]) -> Result<ListMeta, serde_json::Error> {
    let unknown = envelope::open(bytes).map_err(malformed)?;
    let (meta, _) = envelope::list_parts(unknown.raw).map_err(malformed)?;
    from_message("ListMeta", meta).map_err(malformed)
}

/// The JSON head: the object's keys up to `metadata`, and no further.
fn json_head(bytes: &[u8]) -> Result<ListMeta, serde_json::Error> {
    let mut decoder = serde_json::Deserializer::from_slice(bytes);
    let mut found = None;
    let read = decoder.deserialize_map(HeadVisitor { found: &mut found });
    match found {
        Some(meta) => Ok(meta),
        None => read.map(|()| ListMeta::default()),
    }
}

/// Reads keys until `metadata`, then stops (by an error the caller ignores
/// once the head is found: the rest is the items, not read here).
struct HeadVisitor<'a> {
    found: &'a mut Option<ListMeta>,
}

impl<'de> Visitor<'de> for HeadVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "metadata" {
                *self.found = Some(map.next_value()?);
                return Err(A::Error::custom("head read"));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::protobuf::wire::{put_bytes_field, put_nested};

    #[test]
    fn a_json_head_is_read_first_or_last_and_a_broken_body_fails() {
        let first = r#"{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"next","remainingItemCount":3},"items":[{"metadata":{"name":"a"}}]}"#;
        let meta = read(first.as_bytes()).expect("read");
        assert_eq!(meta.continue_.as_deref(), Some("next"));
        assert_eq!(meta.remaining_item_count, Some(3));
        // Items after the head are not read: a cut there does not matter.
        let cut = &first[..first.len() - 10];
        assert_eq!(
            read(cut.as_bytes()).expect("read").continue_.as_deref(),
            Some("next")
        );
        let last = r#"{"items":[{"metadata":{"name":"a"}}],"metadata":{"continue":"late"}}"#;
        assert_eq!(
            read(last.as_bytes()).expect("read").continue_.as_deref(),
            Some("late")
        );
        assert_eq!(
            read(br#"{"items":[]}"#).expect("no head"),
            ListMeta::default()
        );
        assert!(read(br#"{"items":[}"#).is_err());
    }

    fn protobuf_list(meta_first: bool) -> Vec<u8> {
        let mut body = Vec::new();
        envelope::seal("v1", "NodeList", &mut body, |raw| {
            let meta = |raw: &mut Vec<u8>| {
                put_nested(raw, 1, |meta| {
                    put_bytes_field(meta, 2, b"42");
                    put_bytes_field(meta, 3, b"next");
                });
            };
            if meta_first {
                meta(raw);
            }
            put_bytes_field(raw, 2, &[0x0a, 0x00]);
            if !meta_first {
                meta(raw);
            }
        });
        body
    }

    #[test]
    fn a_protobuf_head_is_read_wherever_it_lies() {
        for meta_first in [true, false] {
            let meta = read(&protobuf_list(meta_first)).expect("read");
            assert_eq!(meta.continue_.as_deref(), Some("next"));
            assert_eq!(meta.resource_version.as_deref(), Some("42"));
        }
        assert!(read(b"k8s\0\x12\x7f").is_err());
    }
}

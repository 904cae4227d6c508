//! A list page's head (its `ListMeta`: continue token, resourceVersion,
//! remaining count) read from the first bytes of its body, before the rest
//! has arrived, so the next page can be asked for while this one still
//! streams in (the pager's one page ahead). Both encodings put the head first as API
//! servers write them: JSON `{"kind":…,"apiVersion":…,"metadata":{…},
//! "items":[…]}`, protobuf `k8s\0` + `Unknown{typeMeta, raw: List{1:
//! ListMeta, 2: items…}}`. A body whose head comes after its items is read
//! whole first: correct, only not early.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::de::{Deserializer as _, Error as _, IgnoredAny, MapAccess, Visitor};

use crate::model::protobuf::envelope::{self, MAGIC};
use crate::model::protobuf::from_message;
use crate::model::protobuf::wire::varint;

/// What the bytes so far say about the head.
#[derive(Debug, PartialEq)]
pub enum Head {
    /// Read.
    Read(ListMeta),
    /// Not yet: more bytes are needed (or the head comes after the items).
    NotYet,
}

/// The head of a page from `bytes`, its first bytes (`whole`: all of it).
/// A whole body without a head has an empty one; a malformed one is an
/// error (only for a whole body: a prefix may be cut anywhere).
pub fn peek(bytes: &[u8], whole: bool) -> Result<Head, serde_json::Error> {
    let head = if bytes.starts_with(MAGIC) {
        protobuf_head(bytes, whole)
    } else {
        json_head(bytes, whole)
    };
    match head {
        Ok(Head::NotYet) if whole => Ok(Head::Read(ListMeta::default())),
        Err(_) if !whole => Ok(Head::NotYet),
        head => head,
    }
}

fn malformed(what: impl std::fmt::Display) -> serde_json::Error {
    serde_json::Error::custom(format!("protobuf: {what}"))
}

/// The protobuf head: the envelope's fields up to `raw`, then `raw`'s first
/// field if it is the `ListMeta` and has arrived whole.
fn protobuf_head(bytes: &[u8], whole: bool) -> Result<Head, serde_json::Error> {
    if whole {
        let unknown = envelope::open(bytes).map_err(malformed)?;
        let (meta, _) = envelope::list_parts(unknown.raw).map_err(malformed)?;
        return from_message("ListMeta", meta)
            .map(Head::Read)
            .map_err(malformed);
    }
    let mut rest = &bytes[MAGIC.len()..];
    // The envelope: skip fields until `raw` (2) starts.
    loop {
        let (tag, after) = varint(rest).map_err(|_| malformed("malformed varint"))?;
        let (len, after) = varint(after).map_err(|_| malformed("malformed varint"))?;
        if tag == (2 << 3 | 2) {
            rest = after;
            break;
        }
        let len = usize::try_from(len).map_err(malformed)?;
        rest = after.get(len..).ok_or_else(|| malformed("cut"))?;
    }
    // `raw`'s first field: the ListMeta when the server writes it first.
    let (tag, after) = varint(rest).map_err(|_| malformed("malformed varint"))?;
    if tag != (1 << 3 | 2) {
        return Ok(Head::NotYet);
    }
    let (len, after) = varint(after).map_err(|_| malformed("malformed varint"))?;
    let len = usize::try_from(len).map_err(malformed)?;
    let meta = after.get(..len).ok_or_else(|| malformed("cut"))?;
    from_message("ListMeta", meta)
        .map(Head::Read)
        .map_err(malformed)
}

/// The JSON head: the object's keys up to `metadata`, read without
/// decoding past it (a prefix ends mid-object).
fn json_head(bytes: &[u8], whole: bool) -> Result<Head, serde_json::Error> {
    let mut decoder = serde_json::Deserializer::from_slice(bytes);
    let mut found = None;
    let read = decoder.deserialize_map(HeadVisitor {
        found: &mut found,
        whole,
    });
    if let Some(meta) = found {
        return Ok(Head::Read(meta));
    }
    read.map(|()| Head::NotYet)
}

/// Reads keys until `metadata`, then stops (by an error the caller ignores
/// once the head is found: the rest of a prefix is not there to read).
struct HeadVisitor<'a> {
    found: &'a mut Option<ListMeta>,
    whole: bool,
}

impl<'de> Visitor<'de> for HeadVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "metadata" => {
                    *self.found = Some(map.next_value()?);
                    return Err(A::Error::custom("head read"));
                }
                // A prefix: the head, if any, comes after the items.
                "items" if !self.whole => return Err(A::Error::custom("items first")),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::protobuf::wire::{put_bytes_field, put_nested};

    fn continue_of(head: Head) -> Option<String> {
        match head {
            Head::Read(meta) => meta.continue_,
            Head::NotYet => None,
        }
    }

    #[test]
    fn a_json_head_is_read_from_the_first_bytes() {
        let body = r#"{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"next","remainingItemCount":3},"items":[{"metadata":{"name":"a"}}]}"#;
        // Read once the metadata object has closed.
        let at = body.find(",\"items\"").expect("items");
        for cut in 0..body.len() {
            let head = peek(&body.as_bytes()[..cut], false).expect("a prefix never fails");
            let expected = (cut >= at).then(|| "next".to_owned());
            assert_eq!(continue_of(head), expected, "cut at {cut}");
        }
        let Head::Read(meta) = peek(body.as_bytes(), true).expect("whole") else {
            panic!("read")
        };
        assert_eq!(meta.remaining_item_count, Some(3));
    }

    #[test]
    fn a_json_head_after_the_items_waits_for_the_whole_body() {
        let body = r#"{"items":[{"metadata":{"name":"a"}}],"metadata":{"continue":"late"}}"#;
        for cut in 0..body.len() {
            assert_eq!(
                peek(&body.as_bytes()[..cut], false).expect("prefix"),
                Head::NotYet
            );
        }
        assert_eq!(
            continue_of(peek(body.as_bytes(), true).expect("whole")),
            Some("late".into())
        );
        assert_eq!(
            peek(br#"{"items":[]}"#, true).expect("no head"),
            Head::Read(ListMeta::default())
        );
        assert!(peek(br#"{"items":[}"#, true).is_err());
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
    fn a_protobuf_head_is_read_once_its_list_meta_has_arrived() {
        let body = protobuf_list(true);
        let mut first = None;
        for cut in 0..=body.len() {
            let head = peek(&body[..cut], cut == body.len()).expect("never fails");
            if let Head::Read(meta) = head {
                assert_eq!(meta.continue_.as_deref(), Some("next"));
                assert_eq!(meta.resource_version.as_deref(), Some("42"));
                first.get_or_insert(cut);
            } else {
                assert!(first.is_none(), "read at {first:?}, lost at {cut}");
            }
        }
        assert!(
            first.expect("read") < body.len() - 2,
            "read before the items"
        );
        let late = protobuf_list(false);
        assert_eq!(
            peek(&late[..late.len() - 1], false).expect("prefix"),
            Head::NotYet
        );
        assert_eq!(
            continue_of(peek(&late, true).expect("whole")),
            Some("next".into())
        );
        assert!(peek(b"k8s\0\x12\x7f", true).is_err());
    }
}

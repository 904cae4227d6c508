//! One list page: its request, its body read as it streams, and its
//! decoding straight into rollcall's types (JSON or Kubernetes protobuf,
//! told apart by the body's first bytes). A floor below the pager and the
//! request helpers, which both read pages.

use std::time::Duration;

use futures::AsyncBufReadExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::ListParams;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::object::{Object, Page};

/// How long a list may receive nothing (no headers, no bytes) before it
/// counts as stalled and is abandoned. A bound on silence, not on the whole
/// list: over a slow link a large cluster's list takes minutes and is
/// fine as long as bytes keep coming.
pub const LIST_STALL: Duration = Duration::from_secs(60);

/// Shown a page's bytes so far, and whether they are all of it.
pub type WatchBytes<'a> = dyn FnMut(&[u8], bool) -> Result<(), kube::Error> + Send + 'a;

/// Reads one list page's body into `buffer`, undecoded. (kube's `Api::list`
/// copies the body into a `String` and checks it is UTF-8 before decoding:
/// two more passes over every page, megabytes each at scale; the decoder
/// checks the text itself.) `buffer`: the bytes of an earlier page, whose
/// room is reused: a list's pages are alike in size, and a fresh
/// multi-megabyte buffer per page left the allocator holding freed holes
/// between the decoded objects. Fails when nothing arrives for `stall`.
/// `watch` sees the bytes so far after every chunk (`whole`: false) and
/// once more at the end (`whole`: true); an error from it fails the page.
pub async fn fetch_page(
    client: &kube::Client,
    url: &str,
    params: &ListParams,
    buffer: &mut Vec<u8>,
    stall: Duration,
    watch: &mut WatchBytes<'_>,
) -> Result<(), kube::Error> {
    let mut request = kube::core::Request::new(url)
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("list");
    let stalled = || {
        kube::Error::ReadEvents(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the list stalled: nothing received for {stall:?}"),
        ))
    };
    let mut body = tokio::time::timeout(stall, client.request_stream(request))
        .await
        .map_err(|_| stalled())??;
    buffer.clear();
    // Chunk by chunk as they arrive: `read_to_end` zero-fills the spare room
    // before every read (a tenth of the load's CPU at 65,000 nodes).
    loop {
        let chunk = tokio::time::timeout(stall, body.fill_buf())
            .await
            .map_err(|_| stalled())?
            .map_err(kube::Error::ReadEvents)?;
        if chunk.is_empty() {
            return watch(buffer, true);
        }
        let read = chunk.len();
        buffer.extend_from_slice(chunk);
        body.consume_unpin(read);
        watch(buffer, false)?;
    }
}

/// Decodes a list page in one pass, handing its metadata to `on_head` as
/// soon as it is read: the API server writes `metadata` before `items`, so
/// the next page can be asked for while this one's objects are decoded.
/// (From a server that writes it last, `on_head` is called at the end.)
pub fn decode_page<K: Object>(
    bytes: &[u8],
    on_head: impl FnOnce(&ListMeta),
) -> Result<Page<K>, serde_json::Error> {
    // Asked for by the `wire` layer; told apart by its first bytes.
    if super::protobuf_read::is_protobuf(bytes) {
        return super::protobuf_read::decode_page(bytes, on_head);
    }
    // JSON is UTF-8 (RFC 8259): checked once over the page, in bulk, and not
    // again for each string decoded (a tenth of the decode's CPU).
    let text = std::str::from_utf8(bytes).map_err(serde::de::Error::custom)?;
    let mut decoder = serde_json::Deserializer::from_str(text);
    let page = PageSeed {
        on_head,
        kind: std::marker::PhantomData,
    }
    .deserialize(&mut decoder)?;
    decoder.end()?;
    Ok(page)
}

/// Decodes a page, calling `on_head` with its metadata once read.
struct PageSeed<K, F> {
    on_head: F,
    kind: std::marker::PhantomData<K>,
}

/// The fields of a list rollcall reads; `kind`, `apiVersion` and anything
/// else are skipped.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum ListField {
    Metadata,
    Items,
    #[serde(other)]
    Other,
}

impl<'de, K: Object, F: FnOnce(&ListMeta)> DeserializeSeed<'de> for PageSeed<K, F> {
    type Value = Page<K>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Page<K>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, K: Object, F: FnOnce(&ListMeta)> Visitor<'de> for PageSeed<K, F> {
    type Value = Page<K>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Page<K>, A::Error> {
        let mut on_head = Some(self.on_head);
        let mut metadata = None;
        let mut items = Vec::new();
        while let Some(field) = map.next_key::<ListField>()? {
            match field {
                ListField::Metadata => {
                    let head: ListMeta = map.next_value()?;
                    if let Some(on_head) = on_head.take() {
                        on_head(&head);
                    }
                    metadata = Some(head);
                }
                // `null` is no objects.
                ListField::Items => items = map.next_value::<Option<Vec<K>>>()?.unwrap_or_default(),
                ListField::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let metadata = metadata.unwrap_or_default();
        if let Some(on_head) = on_head {
            on_head(&metadata);
        }
        Ok(Page { metadata, items })
    }
}

#[cfg(test)]
mod tests {
    use super::decode_page;
    use crate::model::Node;

    fn decode(json: &str) -> (super::Page<Node>, Vec<Option<String>>) {
        let mut heads = Vec::new();
        let page = decode_page::<Node>(json.as_bytes(), |head| heads.push(head.continue_.clone()))
            .expect("decodes");
        (page, heads)
    }

    #[test]
    fn a_page_hands_its_head_on_once_whether_it_comes_first_or_last() {
        let first = r#"{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"next"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#;
        let (page, heads) = decode(first);
        assert_eq!(heads, [Some("next".to_owned())]);
        assert_eq!(page.metadata.resource_version.as_deref(), Some("7"));
        let names: Vec<_> = page.items.iter().map(Node::name).collect();
        assert_eq!(names, ["a", "b"]);
        let last = r#"{"items":[{"metadata":{"name":"a"}}],"extra":{"x":[1,2]},"metadata":{"resourceVersion":"8"}}"#;
        let (page, heads) = decode(last);
        assert_eq!(heads, [None]);
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.metadata.resource_version.as_deref(), Some("8"));
    }

    #[test]
    fn a_page_without_items_or_metadata_is_empty_and_a_broken_one_fails() {
        let (page, heads) = decode(r#"{"kind":"NodeList","items":null}"#);
        assert!(page.items.is_empty());
        assert_eq!(heads, [None]);
        let broken = r#"{"metadata":{"continue":"next"},"items":[{"metadata":{"name":"a"}}"#;
        let mut heads = 0;
        assert!(decode_page::<Node>(broken.as_bytes(), |_| heads += 1).is_err());
        // The head was read before the break: the caller may have asked for
        // the next page; the error still ends the list.
        assert_eq!(heads, 1);
        assert!(decode_page::<Node>(b"{} trailing", |_| {}).is_err());
    }
}

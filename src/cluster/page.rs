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

/// Reads one list page's body into `buffer`, undecoded. (kube's `Api::list`
/// copies the body into a `String` and checks it is UTF-8 before decoding:
/// two more passes over every page, megabytes each at scale; the decoder
/// checks the text itself.) `buffer`: the bytes of an earlier page, whose
/// room is reused: a list's pages are alike in size, and a fresh
/// multi-megabyte buffer per page left the allocator holding freed holes
/// between the decoded objects. Fails when nothing arrives for `stall`.
pub async fn fetch_page(
    client: &kube::Client,
    url: &str,
    params: &ListParams,
    buffer: &mut Vec<u8>,
    stall: Duration,
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
            return Ok(());
        }
        let read = chunk.len();
        buffer.extend_from_slice(chunk);
        body.consume_unpin(read);
    }
}

/// Decodes a list page in one pass (its metadata first or last).
pub fn decode_page<K: Object>(bytes: &[u8]) -> Result<Page<K>, serde_json::Error> {
    // Asked for by the `wire` layer; told apart by its first bytes.
    if super::protobuf_read::is_protobuf(bytes) {
        return super::protobuf_read::decode_page(bytes);
    }
    // JSON is UTF-8 (RFC 8259): checked once over the page, in bulk, and not
    // again for each string decoded (a tenth of the decode's CPU).
    let text = std::str::from_utf8(bytes).map_err(serde::de::Error::custom)?;
    let mut decoder = serde_json::Deserializer::from_str(text);
    let page = PageSeed::<K>(std::marker::PhantomData).deserialize(&mut decoder)?;
    decoder.end()?;
    Ok(page)
}

/// Decodes a page of `K`.
struct PageSeed<K>(std::marker::PhantomData<K>);

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

impl<'de, K: Object> DeserializeSeed<'de> for PageSeed<K> {
    type Value = Page<K>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Page<K>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, K: Object> Visitor<'de> for PageSeed<K> {
    type Value = Page<K>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Page<K>, A::Error> {
        let mut metadata = None;
        let mut items = Vec::new();
        while let Some(field) = map.next_key::<ListField>()? {
            match field {
                ListField::Metadata => metadata = Some(map.next_value::<ListMeta>()?),
                // `null` is no objects.
                ListField::Items => items = map.next_value::<Option<Vec<K>>>()?.unwrap_or_default(),
                ListField::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(Page {
            metadata: metadata.unwrap_or_default(),
            items,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::decode_page;
    use crate::model::Node;

    fn decode(json: &str) -> super::Page<Node> {
        decode_page::<Node>(json.as_bytes()).expect("decodes")
    }

    #[test]
    fn a_page_reads_its_head_whether_it_comes_first_or_last() {
        let first = r#"{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"next"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#;
        let page = decode(first);
        assert_eq!(page.metadata.continue_.as_deref(), Some("next"));
        assert_eq!(page.metadata.resource_version.as_deref(), Some("7"));
        let names: Vec<_> = page.items.iter().map(Node::name).collect();
        assert_eq!(names, ["a", "b"]);
        let last = r#"{"items":[{"metadata":{"name":"a"}}],"extra":{"x":[1,2]},"metadata":{"resourceVersion":"8"}}"#;
        let page = decode(last);
        assert_eq!(page.metadata.continue_, None);
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.metadata.resource_version.as_deref(), Some("8"));
    }

    #[test]
    fn a_page_without_items_or_metadata_is_empty_and_a_broken_one_fails() {
        let page = decode(r#"{"kind":"NodeList","items":null}"#);
        assert!(page.items.is_empty());
        assert_eq!(page.metadata.resource_version, None);
        let broken = r#"{"metadata":{"continue":"next"},"items":[{"metadata":{"name":"a"}}"#;
        assert!(decode_page::<Node>(broken.as_bytes()).is_err());
        assert!(decode_page::<Node>(b"{} trailing").is_err());
    }
}

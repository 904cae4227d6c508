//! One page of a list request: its bytes, the list metadata read from their
//! head, and the objects decoded from them. Reading the head alone lets the
//! next page be requested while this one is decoded on another thread
//! (`stream.rs` overlaps the two): the continue token is all the next request
//! needs. No I/O beyond the one request; no decision about what to do next.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::ListParams;
use kube::core::ObjectList;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

/// Reads one list page's body. (kube's `Api::list` copies the body into a
/// `String` and checks it is UTF-8 before decoding: two more passes over
/// every page, megabytes each at scale; the decoder checks the text itself.)
/// `size_hint` is the last page's size: pages are alike, so it sizes the buffer.
pub(super) async fn fetch(
    client: &kube::Client,
    url: &str,
    params: &ListParams,
    size_hint: &mut usize,
) -> Result<Vec<u8>, kube::Error> {
    use futures::AsyncReadExt;
    let mut request = kube::core::Request::new(url)
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("list");
    let mut body = client.request_stream(request).await?;
    let mut bytes = Vec::with_capacity(*size_hint + *size_hint / 8);
    body.read_to_end(&mut bytes)
        .await
        .map_err(kube::Error::ReadEvents)?;
    *size_hint = bytes.len();
    Ok(bytes)
}

/// Every object of a page (the whole decode).
pub(super) fn decode<K>(bytes: &[u8]) -> Result<ObjectList<K>, kube::Error>
where
    K: serde::de::DeserializeOwned + Clone,
{
    serde_json::from_slice(bytes).map_err(kube::Error::SerdeError)
}

/// The list metadata (resourceVersion, continue token) of a page, read
/// without decoding its items: the API server writes `metadata` before
/// `items`, so this reads a few hundred bytes. Keys before `metadata` are
/// skipped unread (in another order it still finds it, at the cost of a scan);
/// a body that is not a JSON object is an error, as for the whole decode.
pub(super) fn list_head(bytes: &[u8]) -> Result<ListMeta, kube::Error> {
    let mut found = None;
    let mut decoder = serde_json::Deserializer::from_slice(bytes);
    let read = de::Deserializer::deserialize_map(&mut decoder, Head(&mut found));
    match (found, read) {
        // Stopping after `metadata` leaves the rest of the object unread,
        // which the decoder reports as an error: expected here.
        (Some(metadata), _) => Ok(metadata),
        (None, Ok(())) => Ok(ListMeta::default()),
        (None, Err(error)) => Err(kube::Error::SerdeError(error)),
    }
}

/// Reads map keys up to `metadata` and stores its value.
struct Head<'a>(&'a mut Option<ListMeta>);

impl<'de> Visitor<'de> for Head<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes list object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "metadata" {
                *self.0 = Some(map.next_value()?);
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Head<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, decoder: D) -> Result<(), D::Error> {
        decoder.deserialize_map(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn page(metadata_first: bool, items: usize, token: Option<&str>) -> Vec<u8> {
        let items: Vec<_> = (0..items)
            .map(|i| serde_json::json!({"metadata": {"name": format!("node-{i}"), "resourceVersion": "7"}}))
            .collect();
        let metadata = serde_json::json!({"resourceVersion": "42", "continue": token});
        let (items, metadata) = (serde_json::to_string(&items).unwrap(), metadata.to_string());
        let body = if metadata_first {
            format!(
                r#"{{"kind":"NodeList","apiVersion":"v1","metadata":{metadata},"items":{items}}}"#
            )
        } else {
            format!(
                r#"{{"kind":"NodeList","items":{items},"apiVersion":"v1","metadata":{metadata}}}"#
            )
        };
        body.into_bytes()
    }

    proptest! {
        /// The head read alone equals the metadata of the whole decode, in
        /// either key order, with or without a continue token.
        #[test]
        fn the_head_equals_the_whole_decodes_metadata(
            metadata_first in any::<bool>(),
            items in 0usize..20,
            token in proptest::option::of("[a-zA-Z0-9=]{1,40}"),
        ) {
            let bytes = page(metadata_first, items, token.as_deref());
            let whole = decode::<crate::model::Node>(&bytes).unwrap();
            let head = list_head(&bytes).unwrap();
            prop_assert_eq!(head.continue_, whole.metadata.continue_);
            prop_assert_eq!(head.resource_version, whole.metadata.resource_version);
            prop_assert_eq!(whole.items.len(), items);
        }
    }

    #[test]
    fn a_body_that_is_not_a_list_is_an_error() {
        assert!(list_head(b"[1, 2]").is_err());
        assert!(list_head(b"not json").is_err());
        assert!(list_head(br#"{"kind":"NodeList","items":[}"#).is_err());
    }
}

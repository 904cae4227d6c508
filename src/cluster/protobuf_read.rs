//! Reading Kubernetes protobuf answers into rollcall's types: a list page
//! (envelope, `ListMeta`, items decoded straight into the slim types by
//! [`crate::model::protobuf::de`]), the frames of a watch stream, and an
//! error's Status. Malformed bodies are errors naming what was wrong.

use std::io;

use futures::{AsyncRead, AsyncReadExt, Stream};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::WatchEvent;
use kube::core::{Status, TypeMeta};
use serde::de::Error as _;

use super::object::{Object, Page};
use crate::model::protobuf::envelope::{self, MAGIC};
use crate::model::protobuf::from_message;

/// Whether a body is protobuf (JSON never starts with `k8s\0`).
pub fn is_protobuf(body: &[u8]) -> bool {
    body.starts_with(MAGIC)
}

fn bad(what: impl std::fmt::Display) -> serde_json::Error {
    serde_json::Error::custom(format!("protobuf: {what}"))
}

/// Decodes a protobuf list page.
pub fn decode_page<K: Object>(body: &[u8]) -> Result<Page<K>, serde_json::Error> {
    let unknown = envelope::open(body).map_err(bad)?;
    if unknown.kind != format!("{}List", K::KIND) {
        return Err(bad(format!(
            "expected a {}List, got {:?}",
            K::KIND,
            unknown.kind
        )));
    }
    let (meta, items) = envelope::list_parts(unknown.raw).map_err(bad)?;
    let metadata: ListMeta = from_message("ListMeta", meta).map_err(bad)?;
    let items = items
        .into_iter()
        .map(|item| from_message::<K>(K::KIND, item).map_err(bad))
        .collect::<Result<_, _>>()?;
    Ok(Page { metadata, items })
}

/// A watch frame as kube's event.
pub fn watch_event<K: Object>(frame: &[u8]) -> Result<WatchEvent<K>, kube::Error> {
    let serde = |error: serde_json::Error| kube::Error::SerdeError(error);
    let (event_type, object) = envelope::watch_event(frame).map_err(|e| serde(bad(e)))?;
    let decode = || from_message::<K>(K::KIND, object.raw).map_err(|e| serde(bad(e)));
    Ok(match event_type {
        "ADDED" => WatchEvent::Added(decode()?),
        "MODIFIED" => WatchEvent::Modified(decode()?),
        "DELETED" => WatchEvent::Deleted(decode()?),
        "BOOKMARK" => {
            #[derive(serde::Deserialize)]
            struct Bookmarked {
                metadata: kube::core::watch::BookmarkMeta,
            }
            let Bookmarked { metadata } =
                from_message(K::KIND, object.raw).map_err(|e| serde(bad(e)))?;
            WatchEvent::Bookmark(kube::core::watch::Bookmark {
                types: TypeMeta {
                    api_version: object.api_version.to_owned(),
                    kind: object.kind.to_owned(),
                },
                metadata,
            })
        }
        "ERROR" => WatchEvent::Error(Box::new(
            from_message::<Status>("Status", object.raw).map_err(|e| serde(bad(e)))?,
        )),
        other => return Err(serde(bad(format!("unknown watch event type {other:?}")))),
    })
}

/// The largest watch frame read (a Pod is kilobytes; upstream's own
/// limit is its request body limit, 3 MB objects in etcd).
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// A watch body's frames: each a 4-byte big-endian length and that many
/// bytes. The stream ends at the body's end (a cut mid-frame included: the
/// watch resumes from the last version, as after a cut JSON stream).
pub fn frames<R: AsyncRead + Unpin>(reader: R) -> impl Stream<Item = io::Result<Vec<u8>>> {
    futures::stream::try_unfold(reader, |mut reader| async move {
        let mut len = [0u8; 4];
        match reader.read_exact(&mut len).await {
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            result => result?,
        }
        let len = u32::from_be_bytes(len) as usize;
        if len > MAX_FRAME {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a watch frame of {len} bytes (more than {MAX_FRAME})"),
            ));
        }
        let mut frame = vec![0; len];
        match reader.read_exact(&mut frame).await {
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(error) => Err(error),
            Ok(()) => Ok(Some((frame, reader))),
        }
    })
}

/// A protobuf Status body as JSON (`None`: not one).
pub fn status_json(body: &[u8]) -> Option<Vec<u8>> {
    let unknown = envelope::open(body).ok()?;
    if unknown.kind != "Status" {
        return None;
    }
    let mut status: serde_json::Value = from_message("Status", unknown.raw).ok()?;
    let map = status.as_object_mut()?;
    map.insert("kind".into(), "Status".into());
    map.insert("apiVersion".into(), "v1".into());
    serde_json::to_vec(&status).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pod;
    use crate::model::protobuf::encode_object;
    use serde_json::json;

    /// A watch frame's content (without its length) for an object given as JSON.
    fn frame(event_type: &str, kind: &str, object: &serde_json::Value) -> Vec<u8> {
        let mut sealed = Vec::new();
        envelope::seal("v1", kind, &mut sealed, |raw| {
            encode_object(kind, object.as_object().expect("an object"), raw);
        });
        let mut frame = Vec::new();
        envelope::put_watch_frame(&mut frame, event_type, &sealed);
        frame.split_off(4)
    }

    #[test]
    fn watch_frames_become_kubes_events() {
        let pod = json!({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "9"}});
        let Ok(WatchEvent::Modified(modified)) =
            watch_event::<Pod>(&frame("MODIFIED", "Pod", &pod))
        else {
            panic!("a MODIFIED pod")
        };
        assert_eq!(modified.metadata.resource_version.as_deref(), Some("9"));
        let bookmark = json!({"metadata": {"resourceVersion": "12", "annotations": {"k8s.io/initial-events-end": "true"}}});
        let Ok(WatchEvent::Bookmark(bookmark)) =
            watch_event::<Pod>(&frame("BOOKMARK", "Pod", &bookmark))
        else {
            panic!("a bookmark")
        };
        assert_eq!(bookmark.metadata.resource_version, "12");
        assert_eq!(bookmark.types.kind, "Pod");
        assert!(
            bookmark
                .metadata
                .annotations
                .contains_key("k8s.io/initial-events-end")
        );
        let gone = json!({"status": "Failure", "code": 410, "reason": "Expired", "message": "too old resource version: 1 (9)"});
        let Ok(WatchEvent::Error(status)) = watch_event::<Pod>(&frame("ERROR", "Status", &gone))
        else {
            panic!("an error")
        };
        assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
        assert!(watch_event::<Pod>(&frame("SURPRISE", "Pod", &pod)).is_err());
        assert!(watch_event::<Pod>(b"\x0a\x05ADDED").is_err());
    }

    #[tokio::test]
    async fn frames_split_a_stream_and_end_at_a_cut() {
        let mut body = Vec::new();
        envelope::put_watch_frame(&mut body, "ADDED", b"k8s\0");
        envelope::put_watch_frame(&mut body, "DELETED", b"k8s\0");
        body.extend_from_slice(&[0, 0, 0, 99, 1]);
        let read: Vec<_> =
            futures::StreamExt::collect::<Vec<_>>(frames(futures::io::Cursor::new(body))).await;
        assert_eq!(
            read.len(),
            2,
            "two whole frames, then the cut ends the stream"
        );
        let mut huge = Vec::new();
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        let read: Vec<_> =
            futures::StreamExt::collect::<Vec<_>>(frames(futures::io::Cursor::new(huge))).await;
        assert!(matches!(&read[..], [Err(e)] if e.kind() == io::ErrorKind::InvalidData));
    }

    #[test]
    fn a_page_of_another_kind_is_refused() {
        let mut body = Vec::new();
        envelope::seal("v1", "NodeList", &mut body, |_| {});
        let error = decode_page::<Pod>(&body).unwrap_err();
        assert!(error.to_string().contains("expected a PodList"), "{error}");
    }
}

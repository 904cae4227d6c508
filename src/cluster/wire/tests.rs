//! The wire layer against scripted servers: what it asks for, and how it
//! falls back.

use std::sync::{Arc, Mutex};

use kube::api::ListParams;

use super::*;
use crate::cluster::request;
use crate::model::protobuf::envelope;
use crate::model::{DaemonSet, Node};

/// What a scripted server saw: each request's path and Accept header.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A client whose server answers each request with `answer(accept)`:
/// (status, content type, body).
fn client(mode: Wire, answer: fn(&str) -> (u16, &'static str, Vec<u8>)) -> (kube::Client, Seen) {
    let seen = Seen::default();
    let log = seen.clone();
    let server = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let accept = request
            .headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        log.lock()
            .unwrap()
            .push((request.uri().path().to_owned(), accept.clone()));
        let (status, content_type, body) = answer(&accept);
        let response = http::Response::builder()
            .status(status)
            .header(http::header::CONTENT_TYPE, content_type)
            .body(kube::client::Body::from(body));
        async move { response.map_err(|e| Box::new(e) as BoxError) }
    });
    let url: http::Uri = "https://api.example.com".parse().unwrap();
    let service = tower::ServiceBuilder::new()
        .layer(layer(mode, &url))
        .layer(tower::buffer::BufferLayer::new(8))
        .layer(crate::cluster::retry_after::Layer)
        .service(server);
    (kube::Client::new(service, "default"), seen)
}

fn node_list_protobuf() -> Vec<u8> {
    let mut body = Vec::new();
    envelope::seal("v1", "NodeList", &mut body, |raw| {
        crate::model::protobuf::wire::put_nested(raw, 1, |meta| {
            crate::model::protobuf::wire::put_bytes_field(meta, 2, b"7");
        });
        crate::model::protobuf::wire::put_nested(raw, 2, |node| {
            crate::model::protobuf::wire::put_nested(node, 1, |meta| {
                crate::model::protobuf::wire::put_bytes_field(meta, 1, b"n-1");
            });
        });
    });
    body
}

const NODE_LIST_JSON: &str = r#"{"kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"n-1"}}]}"#;

async fn list_nodes(client: &kube::Client) -> Result<Vec<String>, kube::Error> {
    let url = request::collection_url::<Node>(None);
    let nodes: Vec<Node> = request::list_all(client, &url, &ListParams::default(), None).await?;
    Ok(nodes.iter().map(|n| n.name().to_owned()).collect())
}

#[test]
fn auto_picks_protobuf_for_remote_servers_only() {
    let remote: http::Uri = "https://api.prod.example.com:6443".parse().unwrap();
    let local: http::Uri = "https://127.0.0.1:6443".parse().unwrap();
    assert!(choose(Wire::Auto, &remote).protobuf);
    assert!(!choose(Wire::Auto, &local).protobuf);
    assert!(choose(Wire::Protobuf, &local).protobuf);
    assert!(!choose(Wire::Json, &remote).protobuf);
}

#[test]
fn only_collections_of_nodes_pods_and_events_are_asked_in_protobuf() {
    let get = |path: &str| http::Request::get(path).body(()).unwrap();
    assert_eq!(
        protobuf_resource(&get("/api/v1/nodes?limit=500")),
        Some("nodes")
    );
    assert_eq!(
        protobuf_resource(&get("/api/v1/namespaces/kube-system/pods")),
        Some("pods")
    );
    assert_eq!(protobuf_resource(&get("/api/v1/events")), Some("events"));
    assert_eq!(protobuf_resource(&get("/api/v1/nodes/n-1")), None);
    assert_eq!(protobuf_resource(&get("/apis/apps/v1/daemonsets")), None);
    assert_eq!(protobuf_resource(&get("/api/v1/namespaces")), None);
    let patch = http::Request::patch("/api/v1/nodes").body(()).unwrap();
    assert_eq!(protobuf_resource(&patch), None);
}

#[tokio::test]
async fn a_protobuf_list_decodes_into_the_slim_types() {
    let (client, seen) = client(Wire::Protobuf, |_| (200, MEDIA_TYPE, node_list_protobuf()));
    assert_eq!(list_nodes(&client).await.unwrap(), ["n-1"]);
    // DaemonSets are asked in JSON (the server's answer is never read here).
    let url = request::collection_url::<DaemonSet>(None);
    let _ = request::list_all::<DaemonSet>(&client, &url, &ListParams::default(), None).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        ("/api/v1/nodes".to_owned(), ACCEPT_PROTOBUF.to_owned())
    );
    assert_eq!(seen[1].1, "");
}

/// A server without protobuf answering 406 (upstream's NotAcceptable when
/// nothing asked for can be served): the list is asked again in JSON at
/// once, and later lists of the resource go straight to JSON.
#[tokio::test]
async fn a_406_falls_back_to_json_for_that_resource() {
    let (client, seen) = client(Wire::Protobuf, |accept| {
        if accept.starts_with(MEDIA_TYPE) {
            let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotAcceptable","code":406,"message":"the server was unable to respond with a content type that the client supports"}"#;
            (406, "application/json", status.into())
        } else {
            (200, "application/json", NODE_LIST_JSON.into())
        }
    });
    assert_eq!(list_nodes(&client).await.unwrap(), ["n-1"]);
    assert_eq!(list_nodes(&client).await.unwrap(), ["n-1"]);
    let accepts: Vec<_> = seen.lock().unwrap().iter().map(|s| s.1.clone()).collect();
    assert_eq!(accepts, [ACCEPT_PROTOBUF, "application/json", ""]);
}

#[tokio::test]
async fn a_json_answer_to_a_protobuf_request_is_read_and_remembered() {
    let (client, seen) = client(Wire::Protobuf, |_| {
        (200, "application/json", NODE_LIST_JSON.into())
    });
    assert_eq!(list_nodes(&client).await.unwrap(), ["n-1"]);
    assert_eq!(list_nodes(&client).await.unwrap(), ["n-1"]);
    let accepts: Vec<_> = seen.lock().unwrap().iter().map(|s| s.1.clone()).collect();
    assert_eq!(accepts, [ACCEPT_PROTOBUF, ""]);
}

/// kube-apiserver writes its errors in the encoding asked for: a protobuf
/// Status reaches the caller as the same `Error::Api` a JSON one does.
#[tokio::test]
async fn a_protobuf_status_is_read_as_a_status() {
    let (client, _) = client(Wire::Protobuf, |_| {
        let status = serde_json::json!({"status": "Failure", "reason": "Forbidden", "code": 403,
            "message": "nodes is forbidden: User \"viewer\" cannot list resource \"nodes\""});
        let mut body = Vec::new();
        envelope::seal("v1", "Status", &mut body, |raw| {
            crate::model::protobuf::encode_object("Status", status.as_object().unwrap(), raw);
        });
        (403, MEDIA_TYPE, body)
    });
    let Err(kube::Error::Api(status)) = list_nodes(&client).await else {
        panic!("a 403 is an API error")
    };
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert!(
        status.message.starts_with("nodes is forbidden"),
        "{}",
        status.message
    );
}

#[tokio::test]
async fn json_mode_asks_for_nothing() {
    let (client, seen) = client(Wire::Json, |_| {
        (200, "application/json", NODE_LIST_JSON.into())
    });
    assert_eq!(list_nodes(&client).await.unwrap(), ["n-1"]);
    assert_eq!(seen.lock().unwrap()[0].1, "");
}

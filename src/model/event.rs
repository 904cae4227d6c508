//! The slim core/v1 Event: what happened to which object, and when.

use serde::{Deserialize, Serialize};

use super::{Meta, Time};

/// An event as rollcall sees it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Name, namespace, resourceVersion (of the metadata, only what
    /// [`super::meta`] keeps is decoded: events carry managed fields too).
    #[serde(default)]
    pub metadata: Meta,
    /// The object the event is about.
    #[serde(default)]
    pub involved_object: InvolvedObject,
    /// Short machine-readable reason (`BackOff`, `Pulled`, `FailedScheduling`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// How many times it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// First occurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    /// Latest occurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    /// Time of a series-style event (events.k8s.io writers fill this, not lastTimestamp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime>,
}

/// `involvedObject`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvolvedObject {
    /// Kind (`Pod`, `Node`, `DaemonSet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Namespace, for namespaced objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

impl Event {
    /// The most recent time the event is known to have happened.
    pub fn last_seen(&self) -> Option<jiff::Timestamp> {
        self.last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| self.event_time.as_ref().map(|t| t.0))
            .or_else(|| self.first_timestamp.as_ref().map(|t| t.0))
            .or_else(|| {
                self.metadata
                    .creation_timestamp
                    .map(super::Stamp::timestamp)
            })
    }
}

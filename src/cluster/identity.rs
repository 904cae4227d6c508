//! Who is acting, for the `paused-by` annotation and the journal: the
//! Kubernetes identity (what the server says with a SelfSubjectReview, else
//! the kubeconfig's user) and the local user when known. Asking is one
//! bounded request; the wording is [`crate::ops::journal::actor_of`].

use std::time::Duration;

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, PostParams};

use super::connect::Connection;

/// How long the server gets to say who this is before the kubeconfig's
/// user is taken instead.
const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// The user name the server knows this client as (SelfSubjectReview,
/// `authentication.k8s.io/v1`, Kubernetes 1.28+), or `None` when it cannot
/// say (an older server, the embedded cluster, no answer in time).
pub async fn server_username(client: &kube::Client) -> Option<String> {
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    let (params, review) = (PostParams::default(), SelfSubjectReview::default());
    let asked = api.create(&params, &review);
    let review = tokio::time::timeout(ASK_TIMEOUT, asked).await.ok()?.ok()?;
    review
        .status?
        .user_info?
        .username
        .filter(|name| !name.is_empty())
}

/// Who acts through `connection`, in words: the Kubernetes identity (the
/// server's answer, else the kubeconfig's user) with the local user and host.
pub async fn actor(connection: &Connection) -> String {
    let kube = match server_username(&connection.client).await {
        Some(name) => Some(name),
        None => connection.user.clone(),
    };
    crate::ops::journal::actor_of(kube.as_deref(), &crate::ops::journal::LocalUser::of_env())
}

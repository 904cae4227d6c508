//! Who the server says this client is (a SelfSubjectReview): one bounded
//! request. The wording of who acts is the operations' (`ops::journal`).

use std::time::Duration;

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, PostParams};

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

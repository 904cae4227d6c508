//! The one wait every simulated component's loop races against its store
//! changes: until its next timer, or for good when it has none.

use tokio::time::Instant;

/// Sleeps until `at`; with no time, never wakes (the loop's other arms do).
pub async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

//! The check every acting run makes before its first write: refused in
//! read-only mode (a dry run goes on), then the server asked whether the
//! user may do the operation (SelfSubjectAccessReview). A denial says which
//! permission is missing; in a dry run it is a note, since nothing is sent.

use crate::model::Target;
use crate::ops::error::OpsError;
use crate::ops::rbac::{self, Operation};
use crate::ops::write::Executor;

/// `Ok(None)`: allowed. `Ok(Some(note))`: a dry run the real run of which
/// would be refused, and why. `Err`: refused, and why.
pub async fn precheck(
    executor: &Executor,
    client: &kube::Client,
    target: &Target,
    operation: Operation,
    action: &str,
) -> Result<Option<String>, String> {
    if executor.read_only() {
        return Err(OpsError::ReadOnly {
            action: action.to_owned(),
        }
        .to_string());
    }
    let permissions = rbac::check(client, &target.namespace).await;
    match permissions.allows(operation) {
        Ok(()) => Ok(None),
        Err(why) => {
            let text = format!("cannot {action} {target}: {why}");
            if executor.dry_run().is_some() {
                Ok(Some(text))
            } else {
                Err(text)
            }
        }
    }
}

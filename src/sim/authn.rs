//! Authentication for the embedded API, as a real API server does it: bearer
//! tokens (the admin's, the viewer's, and short-lived tokens minted by the
//! exec credential plugin `rollcall sim-credential`, HMAC-signed with the
//! server's key and carrying their expiry), and client certificates signed by
//! the simulator's CA (user = CN, groups = O). Pure functions over the
//! request's credentials; TLS verification itself happens in `sim::server`.

use ring::hmac;

use crate::sim::auth::{EXEC_USER, Identity, OPERATORS_GROUP, VIEWER_USER, VIEWERS_GROUP};

/// The prefix of exec-plugin tokens: `rcx.<expiry unix seconds>.<hex mac>`.
const EXEC_PREFIX: &str = "rcx.";

/// The credentials the server accepts. Cheap to clone.
#[derive(Clone)]
pub struct Authenticator {
    /// The admin bearer token.
    pub admin_token: String,
    /// The viewer's bearer token.
    pub viewer_token: String,
    /// The key exec tokens are signed with (hex, as the plugin receives it).
    pub exec_key: String,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").finish_non_exhaustive()
    }
}

/// Why a request's credentials were refused (said in the 401 message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No usable credential at all.
    Missing,
    /// A token nobody issued.
    UnknownToken,
    /// An exec token past its expiry.
    Expired,
}

impl Authenticator {
    /// Who sent `authorization` (the header) over a connection whose verified
    /// client certificate said `certificate` (if any), at `now` (unix seconds).
    /// A bearer token wins over the certificate, as upstream's union authenticator.
    pub fn authenticate(
        &self,
        authorization: Option<&str>,
        certificate: Option<&Identity>,
        now: u64,
    ) -> Result<Identity, Refusal> {
        let token = authorization
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim);
        match token {
            Some(token) if constant_time_eq(token.as_bytes(), self.admin_token.as_bytes()) => {
                Ok(Identity::admin())
            }
            Some(token) if constant_time_eq(token.as_bytes(), self.viewer_token.as_bytes()) => {
                Ok(Identity::new(VIEWER_USER, &[VIEWERS_GROUP]))
            }
            Some(token) if token.starts_with(EXEC_PREFIX) => {
                let expiry =
                    verify_exec_token(&self.exec_key, token).ok_or(Refusal::UnknownToken)?;
                if expiry <= now {
                    return Err(Refusal::Expired);
                }
                Ok(Identity::new(EXEC_USER, &[OPERATORS_GROUP]))
            }
            Some(_) => Err(Refusal::UnknownToken),
            None => certificate.cloned().ok_or(Refusal::Missing),
        }
    }
}

/// Whether an `Authorization` header value carries `token`.
pub fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    header
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|sent| constant_time_eq(sent.trim().as_bytes(), token.as_bytes()))
}

/// Compares without an early exit, so response time says nothing about the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            use std::fmt::Write as _;
            let _ = write!(out, "{b:02x}");
            out
        })
}

fn mac(key: &str, expiry: u64) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    hex(hmac::sign(&key, format!("{EXEC_PREFIX}{expiry}").as_bytes()).as_ref())
}

/// A token valid until `expiry` (unix seconds), signed with `key`.
pub fn mint_exec_token(key: &str, expiry: u64) -> String {
    format!("{EXEC_PREFIX}{expiry}.{}", mac(key, expiry))
}

/// The expiry of a well-signed exec token, `None` when forged or malformed.
fn verify_exec_token(key: &str, token: &str) -> Option<u64> {
    let (expiry, sent) = token.strip_prefix(EXEC_PREFIX)?.split_once('.')?;
    let expiry: u64 = expiry.parse().ok()?;
    constant_time_eq(sent.as_bytes(), mac(key, expiry).as_bytes()).then_some(expiry)
}

/// The identity in a (verified) client certificate: CN is the user, each O a group.
pub fn certificate_identity(der: &[u8]) -> Option<Identity> {
    let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = certificate.subject();
    let user = subject.iter_common_name().next()?.as_str().ok()?.to_owned();
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_owned))
        .collect();
    Some(Identity { user, groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::auth::SIM_USER;

    fn authenticator() -> Authenticator {
        Authenticator {
            admin_token: "admin".into(),
            viewer_token: "viewer".into(),
            exec_key: "k3y".into(),
        }
    }

    #[test]
    fn tokens_map_to_their_users() {
        let a = authenticator();
        assert_eq!(
            a.authenticate(Some("Bearer admin"), None, 0).unwrap().user,
            SIM_USER
        );
        assert_eq!(
            a.authenticate(Some("Bearer viewer"), None, 0).unwrap().user,
            VIEWER_USER
        );
        assert_eq!(
            a.authenticate(Some("Bearer nope"), None, 0),
            Err(Refusal::UnknownToken)
        );
        assert_eq!(
            a.authenticate(Some("admin"), None, 0),
            Err(Refusal::Missing)
        );
        assert_eq!(a.authenticate(None, None, 0), Err(Refusal::Missing));
        let cert = Identity::new("cn", &["o"]);
        assert_eq!(a.authenticate(None, Some(&cert), 0), Ok(cert));
    }

    #[test]
    fn exec_tokens_expire_and_cannot_be_forged() {
        let a = authenticator();
        let token = mint_exec_token("k3y", 100);
        let header = format!("Bearer {token}");
        assert_eq!(
            a.authenticate(Some(&header), None, 99).unwrap().user,
            EXEC_USER
        );
        assert_eq!(
            a.authenticate(Some(&header), None, 100),
            Err(Refusal::Expired)
        );
        let forged = format!("Bearer {}", mint_exec_token("other", 100));
        assert_eq!(
            a.authenticate(Some(&forged), None, 0),
            Err(Refusal::UnknownToken)
        );
        let stretched = header.replace("rcx.100.", "rcx.200.");
        assert_eq!(
            a.authenticate(Some(&stretched), None, 0),
            Err(Refusal::UnknownToken)
        );
    }

    #[test]
    fn bearer_token_must_match_exactly() {
        assert!(bearer_matches(Some("Bearer abc"), "abc"));
        assert!(!bearer_matches(Some("Bearer abd"), "abc"));
        assert!(!bearer_matches(Some("abc"), "abc"));
        assert!(!bearer_matches(None, "abc"));
    }
}

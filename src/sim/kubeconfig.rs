//! The kubeconfig that points kubectl (or any client) at the embedded API:
//! one cluster with the CA inline, one user with the bearer token, one
//! context. Rendering and writing only.

use std::path::Path;

use base64::Engine as _;

/// The cluster, user and context name used in written kubeconfigs.
pub const CONTEXT_NAME: &str = "rollcall-sim";

/// Renders a kubeconfig for `server` (`https://127.0.0.1:PORT`).
pub fn render(server: &str, ca_pem: &str, token: Option<&str>) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let user_body = match token {
        Some(token) => format!("  user:\n    token: {token}\n"),
        None => "  user: {}\n".to_owned(),
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {CONTEXT_NAME}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n\
         users:\n- name: {CONTEXT_NAME}\n{user_body}contexts:\n- name: {CONTEXT_NAME}\n  context:\n    cluster: {CONTEXT_NAME}\n    user: {CONTEXT_NAME}\n    namespace: default\n\
         current-context: {CONTEXT_NAME}\npreferences: {{}}\n"
    )
}

/// Writes the kubeconfig with owner-only permissions (it holds the token).
pub fn write(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_valid_yaml_with_token_and_ca() {
        let text = render("https://127.0.0.1:6443", "PEM", Some("secret"));
        let parsed: serde_json::Value = serde_norway::from_str(&text).unwrap();
        assert_eq!(
            parsed["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:6443"
        );
        assert_eq!(
            parsed["clusters"][0]["cluster"]["certificate-authority-data"],
            "UEVN"
        );
        assert_eq!(parsed["users"][0]["user"]["token"], "secret");
        assert_eq!(parsed["current-context"], CONTEXT_NAME);
        let anonymous: serde_json::Value =
            serde_norway::from_str(&render("https://x", "PEM", None)).unwrap();
        assert!(
            anonymous["users"][0]["user"]
                .as_object()
                .unwrap()
                .is_empty()
        );
    }
}

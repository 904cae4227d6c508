//! The kubeconfig that points kubectl (or any client) at the embedded API:
//! one cluster with the CA inline and one context per way in — `rollcall-sim`
//! (admin bearer token), `rollcall-sim-cert` (client certificate, EC key),
//! `rollcall-sim-exec` (exec credential plugin: this binary's hidden
//! `sim-credential` command), `rollcall-sim-viewer` (read-only user of one
//! namespace), `rollcall-sim-tokenfile` (the admin token read from a
//! `tokenFile` beside the kubeconfig) and `rollcall-sim-tls-name` (a second
//! cluster entry reaching the server by IP and verifying its certificate by
//! `tls-server-name`, as through a bastion or tunnel). Rendering, and writing
//! it safely: created 0600 in one step, never through a symlink.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;

/// The cluster name and the admin context (the current context).
pub const CONTEXT_NAME: &str = "rollcall-sim";
/// The client-certificate context.
pub const CERT_CONTEXT: &str = "rollcall-sim-cert";
/// The exec-plugin context.
pub const EXEC_CONTEXT: &str = "rollcall-sim-exec";
/// The namespace-scoped viewer context.
pub const VIEWER_CONTEXT: &str = "rollcall-sim-viewer";
/// The context whose user reads the admin token from a `tokenFile`.
pub const TOKEN_FILE_CONTEXT: &str = "rollcall-sim-tokenfile";
/// The context (and cluster entry) that names the server by `tls-server-name`.
pub const TLS_NAME_CONTEXT: &str = "rollcall-sim-tls-name";
/// The name the server certificate also carries (a DNS SAN), for `tls-server-name`.
pub const TLS_SERVER_NAME: &str = "rollcall-sim.internal";

/// Where the token file of a kubeconfig at `kubeconfig` goes: beside it, named after it.
pub fn token_file_path(kubeconfig: &Path) -> PathBuf {
    let name = kubeconfig
        .file_name()
        .map_or_else(|| "kubeconfig".into(), |n| n.to_string_lossy().into_owned());
    kubeconfig.with_file_name(format!("{name}.token"))
}

/// Removes a kubeconfig this process wrote and its token file (missing is fine).
pub fn remove(kubeconfig: &Path) {
    for path in [kubeconfig.to_path_buf(), token_file_path(kubeconfig)] {
        if let Err(err) = std::fs::remove_file(&path)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), %err, "cannot remove a file written for kubectl");
        }
    }
}

/// Everything a kubeconfig for the embedded cluster names.
#[derive(Clone, Debug, Default)]
pub struct KubeconfigParts {
    /// `https://127.0.0.1:PORT`.
    pub server: String,
    /// The CA (PEM).
    pub ca_pem: String,
    /// The admin bearer token.
    pub admin_token: String,
    /// The client certificate and key (PEM), when the server issued one.
    pub client_cert: Option<(String, String)>,
    /// The exec plugin: command (this binary) and its arguments.
    pub exec: Option<(String, Vec<String>)>,
    /// The viewer's token and namespace.
    pub viewer: Option<(String, String)>,
    /// The file holding the admin token (absolute), when one was written.
    pub token_file: Option<PathBuf>,
    /// The certificate name for the `tls-server-name` cluster entry.
    pub tls_server_name: Option<String>,
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A YAML scalar, double-quoted (JSON strings are valid YAML).
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Renders the kubeconfig.
pub fn render(parts: &KubeconfigParts) -> String {
    let mut users = format!(
        "- name: {CONTEXT_NAME}\n  user:\n    token: {}\n",
        quoted(&parts.admin_token)
    );
    // (context and user, cluster, namespace)
    let mut contexts = vec![(CONTEXT_NAME, CONTEXT_NAME, "default".to_owned())];
    if let Some((cert, key)) = &parts.client_cert {
        let _ = write!(
            users,
            "- name: {CERT_CONTEXT}\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(cert),
            b64(key)
        );
        contexts.push((CERT_CONTEXT, CONTEXT_NAME, "default".to_owned()));
    }
    if let Some(exec) = &parts.exec {
        users.push_str(&exec_user(EXEC_CONTEXT, exec));
        contexts.push((EXEC_CONTEXT, CONTEXT_NAME, "default".to_owned()));
    }
    if let Some((token, namespace)) = &parts.viewer {
        let _ = write!(
            users,
            "- name: {VIEWER_CONTEXT}\n  user:\n    token: {}\n",
            quoted(token)
        );
        contexts.push((VIEWER_CONTEXT, CONTEXT_NAME, namespace.clone()));
    }
    if let Some(path) = &parts.token_file {
        let _ = write!(
            users,
            "- name: {TOKEN_FILE_CONTEXT}\n  user:\n    tokenFile: {}\n",
            quoted(&path.to_string_lossy())
        );
        contexts.push((TOKEN_FILE_CONTEXT, CONTEXT_NAME, "default".to_owned()));
    }
    let cluster = |name: &str, extra: &str| {
        format!(
            "- name: {name}\n  cluster:\n    server: {}\n    certificate-authority-data: {}\n{extra}",
            quoted(&parts.server),
            b64(&parts.ca_pem)
        )
    };
    let mut clusters = cluster(CONTEXT_NAME, "");
    if let Some(name) = &parts.tls_server_name {
        clusters.push_str(&cluster(
            TLS_NAME_CONTEXT,
            &format!("    tls-server-name: {}\n", quoted(name)),
        ));
        contexts.push((TLS_NAME_CONTEXT, TLS_NAME_CONTEXT, "default".to_owned()));
    }
    let mut context_text = String::new();
    for (name, cluster, namespace) in &contexts {
        // The tls-server-name context is the admin reaching the server another way.
        let user = if *name == TLS_NAME_CONTEXT {
            CONTEXT_NAME
        } else {
            name
        };
        let _ = write!(
            context_text,
            "- name: {name}\n  context:\n    cluster: {cluster}\n    user: {user}\n    namespace: {}\n",
            quoted(namespace)
        );
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}\
         users:\n{users}contexts:\n{context_text}current-context: {CONTEXT_NAME}\npreferences: {{}}\n"
    )
}

/// How the members' users of a fleet kubeconfig authenticate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemberAuth {
    /// The member's admin bearer token.
    #[default]
    Token,
    /// The member's exec credential plugin (`rollcall sim-credential`), whose
    /// tokens expire (`rollcall sim --exec-auth`); a member without one falls
    /// back to its token.
    Exec,
}

/// Renders the kubeconfig of an embedded fleet: for each member a cluster, a
/// user (authenticating as `auth` says) and a context, all three named as the
/// member (`rollcall-sim-1` …), the first member's context current.
pub fn render_fleet(members: &[(String, KubeconfigParts)], auth: MemberAuth) -> String {
    let (mut clusters, mut users, mut contexts) = (String::new(), String::new(), String::new());
    for (name, parts) in members {
        let _ = write!(
            clusters,
            "- name: {name}\n  cluster:\n    server: {}\n    certificate-authority-data: {}\n",
            quoted(&parts.server),
            b64(&parts.ca_pem)
        );
        match (&parts.exec, auth) {
            (Some(exec), MemberAuth::Exec) => users.push_str(&exec_user(name, exec)),
            _ => {
                let _ = write!(
                    users,
                    "- name: {name}\n  user:\n    token: {}\n",
                    quoted(&parts.admin_token)
                );
            }
        }
        let _ = write!(
            contexts,
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: \"default\"\n"
        );
    }
    let current = members.first().map_or("", |(name, _)| name.as_str());
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n{users}contexts:\n{contexts}current-context: {current}\npreferences: {{}}\n"
    )
}

/// A user entry `name` running the exec plugin `(command, args)`.
fn exec_user(name: &str, (command, args): &(String, Vec<String>)) -> String {
    let args: Vec<String> = args.iter().map(|a| quoted(a)).collect();
    format!(
        "- name: {name}\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      args: [{}]\n      interactiveMode: Never\n      provideClusterInfo: false\n",
        quoted(command),
        args.join(", ")
    )
}

/// Writes the kubeconfig (it holds credentials): refuses a symlink at
/// `path`, writes a new file created with mode 0600 next to it (so no
/// reader ever sees it with wider permissions or half-written), then renames
/// it into place (a rename never follows a symlink).
pub fn write(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "refusing to write the kubeconfig through a symlink (it holds credentials); remove it or name another path",
        ));
    }
    let temporary = temporary_path(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    let written = file
        .write_all(contents.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

fn temporary_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "kubeconfig".into(), |n| n.to_string_lossy().into_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    path.with_file_name(format!(".{name}.{}-{nanos}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> KubeconfigParts {
        KubeconfigParts {
            server: "https://127.0.0.1:6443".into(),
            ca_pem: "PEM".into(),
            admin_token: "secret".into(),
            client_cert: Some(("CERT".into(), "KEY".into())),
            exec: Some(("/bin/rollcall".into(), vec!["sim-credential".into()])),
            viewer: Some(("view".into(), "kube-system".into())),
            token_file: Some("/tmp/kc.token".into()),
            tls_server_name: Some(TLS_SERVER_NAME.into()),
        }
    }

    #[test]
    fn renders_valid_yaml_with_every_context() {
        let text = render(&parts());
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
        assert_eq!(parsed["users"][1]["user"]["client-key-data"], "S0VZ");
        assert_eq!(
            parsed["users"][2]["user"]["exec"]["command"],
            "/bin/rollcall"
        );
        assert_eq!(
            parsed["users"][2]["user"]["exec"]["args"][0],
            "sim-credential"
        );
        assert_eq!(parsed["users"][3]["user"]["token"], "view");
        assert_eq!(parsed["contexts"][3]["name"], VIEWER_CONTEXT);
        assert_eq!(parsed["contexts"][3]["context"]["namespace"], "kube-system");
        assert_eq!(parsed["users"][4]["user"]["tokenFile"], "/tmp/kc.token");
        assert_eq!(parsed["contexts"][4]["name"], TOKEN_FILE_CONTEXT);
        assert_eq!(parsed["clusters"][1]["name"], TLS_NAME_CONTEXT);
        assert_eq!(
            parsed["clusters"][1]["cluster"]["tls-server-name"],
            TLS_SERVER_NAME
        );
        assert_eq!(
            parsed["contexts"][5]["context"]["cluster"],
            TLS_NAME_CONTEXT
        );
        assert_eq!(parsed["contexts"][5]["context"]["user"], CONTEXT_NAME);
        assert_eq!(parsed["current-context"], CONTEXT_NAME);
    }

    #[test]
    fn a_fleet_has_one_context_per_member_and_the_first_is_current() {
        let members: Vec<(String, KubeconfigParts)> = (1..=3)
            .map(|i| {
                let parts = KubeconfigParts {
                    server: format!("https://127.0.0.1:{}", 6440 + i),
                    admin_token: format!("token-{i}"),
                    ..parts()
                };
                (format!("rollcall-sim-{i}"), parts)
            })
            .collect();
        let parsed: serde_json::Value =
            serde_norway::from_str(&render_fleet(&members, MemberAuth::Token)).unwrap();
        assert_eq!(parsed["current-context"], "rollcall-sim-1");
        for i in 0..3 {
            let name = format!("rollcall-sim-{}", i + 1);
            assert_eq!(parsed["contexts"][i]["name"], name.as_str());
            assert_eq!(parsed["contexts"][i]["context"]["cluster"], name.as_str());
            assert_eq!(parsed["contexts"][i]["context"]["user"], name.as_str());
            assert_eq!(
                parsed["clusters"][i]["cluster"]["server"],
                format!("https://127.0.0.1:{}", 6441 + i).as_str()
            );
            assert_eq!(
                parsed["users"][i]["user"]["token"],
                format!("token-{}", i + 1).as_str()
            );
        }
        let exec: serde_json::Value =
            serde_norway::from_str(&render_fleet(&members, MemberAuth::Exec)).unwrap();
        for i in 0..3 {
            let user = &exec["users"][i]["user"];
            assert_eq!(user["token"], serde_json::Value::Null);
            assert_eq!(user["exec"]["command"], "/bin/rollcall");
            assert_eq!(user["exec"]["args"][0], "sim-credential");
        }
    }

    #[cfg(unix)]
    #[test]
    fn writes_0600_and_refuses_symlinks() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        write(&path, "one").unwrap();
        write(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let target = dir.path().join("target");
        std::fs::write(&target, "precious").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write(&link, "token").unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            3,
            "no temporary left"
        );
    }
}

//! TLS for the embedded API: a CA, a server certificate (SAN IP 127.0.0.1,
//! `localhost`) and a client certificate (EC P-256 key, CN
//! `rollcall-sim-cert`, O `rollcall:operators`) made fresh at every start with
//! rcgen, and the rustls server configuration, which asks for (but does not
//! require) a client certificate signed by the CA. kubectl sends its bearer
//! token only over TLS, which is why the simulator serves HTTPS at all. No
//! files are written here.

use std::sync::Arc;

use crate::sim::auth::{CERT_USER, OPERATORS_GROUP};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The ALPN name of HTTP/2 over TLS.
pub const ALPN_H2: &[u8] = b"h2";

/// Why the certificates or the TLS configuration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Key or certificate generation failed.
    #[error("cannot generate the simulator's certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls rejected the configuration.
    #[error("cannot configure TLS: {0}")]
    Configure(#[from] rustls::Error),
}

/// The generated CA and the server's TLS configuration.
#[derive(Clone)]
pub struct TlsMaterial {
    /// The CA certificate, PEM (what kubeconfigs embed).
    pub ca_pem: String,
    /// The CA certificate, DER (what in-process clients trust).
    pub ca_der: Vec<u8>,
    /// The client certificate (PEM) for the `rollcall-sim-cert` user.
    pub client_cert_pem: String,
    /// Its private key (PEM, PKCS#8 EC P-256).
    pub client_key_pem: String,
    /// The rustls server configuration (ALPN `h2`, then `http/1.1`).
    pub server_config: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsMaterial").finish_non_exhaustive()
    }
}

/// Makes a CA and a server certificate for the given extra names (the
/// loopback IP and `localhost` are always included).
pub fn generate(extra_names: &[String]) -> Result<TlsMaterial, TlsError> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "rollcall-sim-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut names = vec![
        "127.0.0.1".to_owned(),
        "localhost".to_owned(),
        super::kubeconfig::TLS_SERVER_NAME.to_owned(),
    ];
    names.extend(extra_names.iter().filter(|n| !n.is_empty()).cloned());
    names.dedup();
    let mut server_params = CertificateParams::new(names)?;
    server_params
        .distinguished_name
        .push(DnType::CommonName, "rollcall-sim-apiserver");
    server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let server_key = KeyPair::generate()?;
    let server_cert = server_params.signed_by(&server_key, &issuer)?;

    let mut client_params = CertificateParams::new(Vec::<String>::new())?;
    client_params
        .distinguished_name
        .push(DnType::CommonName, CERT_USER);
    client_params
        .distinguished_name
        .push(DnType::OrganizationName, OPERATORS_GROUP);
    client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    client_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let client_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let client_cert = client_params.signed_by(&client_key, &issuer)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca_cert.der().clone())?;
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .map_err(|e| TlsError::Configure(rustls::Error::General(e.to_string())))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![server_cert.der().clone(), ca_cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        )?;
    // h2 first, as kube-apiserver offers it; kubectl and curl may still
    // choose HTTP/1.1.
    config.alpn_protocols = vec![ALPN_H2.to_vec(), b"http/1.1".to_vec()];
    Ok(TlsMaterial {
        ca_pem: ca_cert.pem(),
        ca_der: CertificateDer::clone(ca_cert.der()).to_vec(),
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
        server_config: Arc::new(config),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_a_ca_and_a_config() {
        let material = generate(&[]).unwrap();
        assert!(material.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(!material.ca_der.is_empty());
        assert!(material.client_key_pem.contains("PRIVATE KEY"));
        let (_, der) =
            x509_parser::pem::parse_x509_pem(material.client_cert_pem.as_bytes()).unwrap();
        let who = crate::sim::authn::certificate_identity(&der.contents).unwrap();
        assert_eq!(who.user, CERT_USER);
        assert_eq!(who.groups, vec![OPERATORS_GROUP.to_owned()]);
        assert_eq!(
            material.server_config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }
}

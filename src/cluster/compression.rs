//! Whether responses are asked for gzip-compressed (`--compression`), as
//! client-go asks by default: a real API server compresses responses over
//! 128 KB for a client that sends `Accept-Encoding: gzip`, and on a slow
//! link (a VPN, 20–100 Mbit/s) a large cluster's lists shrink several
//! times. On loopback the wire is free and compressing costs both sides CPU,
//! so `auto` leaves it off there. kube-rs decompresses as the body streams.
//!
//! Why the address is the evidence (issue 37 asked for evidence such as the
//! first page's throughput): the choice is made when the client is built,
//! before any page, and it is kept for the connection; gzip pays wherever
//! the link is slower than the two sides can compress and decompress, and
//! the only link known to be faster is loopback (docs/performance.md, "The
//! wire": on loopback gzip costs time, over 100 Mbit/s it saves most of it).
//! A first page's throughput would mostly measure the server's own CPU on a
//! loaded or distant server, not the link, and could switch a VPN user off
//! gzip exactly when it helps most. The log line says which rule chose.

use std::net::IpAddr;

/// `--compression`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    /// On, except to a loopback address or where the kubeconfig's cluster
    /// says `disable-compression: true`.
    #[default]
    Auto,
    /// Always ask for compressed responses.
    On,
    /// Never ask.
    Off,
}

/// What was chosen for one connection, and why (for the log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Ask for compressed responses.
    pub compress: bool,
    /// Why, in a few words.
    pub why: &'static str,
}

/// The choice for a server at `url` (`kubeconfig_disables`: its cluster
/// entry says `disable-compression: true`).
pub fn choose(mode: Compression, url: &http::Uri, kubeconfig_disables: bool) -> Choice {
    let (compress, why) = match mode {
        Compression::On => (true, "--compression on"),
        Compression::Off => (false, "--compression off"),
        Compression::Auto if is_loopback(url) => (
            false,
            "loopback server: compressing would cost more CPU than the wire saves",
        ),
        Compression::Auto if kubeconfig_disables => {
            (false, "the kubeconfig's cluster sets disable-compression")
        }
        Compression::Auto => (true, "remote server"),
    };
    Choice { compress, why }
}

/// Applies the choice to `config` and logs it.
pub fn apply(mode: Compression, config: &mut kube::Config) {
    let choice = choose(mode, &config.cluster_url, config.disable_compression);
    config.disable_compression = !choice.compress;
    tracing::info!(
        server = %config.cluster_url,
        compression = if choice.compress { "gzip" } else { "off" },
        "response compression: {}",
        choice.why
    );
}

pub(crate) fn is_loopback(url: &http::Uri) -> bool {
    let Some(host) = url.host() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(text: &str) -> http::Uri {
        text.parse().expect("a URL")
    }

    #[test]
    fn auto_compresses_remote_servers_only() {
        let remote = uri("https://api.prod.example.com:6443");
        assert!(choose(Compression::Auto, &remote, false).compress);
        for local in [
            "https://127.0.0.1:6443",
            "https://[::1]:6443",
            "https://localhost:8443",
            "https://127.5.0.1",
        ] {
            assert!(
                !choose(Compression::Auto, &uri(local), false).compress,
                "{local}"
            );
        }
        // The kubeconfig's word wins over auto, not over an explicit flag.
        assert!(!choose(Compression::Auto, &remote, true).compress);
        assert!(choose(Compression::On, &uri("https://127.0.0.1"), true).compress);
        assert!(!choose(Compression::Off, &remote, false).compress);
    }
}

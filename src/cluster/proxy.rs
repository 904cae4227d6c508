//! Which proxy a kubeconfig cluster is reached through, decided as kubectl
//! (client-go) decides it, not as kube-rs does: the cluster entry's
//! `proxy-url` is always used; without one, `HTTPS_PROXY`/`https_proxy`
//! (`HTTP_PROXY` for an `http://` server) is used unless the *server* is
//! loopback or matches `NO_PROXY`. kube-rs matches `NO_PROXY` against the
//! proxy's own host instead, which drops `proxy-url: socks5://localhost:1080`
//! whenever `NO_PROXY=localhost` and proxies loopback clusters.

use std::net::IpAddr;

/// The proxy for `server`: `configured` is the cluster entry's `proxy-url`;
/// `env` reads an environment variable.
pub fn choose(
    configured: Option<&str>,
    server: &http::Uri,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<http::Uri>, http::uri::InvalidUri> {
    let nonempty = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if let Some(url) = configured.filter(|url| !url.trim().is_empty()) {
        return url.trim().parse().map(Some);
    }
    let from_env = if server.scheme_str() == Some("http") {
        nonempty("HTTP_PROXY").or_else(|| nonempty("http_proxy"))
    } else {
        nonempty("HTTPS_PROXY").or_else(|| nonempty("https_proxy"))
    };
    let Some(url) = from_env else {
        return Ok(None);
    };
    let host = server.host().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let no_proxy = nonempty("NO_PROXY").or_else(|| nonempty("no_proxy"));
    if is_loopback(host) || no_proxy.is_some_and(|list| bypassed(&list, host)) {
        return Ok(None);
    }
    url.trim().parse().map(Some)
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a `NO_PROXY` list names `host`: `*`, an IP, a CIDR range, a domain
/// (itself and its subdomains; a leading `.` or `*.` means the same). Ports in
/// entries are ignored.
fn bypassed(list: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let ip = host.parse::<IpAddr>().ok();
    list.split(',').map(str::trim).any(|entry| {
        if entry == "*" {
            return true;
        }
        if let Some((net, bits)) = entry.split_once('/') {
            return match (ip, net.parse::<IpAddr>(), bits.parse::<u32>()) {
                (Some(ip), Ok(net), Ok(bits)) => in_range(ip, net, bits),
                _ => false,
            };
        }
        let entry = entry.trim_start_matches('[');
        let name = match entry.rsplit_once(':') {
            // `host:port` (an IPv6 address alone has more than one colon).
            Some((name, port)) if !name.contains(':') && port.parse::<u16>().is_ok() => name,
            _ => entry,
        };
        let name = name.trim_end_matches(']').to_ascii_lowercase();
        if let (Some(ip), Ok(entry_ip)) = (ip, name.parse::<IpAddr>()) {
            return ip == entry_ip;
        }
        let domain = name.trim_start_matches('*').trim_start_matches('.');
        !domain.is_empty() && (host == domain || host.ends_with(&format!(".{domain}")))
    })
}

fn in_range(ip: IpAddr, net: IpAddr, bits: u32) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    fn chosen(configured: Option<&str>, server: &str, vars: &[(&str, &str)]) -> Option<String> {
        choose(configured, &server.parse().unwrap(), env(vars))
            .unwrap()
            .map(|uri| uri.to_string())
    }

    #[test]
    fn the_kubeconfig_proxy_wins_even_for_loopback_and_no_proxy() {
        let vars = [
            ("NO_PROXY", "localhost,127.0.0.1"),
            ("HTTPS_PROXY", "http://env:3128"),
        ];
        assert_eq!(
            chosen(
                Some("socks5://localhost:1080"),
                "https://127.0.0.1:6443",
                &vars
            ),
            Some("socks5://localhost:1080/".to_owned())
        );
    }

    #[test]
    fn the_environment_proxy_skips_loopback_and_no_proxy_servers() {
        let vars = [
            ("HTTPS_PROXY", "http://env:3128"),
            (
                "NO_PROXY",
                "internal.example, 10.0.0.0/8,.corp,192.168.1.5:443",
            ),
        ];
        let via_env = Some("http://env:3128/".to_owned());
        assert_eq!(chosen(None, "https://api.example.com", &vars), via_env);
        assert_eq!(chosen(None, "https://127.0.0.1:6443", &vars), None);
        assert_eq!(chosen(None, "https://localhost:6443", &vars), None);
        assert_eq!(chosen(None, "https://[::1]:6443", &vars), None);
        assert_eq!(chosen(None, "https://k8s.internal.example", &vars), None);
        assert_eq!(chosen(None, "https://internal.example", &vars), None);
        assert_eq!(chosen(None, "https://notinternal.example", &vars), via_env);
        assert_eq!(chosen(None, "https://10.20.30.40:6443", &vars), None);
        assert_eq!(chosen(None, "https://11.0.0.1:6443", &vars), via_env);
        assert_eq!(chosen(None, "https://api.corp", &vars), None);
        assert_eq!(chosen(None, "https://192.168.1.5", &vars), None);
        assert_eq!(chosen(None, "https://192.168.1.6", &vars), via_env);
    }

    #[test]
    fn the_scheme_picks_the_variable_and_none_is_no_proxy() {
        let vars = [("http_proxy", "http://plain:80")];
        assert_eq!(chosen(None, "https://api.example.com", &vars), None);
        assert_eq!(
            chosen(None, "http://api.example.com", &vars),
            Some("http://plain:80/".to_owned())
        );
        assert_eq!(
            chosen(None, "https://api.example.com", &[("NO_PROXY", "*")]),
            None
        );
        assert_eq!(
            chosen(
                None,
                "https://a.example",
                &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "*")]
            ),
            None
        );
    }
}

//! Whether responses are asked for gzip-compressed (`--compression`), as
//! client-go asks by default: a real API server compresses responses over
//! 128 KB for a client that sends `Accept-Encoding: gzip`, and on a slow
//! link (a VPN, 20–100 Mbit/s) a large cluster's lists shrink several
//! times. Compressing costs both sides CPU, so on a fast link it loses:
//! `auto` chooses per connection from evidence, in [`choose`] alone, and
//! logs what it chose and why:
//! - a loopback address: the wire is free there; off;
//! - the kubeconfig's `disable-compression: true`: off;
//! - otherwise the first list pages' throughput, measured uncompressed
//!   (`compression_probe`, which applies the choice): gzip below [`COMPRESS_BELOW_MBIT`],
//!   off at or above it (docs/performance.md, "The wire").
//!
//! kube-rs decompresses as the body streams.

use std::net::IpAddr;
use std::time::Duration;

/// `--compression`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    /// Chosen from evidence: off to a loopback address or where the
    /// kubeconfig's cluster says `disable-compression: true`, otherwise
    /// from the first list pages' throughput.
    #[default]
    Auto,
    /// Always ask for compressed responses.
    On,
    /// Never ask.
    Off,
}

/// Below this link throughput (Mbit/s of list bodies, measured
/// uncompressed) gzip pays. Measured at 65,000 nodes (`examples/wire.rs`,
/// the embedded cluster's compression on the same two cores as the
/// console, a quiet machine): over 1 Gbit/s gzip protobuf loads in 4.0 s,
/// CPU-bound, plain protobuf in 5.0 s, link-bound; plain would tie at about
/// 1.25 Gbit/s. A real API server compresses on its own cores, which moves
/// the crossing up; the line sits at 2 Gbit/s. (The probe read the 1 Gbit/s
/// link as 1.2 Gbit/s, 100 Mbit/s as 102, loopback as several Gbit/s.)
pub const COMPRESS_BELOW_MBIT: f64 = 2_000.0;

/// Bytes received over the time spent receiving them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throughput {
    /// Bytes of list bodies.
    pub bytes: u64,
    /// The time at least one of those lists was open.
    pub busy: Duration,
}

impl Throughput {
    /// Megabits a second (0 when no time was measured).
    pub fn mbit_per_second(&self) -> f64 {
        #[allow(
            clippy::cast_precision_loss,
            reason = "a rate for a threshold and a log"
        )]
        let bits = self.bytes as f64 * 8.0;
        let secs = self.busy.as_secs_f64();
        if secs > 0.0 {
            bits / secs / 1e6
        } else {
            f64::INFINITY
        }
    }
}

/// What is known of a connection when choosing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// The server's address is a loopback one.
    pub loopback: bool,
    /// Its kubeconfig cluster says `disable-compression: true`.
    pub kubeconfig_disables: bool,
    /// The first list pages' throughput, uncompressed, once measured.
    pub measured: Option<Throughput>,
}

/// What was chosen for one connection, and why (for the log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Ask for compressed responses.
    pub compress: bool,
    /// Why, in a few words.
    pub why: String,
}

/// A choice, or the measurement it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Chosen.
    Chosen(Choice),
    /// Measure the first list pages uncompressed, then choose.
    Measure,
}

/// The one place `--compression` is decided.
pub fn choose(mode: Compression, evidence: &Evidence) -> Decision {
    let chosen = |compress, why: &str| {
        Decision::Chosen(Choice {
            compress,
            why: why.to_owned(),
        })
    };
    match mode {
        Compression::On => chosen(true, "--compression on"),
        Compression::Off => chosen(false, "--compression off"),
        Compression::Auto if evidence.loopback => chosen(
            false,
            "loopback server: compressing would cost more CPU than the wire saves",
        ),
        Compression::Auto if evidence.kubeconfig_disables => {
            chosen(false, "the kubeconfig's cluster sets disable-compression")
        }
        Compression::Auto => match evidence.measured {
            None => Decision::Measure,
            Some(measured) => {
                let rate = measured.mbit_per_second();
                #[allow(clippy::cast_precision_loss, reason = "megabytes for a log")]
                let seen = format!(
                    "the first list pages came uncompressed at {rate:.0} Mbit/s ({:.1} MB in {} ms)",
                    measured.bytes as f64 / 1e6,
                    measured.busy.as_millis()
                );
                if rate < COMPRESS_BELOW_MBIT {
                    chosen(
                        true,
                        &format!(
                            "{seen}, below {COMPRESS_BELOW_MBIT:.0} Mbit/s: the link costs more than compressing"
                        ),
                    )
                } else {
                    chosen(
                        false,
                        &format!(
                            "{seen}, at or above {COMPRESS_BELOW_MBIT:.0} Mbit/s: compressing would cost more CPU than the link saves"
                        ),
                    )
                }
            }
        },
    }
}

/// Logs a choice for the connection to `server`.
pub fn log(server: &str, choice: &Choice) {
    tracing::info!(
        server,
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

    fn compress(mode: Compression, evidence: Evidence) -> Option<bool> {
        match choose(mode, &evidence) {
            Decision::Chosen(choice) => Some(choice.compress),
            Decision::Measure => None,
        }
    }

    fn measured(mbit: u32) -> Evidence {
        // 4 MB at `mbit` Mbit/s.
        let bytes: u32 = 4_000_000;
        Evidence {
            measured: Some(Throughput {
                bytes: u64::from(bytes),
                busy: Duration::from_secs_f64(f64::from(bytes) * 8.0 / (f64::from(mbit) * 1e6)),
            }),
            ..Evidence::default()
        }
    }

    #[test]
    fn auto_chooses_from_the_address_then_from_the_measured_link() {
        let remote = Evidence::default();
        assert_eq!(compress(Compression::Auto, remote), None, "measure first");
        for local in [
            "https://127.0.0.1:6443",
            "https://[::1]:6443",
            "https://localhost:8443",
            "https://127.5.0.1",
        ] {
            assert!(is_loopback(&uri(local)), "{local}");
        }
        assert!(!is_loopback(&uri("https://api.prod.example.com:6443")));
        let loopback = Evidence {
            loopback: true,
            ..measured(20)
        };
        assert_eq!(compress(Compression::Auto, loopback), Some(false));
        // The kubeconfig's word wins over auto, not over an explicit flag.
        let disabled = Evidence {
            kubeconfig_disables: true,
            ..measured(20)
        };
        assert_eq!(compress(Compression::Auto, disabled), Some(false));
        assert_eq!(compress(Compression::On, disabled), Some(true));
        assert_eq!(compress(Compression::Off, measured(20)), Some(false));
        // A VPN, 1 Gbit/s: gzip; 2.5 and 10 Gbit/s: off.
        for (mbit, gzip) in [
            (20, true),
            (100, true),
            (1000, true),
            (2500, false),
            (10_000, false),
        ] {
            assert_eq!(
                compress(Compression::Auto, measured(mbit)),
                Some(gzip),
                "{mbit} Mbit/s"
            );
        }
        let Decision::Chosen(choice) = choose(Compression::Auto, &measured(100)) else {
            panic!("chosen")
        };
        assert!(
            choice.why.contains("at 100 Mbit/s (4.0 MB in 320 ms)"),
            "{}",
            choice.why
        );
    }
}

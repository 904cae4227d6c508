//! Read-your-writes for decisions made from a watch cache: after a write to
//! the DaemonSet succeeds, the next decision must wait until the watch has
//! delivered that write (or a later one). Deciding from a view that predates
//! one's own write undoes it: a rollback that cleared a pause read the old
//! pause back from the cache and stopped itself ("stopped by a pause by …").
//!
//! Pure: compares resourceVersions only.

/// Whether a cached object at `cached` already reflects a write that the API
/// server answered with `written`.
///
/// resourceVersions are opaque to clients, except that a watch delivers
/// events in order: the cache passes through `written` itself unless a relist
/// coalesced it into a later state. Equality covers the first case; for the
/// second, both etcd and the embedded cluster issue increasing integers, so a
/// larger integer is later. Anything else is not (yet) known to be seen.
pub fn reflects(cached: Option<&str>, written: &str) -> bool {
    let Some(cached) = cached else {
        return false;
    };
    if cached == written {
        return true;
    }
    matches!(
        (cached.parse::<u64>(), written.parse::<u64>()),
        (Ok(cached), Ok(written)) if cached > written
    )
}

#[cfg(test)]
mod tests {
    use super::reflects;

    #[test]
    fn a_cache_reflects_a_write_at_or_after_its_resource_version() {
        let cases = [
            ("same version", Some("42"), "42", true),
            (
                "later integer (a relist coalesced it)",
                Some("50"),
                "42",
                true,
            ),
            ("earlier integer: the watch lags", Some("41"), "42", false),
            ("nothing cached yet", None, "42", false),
            ("opaque and different: unknown", Some("abc"), "abd", false),
            ("opaque and equal", Some("abc"), "abc", true),
            // Lexical order would call "9" later than "10".
            ("numeric, not lexical", Some("9"), "10", false),
        ];
        for (name, cached, written, expected) in cases {
            assert_eq!(reflects(cached, written), expected, "{name}");
        }
    }
}

//! An API timestamp held in 8 bytes.
//!
//! The API writes times (`metav1.Time`) to the second: upstream marshals
//! them as RFC 3339 without a fraction, so a whole number of seconds is all
//! any client ever reads. `k8s_openapi`'s `Time` keeps a `jiff::Timestamp`
//! (16 bytes, 24 as an `Option`); a node and its pod hold a dozen, so at
//! 65,000 nodes that was ~13 MB of room for nanoseconds the API never sends.
//! A [`Stamp`] is the seconds alone, and `Option<Stamp>` is 8 bytes too (the
//! value is never zero, see [`Stamp::new`]). A fraction in the input (a
//! hand-written dump) is dropped, as the API server would drop it.

use std::fmt;
use std::num::NonZeroI64;

use jiff::Timestamp;

/// An instant, to the second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(NonZeroI64);

/// Seconds are stored counted from 2^40 s (35,000 years) before the epoch,
/// beyond jiff's range (±10,000 years), so the stored value is at least 1
/// (room for `Option`'s `None`) and ordered as the instants are.
const ORIGIN: i64 = -(1 << 40);

impl Stamp {
    /// The second of `at` (a fraction is dropped: the instant rounds down).
    pub fn new(at: Timestamp) -> Self {
        let seconds = at.as_second() - i64::from(at.subsec_nanosecond() < 0);
        let stored = NonZeroI64::new(seconds - ORIGIN).unwrap_or(NonZeroI64::MIN);
        Stamp(stored)
    }

    /// The instant.
    pub fn timestamp(self) -> Timestamp {
        Timestamp::from_second(self.0.get() + ORIGIN).unwrap_or(Timestamp::MIN)
    }
}

impl From<Timestamp> for Stamp {
    fn from(at: Timestamp) -> Self {
        Stamp::new(at)
    }
}

impl From<Stamp> for Timestamp {
    fn from(stamp: Stamp) -> Self {
        stamp.timestamp()
    }
}

impl fmt::Debug for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Stamp {
    /// RFC 3339 in UTC, to the second, as the API writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.timestamp(), f)
    }
}

impl serde::Serialize for Stamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Stamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl serde::de::Visitor<'_> for TextVisitor {
            type Value = Stamp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Stamp, E> {
                text.parse::<Timestamp>()
                    .map(Stamp::new)
                    .map_err(|error| E::custom(format_args!("timestamp {text:?}: {error}")))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(json: &str) -> Result<Option<Stamp>, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn a_stamp_and_its_absence_take_eight_bytes() {
        assert_eq!(std::mem::size_of::<Stamp>(), 8);
        assert_eq!(std::mem::size_of::<Option<Stamp>>(), 8);
    }

    #[test]
    fn encodes_as_the_api_does_whole_seconds_in_utc() {
        let stamp = decode(r#""2026-01-01T00:00:05Z""#).unwrap().unwrap();
        assert_eq!(
            serde_json::to_string(&stamp).unwrap(),
            r#""2026-01-01T00:00:05Z""#
        );
        // The same encoding as k8s-openapi's `Time` of the same instant.
        let time = crate::model::Time(stamp.timestamp());
        assert_eq!(
            serde_json::to_value(stamp).unwrap(),
            serde_json::to_value(time).unwrap()
        );
        let offset = decode(r#""2026-01-01T02:00:05+02:00""#).unwrap();
        assert_eq!(offset, Some(stamp));
        assert_eq!(decode("null").unwrap(), None);
    }

    #[test]
    fn a_fraction_rounds_down_to_its_second_before_and_after_the_epoch() {
        let later = decode(r#""2026-01-01T00:00:05.999Z""#).unwrap();
        assert_eq!(later, decode(r#""2026-01-01T00:00:05Z""#).unwrap());
        let early = decode(r#""1969-12-31T23:59:59.5Z""#).unwrap().unwrap();
        assert_eq!(early.timestamp().as_second(), -1);
    }

    #[test]
    fn jiffs_whole_range_survives_and_keeps_its_order() {
        for at in [
            Timestamp::MIN,
            Timestamp::UNIX_EPOCH,
            Timestamp::from_second(1_767_225_600).unwrap(),
            Timestamp::MAX,
        ] {
            let whole = Timestamp::from_second(at.as_second()).unwrap();
            assert_eq!(Stamp::new(at).timestamp(), whole);
        }
        assert!(Stamp::new(Timestamp::MIN) < Stamp::new(Timestamp::UNIX_EPOCH));
        assert!(Stamp::new(Timestamp::UNIX_EPOCH) < Stamp::new(Timestamp::MAX));
    }

    #[test]
    fn garbage_is_an_error_that_says_what_was_expected() {
        let error = decode(r#""yesterday""#).unwrap_err().to_string();
        assert!(error.starts_with(r#"timestamp "yesterday": "#), "{error}");
        assert!(decode("5").is_err());
    }
}

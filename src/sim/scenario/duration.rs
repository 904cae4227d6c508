//! Serde helpers for humantime durations (`800ms`, `2s`, `1m30s`) in scenarios.
//! Errors go through serde so the YAML parser attaches the line and column.

use std::time::Duration;

use serde::{Deserialize, Deserializer, de::Error};

/// Deserializes a humantime string (or a bare number of seconds).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let raw = Raw::deserialize(deserializer)?;
    raw.into_duration().map_err(D::Error::custom)
}

/// A duration as written: text, or a number of seconds.
#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Seconds(u64),
    Text(String),
}

impl Raw {
    fn into_duration(self) -> Result<Duration, String> {
        match self {
            Raw::Seconds(seconds) => Ok(Duration::from_secs(seconds)),
            Raw::Text(text) => humantime::parse_duration(text.trim())
                .map_err(|err| format!("bad duration {text:?}: {err} (write e.g. 800ms, 2s, 1m)")),
        }
    }
}

/// The same for optional fields.
pub mod option {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, de::Error};

    /// Deserializes an optional humantime string.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        let raw = Option::<super::Raw>::deserialize(deserializer)?;
        raw.map(super::Raw::into_duration)
            .transpose()
            .map_err(D::Error::custom)
    }
}

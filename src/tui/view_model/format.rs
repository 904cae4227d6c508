//! Small formatting helpers for the view model: ages, counts. Pure.

/// An age as kubectl prints it, short: `45s`, `12m`, `5h`, `3d`, `2y`; `-` when unknown.
pub fn age(since: Option<jiff::Timestamp>, now: jiff::Timestamp) -> String {
    let Some(since) = since else {
        return "-".to_owned();
    };
    let seconds = now.as_second().saturating_sub(since.as_second()).max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 120 * 60 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s if s < 730 * 86_400 => format!("{}d", s / 86_400),
        s => format!("{}y", s / (365 * 86_400)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_like_kubectl() {
        let now = jiff::Timestamp::from_second(1_000_000_000).unwrap();
        let ago = |s: i64| Some(jiff::Timestamp::from_second(1_000_000_000 - s).unwrap());
        let cases = [
            (ago(5), "5s"),
            (ago(119), "119s"),
            (ago(600), "10m"),
            (ago(90 * 60), "90m"),
            (ago(3 * 3600), "3h"),
            (ago(10 * 3600), "10h"),
            (ago(3 * 86_400), "3d"),
            (ago(800 * 86_400), "2y"),
            (ago(-30), "0s"),
            (None, "-"),
        ];
        for (since, expected) in cases {
            assert_eq!(age(since, now), expected);
        }
    }
}

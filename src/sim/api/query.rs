//! Query-string decoding as Go's `url.ParseQuery` does it (`+` is a space,
//! `%XX` escapes), tolerant of the empty pairs kube-rs sends (`?&limit=500`).

/// The decoded query parameters (first value wins).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses a raw query string; undecodable escapes are kept literally.
    pub fn parse(raw: &str) -> Query {
        let pairs = raw
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (decode(key), decode(value))
            })
            .collect();
        Query { pairs }
    }

    /// A parameter's value, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A parameter's value, if present and non-empty.
    pub fn non_empty(&self, key: &str) -> Option<&str> {
        self.get(key).filter(|v| !v.is_empty())
    }

    /// Whether a boolean parameter is `true` (or `1`).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_like_go() {
        let q = Query::parse("&labelSelector=tier+in+%28a%2Cb%29&limit=500&watch&bad=%zz%4");
        assert_eq!(q.get("labelSelector"), Some("tier in (a,b)"));
        assert_eq!(q.get("limit"), Some("500"));
        assert_eq!(q.get("watch"), Some(""));
        assert_eq!(q.get("bad"), Some("%zz%4"));
        assert_eq!(q.get("missing"), None);
        assert!(Query::parse("watch=1").flag("watch"));
    }
}

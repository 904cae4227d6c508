//! An object's UID, held inline.
//!
//! Every node and pod has one: 36 characters (a UUID), which a `String` keeps
//! in a heap block of its own, 72 bytes and an allocation per object in all.
//! Held inline it takes 40 bytes and no allocation (195,000 objects at 65,000
//! nodes). A longer UID, which the API never sends but a hand-written dump
//! may hold, goes to the heap.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The longest UID held inline (a UUID is 36).
const INLINE: usize = 38;

/// A UID: text that reads like a `&str`.
#[derive(Clone)]
pub struct Uid(Text);

#[derive(Clone)]
enum Text {
    Inline { len: u8, bytes: [u8; INLINE] },
    Long(Box<str>),
}

impl Uid {
    /// The UID `text`.
    pub fn new(text: &str) -> Self {
        let Ok(len) = u8::try_from(text.len()) else {
            return Uid(Text::Long(text.into()));
        };
        if usize::from(len) > INLINE {
            return Uid(Text::Long(text.into()));
        }
        let mut bytes = [0; INLINE];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Uid(Text::Inline { len, bytes })
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Copied whole from a `&str`, so always UTF-8; never the fallback.
            Text::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Text::Long(text) => text,
        }
    }
}

impl Default for Uid {
    fn default() -> Self {
        Uid::new("")
    }
}

impl Deref for Uid {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Uid {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Uid {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Uid {
    fn from(text: &str) -> Self {
        Uid::new(text)
    }
}

impl From<String> for Uid {
    fn from(text: String) -> Self {
        Uid::new(&text)
    }
}

impl PartialEq for Uid {
    fn eq(&self, other: &Uid) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Uid {}

impl PartialEq<str> for Uid {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Uid {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Uid {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for Uid {
    fn partial_cmp(&self, other: &Uid) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Uid {
    fn cmp(&self, other: &Uid) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Uid {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Uid {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Uid {
    /// Straight from the decoder's text: no `String` on the way.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UidVisitor;
        impl serde::de::Visitor<'_> for UidVisitor {
            type Value = Uid;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a UID string")
            }
            fn visit_str<E>(self, text: &str) -> Result<Uid, E> {
                Ok(Uid::new(text))
            }
        }
        deserializer.deserialize_str(UidVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_is_inline_and_reads_back() {
        let text = "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab";
        let uid = Uid::new(text);
        assert!(matches!(uid.0, Text::Inline { .. }));
        assert_eq!(uid.as_str(), text);
        assert_eq!(uid, text);
        assert_eq!(std::mem::size_of::<Option<Uid>>(), 40);
    }

    #[test]
    fn long_and_empty_uids_keep_their_text() {
        let long = "x".repeat(300);
        let uid = Uid::new(&long);
        assert!(matches!(uid.0, Text::Long(_)));
        assert_eq!(uid.as_str(), long);
        assert_eq!(Uid::new(&"é".repeat(19)).as_str(), "é".repeat(19));
        assert_eq!(Uid::default().as_str(), "");
    }

    #[test]
    fn orders_and_hashes_like_its_text() {
        let (a, b) = (Uid::new("a"), Uid::new(&"b".repeat(40)));
        assert!(a < b);
        let set: std::collections::HashSet<Uid> = [a.clone(), b.clone()].into();
        assert!(set.contains("a"));
        assert!(set.contains(b.as_str()));
    }

    #[test]
    fn keeps_the_api_shape_on_the_wire() {
        let uid: Uid = serde_json::from_str("\"abc-123\"").expect("decodes");
        assert_eq!(uid, "abc-123");
        assert_eq!(serde_json::to_string(&uid).expect("encodes"), "\"abc-123\"");
        assert!(serde_json::from_str::<Uid>("17").is_err());
    }
}

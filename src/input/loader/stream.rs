//! Streaming document decoding for the snapshot loader: walks each JSON or YAML
//! document with serde visitors and hands every List item to the loader as soon
//! as it is read, so a 65,000-node `NodeList` never exists as one `Value` tree.
//!
//! Items that carry no `kind` wait until their List's `kind` is known (kubectl
//! prints `items` before `kind`). Owns no policy: the loader decides what each
//! object is.

use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::SnapshotLoader;
use crate::input::error::SnapshotError;

/// The loader and source a document is read into, plus the loader's own error
/// (serde errors can only carry text, so the real one waits here).
pub(super) struct Context<'a> {
    pub loader: &'a mut SnapshotLoader,
    pub source_name: &'a str,
    /// The kind of objects that carry none, from the file's place in a dump.
    pub hint: Option<&'a str>,
    pub failure: Option<SnapshotError>,
}

impl Context<'_> {
    fn add_map<E: de::Error>(
        &mut self,
        map: Map<String, Value>,
        item_kind: Option<&str>,
    ) -> Result<(), E> {
        self.loader
            .add_map(self.source_name, map, item_kind.or(self.hint))
            .map_err(|error| self.fail(error))
    }

    fn fail<E: de::Error>(&mut self, error: SnapshotError) -> E {
        let message = error.to_string();
        self.failure = Some(error);
        E::custom(message)
    }

    fn not_an_object(&mut self, what: &str, value: &dyn fmt::Display) {
        let message = format!(
            "skipped {what} that is not an object: {}",
            short(&value.to_string())
        );
        self.loader.warn(self.source_name, message);
    }
}

/// The first 40 characters of `text`, for messages.
pub(super) fn short(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// One document: an object, a List, an array of documents, or nothing.
pub(super) struct DocumentSeed<'c, 'a> {
    pub context: &'c mut Context<'a>,
}

/// Reads every JSON document of `text` (usually one; concatenated ones too).
pub(super) fn read_json<'de, R: serde_json::de::Read<'de>>(
    context: &mut Context<'_>,
    deserializer: &mut serde_json::Deserializer<R>,
) -> Result<(), serde_json::Error> {
    loop {
        DocumentSeed {
            context: &mut *context,
        }
        .deserialize(&mut *deserializer)?;
        // `end` fails on anything but trailing whitespace: another document follows.
        if deserializer.end().is_ok() {
            return Ok(());
        }
    }
}

/// Reads every YAML document of `text`.
pub(super) fn read_yaml(context: &mut Context<'_>, text: &str) -> Result<(), serde_norway::Error> {
    for document in serde_norway::Deserializer::from_str(text) {
        DocumentSeed {
            context: &mut *context,
        }
        .deserialize(document)?;
    }
    Ok(())
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

macro_rules! skip_scalar {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method<E: de::Error>(self, value: $ty) -> Result<(), E> {
            self.context.not_an_object("a document", &value);
            Ok(())
        })*
    };
}

impl<'de> Visitor<'de> for DocumentSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object or List")
    }

    skip_scalar!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(DocumentSeed {
                context: &mut *self.context,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let mut fields = Map::new();
        let mut waiting: Option<Vec<Map<String, Value>>> = None;
        while let Some(key) = access.next_key::<String>()? {
            if key == "items" {
                let item_kind = implied_item_kind(fields.get("kind"));
                let seed = ItemsSeed {
                    context: &mut *self.context,
                    item_kind,
                };
                match access.next_value_seed(seed)? {
                    Items::Streamed(rest) => waiting = Some(rest),
                    Items::NotAList(value) => {
                        fields.insert(key, value);
                    }
                }
            } else {
                fields.insert(key, access.next_value::<Value>()?);
            }
        }
        let Some(waiting) = waiting else {
            return self.context.add_map(fields, None);
        };
        let implied = implied_item_kind(fields.get("kind"));
        for item in waiting {
            self.context.add_map(item, implied.as_deref())?;
        }
        Ok(())
    }
}

/// `Node` for a `NodeList`; nothing for a plain `List` or no kind.
fn implied_item_kind(item_kind: Option<&Value>) -> Option<String> {
    item_kind
        .and_then(Value::as_str)
        .and_then(item_kind_of_list)
        .map(str::to_owned)
}

/// `Node` for `NodeList`; nothing for `List` or a kind that is not a List's.
pub(super) fn item_kind_of_list(list_kind: &str) -> Option<&str> {
    list_kind.strip_suffix("List").filter(|k| !k.is_empty())
}

/// What an `items` field held.
enum Items {
    /// An array: its items were loaded, except these, which have no kind yet.
    Streamed(Vec<Map<String, Value>>),
    /// Not an array: kept as a plain field.
    NotAList(Value),
}

struct ItemsSeed<'c, 'a> {
    context: &'c mut Context<'a>,
    item_kind: Option<String>,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_, '_> {
    type Value = Items;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Items, D::Error> {
        deserializer.deserialize_any(self)
    }
}

macro_rules! keep_scalar {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method<E: de::Error>(self, value: $ty) -> Result<Items, E> {
            Ok(Items::NotAList(Value::from(value)))
        })*
    };
}

impl<'de> Visitor<'de> for ItemsSeed<'_, '_> {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    keep_scalar!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);

    fn visit_unit<E: de::Error>(self) -> Result<Items, E> {
        Ok(Items::NotAList(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Items, E> {
        Ok(Items::NotAList(Value::Null))
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Items, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(access)).map(Items::NotAList)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
        let mut waiting = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            let Value::Object(map) = item else {
                self.context.not_an_object("a list item", &item);
                continue;
            };
            let has_kind = map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| !k.is_empty());
            if has_kind || self.item_kind.is_some() {
                self.context.add_map(map, self.item_kind.as_deref())?;
            } else {
                waiting.push(map);
            }
        }
        Ok(Items::Streamed(waiting))
    }
}

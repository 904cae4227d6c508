//! Protobuf read through serde: a message of the table looks to a
//! `Deserialize` type exactly like the object's JSON (same names, same value
//! shapes: times as RFC 3339 text, quantities as text, maps as objects,
//! inline messages flattened), so the slim types decode protobuf with the
//! code that decodes JSON, and see the same object. A field the type does
//! not read is skipped by its length prefix, never decoded.

use std::fmt;

use base64::Engine as _;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::schema::{Field, Message, Shape, Ty, schema};
use super::wire::{self, Fields, Malformed, Value};

/// Why protobuf did not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error(message.to_string())
    }
}

impl From<Malformed> for Error {
    fn from(_: Malformed) -> Self {
        Error("malformed protobuf".into())
    }
}

/// Decodes `bytes`, a message of the table named `message` (`Node`), as `T`.
pub fn from_message<'de, T: de::Deserialize<'de>>(
    message: &str,
    bytes: &'de [u8],
) -> Result<T, Error> {
    let schema = schema();
    let index = schema
        .find(message)
        .ok_or_else(|| Error(format!("no protobuf message {message}")))?;
    T::deserialize(MessageDe {
        message: schema.message(index),
        bytes,
    })
}

/// A message, as a serde map.
pub(super) struct MessageDe<'de> {
    pub(super) message: &'static Message,
    pub(super) bytes: &'de [u8],
}

/// The rest of the serde data model reads a value by its table type.
/// (`by_type!(enum)`: enums too, for values that are never text.)
macro_rules! by_type {
    ($($also:ident)?) => {
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier $($also)?
        }

        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            visitor.visit_some(self)
        }

        fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            visitor.visit_unit()
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Error> {
            visitor.visit_newtype_struct(self)
        }
    };
}

impl<'de> Deserializer<'de> for MessageDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(MessageAccess {
            current: Frame::new(self.message, self.bytes),
            outer: Vec::new(),
            pending: None,
        })
    }

    by_type!(enum);
}

/// One message being read (an inline message is a frame of its own).
struct Frame<'de> {
    message: &'static Message,
    fields: Fields<'de>,
    /// Repeated and map fields already handed on whole (numbers below 64;
    /// higher numbers in `done_high`).
    done: u64,
    done_high: Vec<u64>,
}

impl<'de> Frame<'de> {
    fn new(message: &'static Message, bytes: &'de [u8]) -> Self {
        Frame {
            message,
            fields: Fields::new(bytes),
            done: 0,
            done_high: Vec::new(),
        }
    }

    /// Marks a repeated field handed on; false if it was already.
    fn first_time(&mut self, number: u64) -> bool {
        if number < 64 {
            let bit = 1u64 << number;
            let first = self.done & bit == 0;
            self.done |= bit;
            first
        } else if self.done_high.contains(&number) {
            false
        } else {
            self.done_high.push(number);
            true
        }
    }
}

/// The fields of a message as map entries.
struct MessageAccess<'de> {
    current: Frame<'de>,
    outer: Vec<Frame<'de>>,
    pending: Option<Pending<'de>>,
}

/// The value of the key just handed on.
enum Pending<'de> {
    /// A singular field.
    One(&'static Field, Value<'de>),
    /// A repeated or map field: every occurrence from `from` on.
    Many(&'static Field, &'de [u8]),
}

impl<'de> MapAccess<'de> for MessageAccess<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        loop {
            let from = self.current.fields.rest();
            let Some(next) = self.current.fields.next() else {
                match self.outer.pop() {
                    Some(outer) => {
                        self.current = outer;
                        continue;
                    }
                    None => return Ok(None),
                }
            };
            let (number, value) = next?;
            let Some(field) = self.current.message.field(number) else {
                continue;
            };
            let pending = match field.shape {
                Shape::One if is_zero_time(field.ty, value) => continue,
                Shape::One => Pending::One(field, value),
                Shape::Inline => {
                    let (Ty::Message(index), Value::Bytes(bytes)) = (field.ty, value) else {
                        return Err(wrong_type(field));
                    };
                    let inner = Frame::new(schema().message(index), bytes);
                    self.outer.push(std::mem::replace(&mut self.current, inner));
                    continue;
                }
                Shape::Repeated | Shape::Map if self.current.first_time(number) => {
                    Pending::Many(field, from)
                }
                Shape::Repeated | Shape::Map => continue,
            };
            let name = field.name;
            self.pending = Some(pending);
            return seed
                .deserialize(BorrowedStrDeserializer::<Error>::new(name))
                .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.pending.take() {
            Some(Pending::One(field, value)) => seed.deserialize(ValueDe {
                ty: field.ty,
                value,
                field,
            }),
            Some(Pending::Many(field, from)) => seed.deserialize(ManyDe { field, from }),
            None => Err(Error("a value without a key".into())),
        }
    }
}

fn wrong_type(field: &Field) -> Error {
    Error(format!(
        "field {} ({}) has the wrong wire type",
        field.name, field.number
    ))
}

/// Go writes a zero `metav1.Time` (a non-pointer field left unset) as
/// 0001-01-01T00:00:00Z, which its JSON writes as `null`: leave it out.
fn is_zero_time(ty: Ty, value: Value<'_>) -> bool {
    const GO_ZERO_SECONDS: i64 = -62_135_596_800;
    matches!(ty, Ty::Time | Ty::MicroTime)
        && matches!(value, Value::Bytes(bytes) if time_parts(bytes).is_ok_and(|t| t == (GO_ZERO_SECONDS, 0)))
}

/// A `Time`'s seconds and nanos.
fn time_parts(bytes: &[u8]) -> Result<(i64, i32), Malformed> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    for field in Fields::new(bytes) {
        match field? {
            (1, Value::Varint(v)) => seconds = signed(v),
            #[allow(clippy::cast_possible_truncation, reason = "an int32 on the wire")]
            (2, Value::Varint(v)) => nanos = signed(v) as i32,
            _ => {}
        }
    }
    Ok((seconds, nanos))
}

#[allow(
    clippy::cast_possible_wrap,
    reason = "negative numbers are two's complement on the wire"
)]
fn signed(value: u64) -> i64 {
    value as i64
}

/// Field 1 of a one-field message (`Quantity`, `FieldsV1`, `RawExtension`).
fn first_bytes(bytes: &[u8]) -> Result<Option<&[u8]>, Malformed> {
    let mut found = None;
    for field in Fields::new(bytes) {
        if let (1, Value::Bytes(inner)) = field? {
            found = Some(inner);
        }
    }
    Ok(found)
}

/// One occurrence of a field.
struct ValueDe<'de> {
    ty: Ty,
    value: Value<'de>,
    field: &'static Field,
}

impl<'de> Deserializer<'de> for ValueDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let bytes = match self.value {
            Value::Varint(v) => {
                return match self.ty {
                    Ty::Bool => visitor.visit_bool(v != 0),
                    #[allow(clippy::cast_possible_truncation, reason = "an int32 on the wire")]
                    Ty::Int32 => visitor.visit_i64(i64::from(signed(v) as i32)),
                    Ty::Int64 => visitor.visit_i64(signed(v)),
                    _ => Err(wrong_type(self.field)),
                };
            }
            Value::Bytes(bytes) => bytes,
            Value::Fixed => return Err(wrong_type(self.field)),
        };
        match self.ty {
            Ty::String => visitor.visit_borrowed_str(text(bytes)?),
            Ty::Bytes => {
                visitor.visit_string(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            Ty::Time | Ty::MicroTime => {
                visitor.visit_string(format_time(self.ty, time_parts(bytes)?)?)
            }
            Ty::Quantity => visitor.visit_borrowed_str(first_bytes(bytes)?.map_or(Ok("0"), text)?),
            Ty::IntOrString => int_or_string(bytes, visitor),
            Ty::FieldsV1 | Ty::RawExtension => match first_bytes(bytes)? {
                Some(json) if !json.is_empty() => serde_json::Deserializer::from_slice(json)
                    .deserialize_any(visitor)
                    .map_err(de::Error::custom),
                _ => visitor.visit_unit(),
            },
            Ty::Message(index) => MessageDe {
                message: schema().message(index),
                bytes,
            }
            .deserialize_any(visitor),
            Ty::Bool | Ty::Int32 | Ty::Int64 => Err(wrong_type(self.field)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match (self.ty, self.value) {
            (Ty::String, Value::Bytes(bytes)) => {
                visitor.visit_enum(BorrowedStrDeserializer::<Error>::new(text(bytes)?))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    by_type!();
}

fn text(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|_| Error("a string that is not UTF-8".into()))
}

fn int_or_string<'de, V: Visitor<'de>>(bytes: &'de [u8], visitor: V) -> Result<V::Value, Error> {
    let (mut kind, mut int, mut string) = (0, 0, "");
    for field in Fields::new(bytes) {
        match field? {
            (1, Value::Varint(v)) => kind = v,
            #[allow(clippy::cast_possible_truncation, reason = "an int32 on the wire")]
            (2, Value::Varint(v)) => int = signed(v) as i32,
            (3, Value::Bytes(b)) => string = text(b)?,
            _ => {}
        }
    }
    if kind == 1 {
        visitor.visit_borrowed_str(string)
    } else {
        visitor.visit_i64(i64::from(int))
    }
}

/// As Kubernetes writes them in JSON: `Time` to the second, `MicroTime` to
/// the microsecond, both in UTC.
fn format_time(ty: Ty, (seconds, nanos): (i64, i32)) -> Result<String, Error> {
    let at = jiff::Timestamp::new(seconds, 0).map_err(<Error as de::Error>::custom)?;
    let whole = at.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(if ty == Ty::MicroTime {
        format!("{whole}.{:06}Z", nanos.clamp(0, 999_999_999) / 1000)
    } else {
        format!("{whole}Z")
    })
}

/// Every occurrence of a repeated or map field.
struct ManyDe<'de> {
    field: &'static Field,
    from: &'de [u8],
}

impl<'de> Deserializer<'de> for ManyDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let scan = Scan {
            field: self.field,
            fields: Fields::new(self.from),
            packed: None,
            entry_value: None,
        };
        if self.field.shape == Shape::Map {
            visitor.visit_map(scan)
        } else {
            visitor.visit_seq(scan)
        }
    }

    by_type!(enum);
}

/// Walks the rest of a message for one field's occurrences.
struct Scan<'de> {
    field: &'static Field,
    fields: Fields<'de>,
    /// Numbers left of a packed occurrence (accepted as protobuf requires,
    /// though Go writes Kubernetes' repeated numbers unpacked).
    packed: Option<&'de [u8]>,
    /// A map entry's value, between its key and its value.
    entry_value: Option<Value<'de>>,
}

impl<'de> Scan<'de> {
    fn next_occurrence(&mut self) -> Result<Option<Value<'de>>, Error> {
        if let Some(packed) = self.packed.take().filter(|p| !p.is_empty()) {
            let (value, rest) = wire::varint(packed)?;
            self.packed = Some(rest);
            return Ok(Some(Value::Varint(value)));
        }
        for field in self.fields.by_ref() {
            let (number, value) = field?;
            if number != u64::from(self.field.number) {
                continue;
            }
            let numeric = matches!(self.field.ty, Ty::Bool | Ty::Int32 | Ty::Int64);
            if let (true, Value::Bytes(packed)) = (numeric, value) {
                self.packed = Some(packed);
                return self.next_occurrence();
            }
            return Ok(Some(value));
        }
        Ok(None)
    }
}

impl<'de> SeqAccess<'de> for Scan<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some(value) = self.next_occurrence()? else {
            return Ok(None);
        };
        seed.deserialize(ValueDe {
            ty: self.field.ty,
            value,
            field: self.field,
        })
        .map(Some)
    }
}

impl<'de> MapAccess<'de> for Scan<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(entry) = self.next_occurrence()? else {
            return Ok(None);
        };
        let Value::Bytes(entry) = entry else {
            return Err(wrong_type(self.field));
        };
        let (mut key, mut value) = ("", None);
        for part in Fields::new(entry) {
            match part? {
                (1, Value::Bytes(k)) => key = text(k)?,
                (2, v) => value = Some(v),
                _ => {}
            }
        }
        // An entry without a value holds the type's zero.
        let zero = match self.field.ty {
            Ty::Bool | Ty::Int32 | Ty::Int64 => Value::Varint(0),
            _ => Value::Bytes(&[]),
        };
        self.entry_value = Some(value.unwrap_or(zero));
        seed.deserialize(BorrowedStrDeserializer::<Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .entry_value
            .take()
            .ok_or_else(|| Error("a map value without a key".into()))?;
        seed.deserialize(ValueDe {
            ty: self.field.ty,
            value,
            field: self.field,
        })
    }
}

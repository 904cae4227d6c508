//! JSON to protobuf by the table: the embedded cluster stores objects as
//! JSON and writes them as protobuf for clients that ask. Every field the
//! table knows is written (the whole object, as a real API server sends
//! it); a JSON field the table does not know is counted in
//! [`Encoded::dropped`] (a real API server prunes unknown fields of
//! built-in kinds before storing, so it would hold none).

use base64::Engine as _;
use serde_json::{Map, Value};

use super::schema::{Field, Message, Shape, Ty, schema};
use super::wire::{put_bytes_field, put_nested, put_varint_field};

/// What an encoding left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    /// JSON fields the table has no field for, or whose value has the wrong
    /// shape for it (`"replicas": "x"`): `message.field` each.
    pub dropped: Vec<String>,
}

/// Appends `object` as the table's message `message` (`Pod`) to `out`.
/// `None` when the table has no such message.
pub fn encode_object(
    message: &str,
    object: &Map<String, Value>,
    out: &mut Vec<u8>,
) -> Option<Encoded> {
    let schema = schema();
    let message = schema.message(schema.find(message)?);
    let mut encoded = Encoded::default();
    let used = write_message(message, object, out, &mut encoded);
    note_unknown(message, object, used, &mut encoded);
    Some(encoded)
}

/// Writes the fields of `message` found in `object`; returns how many of
/// the object's keys were used (inline messages included).
fn write_message(
    message: &Message,
    object: &Map<String, Value>,
    out: &mut Vec<u8>,
    encoded: &mut Encoded,
) -> usize {
    let mut used = 0;
    for field in &message.fields {
        if let (Shape::Inline, Ty::Message(index)) = (field.shape, field.ty) {
            let inner = schema().message(index);
            let mut body = Vec::new();
            used += write_message(inner, object, &mut body, encoded);
            if !body.is_empty() {
                put_bytes_field(out, field.number, &body);
            }
            continue;
        }
        let Some(value) = object.get(field.name) else {
            continue;
        };
        used += 1;
        if !write_field(field, value, out, encoded) {
            encoded
                .dropped
                .push(format!("{}.{}", message.name, field.name));
        }
    }
    used
}

/// Counts the keys of `object` that no field (nor inline field) of
/// `message` took.
fn note_unknown(
    message: &Message,
    object: &Map<String, Value>,
    used: usize,
    encoded: &mut Encoded,
) {
    if used == object.len() {
        return;
    }
    for key in object.keys() {
        if !knows(message, key) {
            encoded.dropped.push(format!("{}.{key}", message.name));
        }
    }
}

fn knows(message: &Message, key: &str) -> bool {
    message
        .fields
        .iter()
        .any(|field| match (field.shape, field.ty) {
            (Shape::Inline, Ty::Message(index)) => knows(schema().message(index), key),
            _ => field.name == key,
        })
}

/// Writes one field; false when its value has the wrong shape.
fn write_field(field: &Field, value: &Value, out: &mut Vec<u8>, encoded: &mut Encoded) -> bool {
    match (field.shape, value) {
        (_, Value::Null) => true,
        (Shape::Repeated, Value::Array(items)) => items
            .iter()
            .all(|item| item.is_null() || write_value(field, item, out, encoded)),
        (Shape::Map, Value::Object(entries)) => {
            for (key, value) in entries {
                let mut ok = true;
                put_nested(out, field.number, |entry| {
                    put_bytes_field(entry, 1, key.as_bytes());
                    let value_field = Field {
                        number: 2,
                        ..*field
                    };
                    ok = value.is_null() || write_value(&value_field, value, entry, encoded);
                });
                if !ok {
                    return false;
                }
            }
            true
        }
        (Shape::One, value) => write_value(field, value, out, encoded),
        _ => false,
    }
}

/// Writes one value of the field's type.
fn write_value(field: &Field, value: &Value, out: &mut Vec<u8>, encoded: &mut Encoded) -> bool {
    let number = field.number;
    match (field.ty, value) {
        (Ty::String, Value::String(text)) => put_bytes_field(out, number, text.as_bytes()),
        (Ty::Bytes, Value::String(text)) => {
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text) else {
                return false;
            };
            put_bytes_field(out, number, &bytes);
        }
        (Ty::Bool, Value::Bool(flag)) => put_varint_field(out, number, u64::from(*flag)),
        (Ty::Int32 | Ty::Int64, Value::Number(n)) => {
            let Some(n) = n.as_i64() else { return false };
            #[allow(
                clippy::cast_sign_loss,
                reason = "negative numbers are two's complement on the wire"
            )]
            put_varint_field(out, number, n as u64);
        }
        (Ty::Time | Ty::MicroTime, Value::String(text)) => {
            let Ok(at) = text.parse::<jiff::Timestamp>() else {
                return false;
            };
            // Upstream writes a Time's seconds only (metav1 `ProtoTime`: its
            // JSON has no fraction, and nanos only protobuf clients saw
            // read as changes), a MicroTime's to the microsecond.
            let (seconds, nanos) = match field.ty {
                Ty::MicroTime => (at.as_second(), at.subsec_nanosecond() / 1000 * 1000),
                _ => (at.as_second() - i64::from(at.subsec_nanosecond() < 0), 0),
            };
            put_nested(out, number, |time| {
                #[allow(clippy::cast_sign_loss, reason = "two's complement on the wire")]
                put_varint_field(time, 1, seconds as u64);
                if nanos != 0 {
                    #[allow(clippy::cast_sign_loss, reason = "two's complement on the wire")]
                    put_varint_field(time, 2, i64::from(nanos) as u64);
                }
            });
        }
        (Ty::Quantity, Value::String(text)) => {
            put_nested(out, number, |q| put_bytes_field(q, 1, text.as_bytes()));
        }
        // Quantities arrive as numbers from hand-written YAML (`cpu: 2`).
        (Ty::Quantity, Value::Number(n)) => {
            put_nested(out, number, |q| {
                put_bytes_field(q, 1, n.to_string().as_bytes());
            });
        }
        (Ty::IntOrString, Value::Number(n)) => {
            let Some(n) = n.as_i64().and_then(|n| i32::try_from(n).ok()) else {
                return false;
            };
            put_nested(out, number, |v| {
                put_varint_field(v, 1, 0);
                #[allow(clippy::cast_sign_loss, reason = "two's complement on the wire")]
                put_varint_field(v, 2, i64::from(n) as u64);
            });
        }
        (Ty::IntOrString, Value::String(text)) => put_nested(out, number, |v| {
            put_varint_field(v, 1, 1);
            put_bytes_field(v, 3, text.as_bytes());
        }),
        (Ty::FieldsV1 | Ty::RawExtension, value) => {
            let json = serde_json::to_vec(value).unwrap_or_default();
            put_nested(out, number, |raw| put_bytes_field(raw, 1, &json));
        }
        (Ty::Message(index), Value::Object(object)) => {
            let message = schema().message(index);
            put_nested(out, number, |body| {
                let used = write_message(message, object, body, encoded);
                note_unknown(message, object, used, encoded);
            });
        }
        _ => return false,
    }
    true
}

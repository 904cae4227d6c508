//! Reading the Kubernetes protobuf wire form kubectl's typed clients send
//! (access reviews, `kubectl create priorityclass`): the `k8s\0` envelope
//! and the few fields each reader needs, decoded by field number. Anything
//! malformed is `None`, never a panic; nothing here writes protobuf.

use serde_json::{Map, Value, json};

/// The 4-byte prefix of a Kubernetes protobuf body.
pub(super) const PROTOBUF_MAGIC: &[u8] = b"k8s\0";

/// One field's value on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// Every `(field number, value)` of a message, in order; `None` when the
/// message is malformed.
fn fields(mut message: &[u8]) -> Option<Vec<(u64, Wire<'_>)>> {
    let mut found = Vec::new();
    while !message.is_empty() {
        let (tag, rest) = varint(message)?;
        message = rest;
        let value = match tag & 7 {
            0 => {
                let (value, rest) = varint(message)?;
                message = rest;
                Wire::Varint(value)
            }
            1 => {
                message = message.get(8..)?;
                Wire::Fixed
            }
            2 => {
                let (len, rest) = varint(message)?;
                let len = usize::try_from(len).ok()?;
                let value = rest.get(..len)?;
                message = rest.get(len..)?;
                Wire::Bytes(value)
            }
            5 => {
                message = message.get(4..)?;
                Wire::Fixed
            }
            _ => return None,
        };
        found.push((tag >> 3, value));
    }
    Some(found)
}

/// The last field `number` of a message that `pick` accepts.
fn last<'a, T>(message: &'a [u8], number: u64, pick: fn(Wire<'a>) -> Option<T>) -> Option<T> {
    fields(message)?
        .into_iter()
        .filter(|(n, _)| *n == number)
        .filter_map(|(_, value)| pick(value))
        .next_back()
}

/// The last length-delimited field `number` of a protobuf message.
pub(super) fn field_bytes(message: &[u8], number: u64) -> Option<&[u8]> {
    last(message, number, |value| match value {
        Wire::Bytes(bytes) => Some(bytes),
        _ => None,
    })
}

/// The last varint field `number` of a protobuf message.
fn field_varint(message: &[u8], number: u64) -> Option<u64> {
    last(message, number, |value| match value {
        Wire::Varint(v) => Some(v),
        _ => None,
    })
}

fn field_text(message: &[u8], number: u64) -> Option<String> {
    field_bytes(message, number).map(|b| String::from_utf8_lossy(b).into_owned())
}

/// A `map<string, string>` field: its repeated entries `{1: key, 2: value}`.
fn field_map(message: &[u8], number: u64) -> Option<Map<String, Value>> {
    let mut map = Map::new();
    for (n, value) in fields(message)? {
        if let (true, Wire::Bytes(entry)) = (n == number, value) {
            let key = field_text(entry, 1).unwrap_or_default();
            map.insert(key, json!(field_text(entry, 2).unwrap_or_default()));
        }
    }
    Some(map)
}

/// `ObjectMeta` { 1: name, 2: generateName, 3: namespace, 11: labels,
/// 12: annotations } as JSON (the fields a create sends).
fn object_meta(message: &[u8]) -> Option<Value> {
    let mut meta = Map::new();
    for (number, field) in [(1, "name"), (2, "generateName"), (3, "namespace")] {
        if let Some(text) = field_text(message, number) {
            meta.insert(field.to_owned(), json!(text));
        }
    }
    for (number, field) in [(11, "labels"), (12, "annotations")] {
        let map = field_map(message, number)?;
        if !map.is_empty() {
            meta.insert(field.to_owned(), Value::Object(map));
        }
    }
    Some(Value::Object(meta))
}

/// A protobuf `scheduling.k8s.io/v1 PriorityClass` body as JSON:
/// `runtime.Unknown` { 2: raw } → PriorityClass { 1: metadata, 2: value,
/// 3: globalDefault, 4: description, 5: preemptionPolicy }.
pub(super) fn priority_class(body: &[u8]) -> Option<Value> {
    let raw = field_bytes(body.strip_prefix(PROTOBUF_MAGIC)?, 2)?;
    let meta = field_bytes(raw, 1).map_or_else(|| Some(json!({})), object_meta)?;
    // int32 on the wire: negative values are sign-extended to 64 bits.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        reason = "an int32 field is the low 32 bits of its varint"
    )]
    let value = field_varint(raw, 2).map_or(0, |v| v as i64 as i32);
    let mut class = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": meta, "value": value});
    if field_varint(raw, 3).is_some_and(|v| v != 0) {
        class["globalDefault"] = json!(true);
    }
    for (number, field) in [(4, "description"), (5, "preemptionPolicy")] {
        if let Some(text) = field_text(raw, number) {
            class[field] = json!(text);
        }
    }
    Some(class)
}

fn varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged(number: u8, wire: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | wire];
        if wire == 2 {
            out.push(u8::try_from(payload.len()).unwrap());
        }
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn reads_a_priority_class_as_kubectl_create_sends_it() {
        let meta = tagged(1, 2, b"low");
        let mut raw = tagged(1, 2, &meta);
        raw.extend(tagged(2, 0, &[100]));
        raw.extend(tagged(3, 0, &[1]));
        raw.extend(tagged(5, 2, b"Never"));
        let mut body = PROTOBUF_MAGIC.to_vec();
        body.extend(tagged(2, 2, &raw));
        let class = priority_class(&body).unwrap();
        assert_eq!(class["metadata"]["name"], "low");
        assert_eq!(class["value"], 100);
        assert_eq!(class["globalDefault"], true);
        assert_eq!(class["preemptionPolicy"], "Never");
        assert!(class.get("description").is_none());
    }

    #[test]
    fn negative_values_and_garbage() {
        let mut raw = tagged(2, 0, &[0xff; 9]);
        raw.push(0x01);
        let mut body = PROTOBUF_MAGIC.to_vec();
        body.extend(tagged(2, 2, &raw));
        assert_eq!(priority_class(&body).unwrap()["value"], -1);
        assert!(priority_class(b"k8s\0\x12\x05ab").is_none(), "a cut length");
        assert!(priority_class(b"{\"value\":1}").is_none(), "not protobuf");
        assert!(priority_class(b"k8s\0\x0f").is_none(), "wire type 7");
    }
}

//! The field table of the Kubernetes protobuf messages rollcall reads and
//! the embedded cluster writes (`schema.txt`, parsed once): which field
//! number is which JSON field, of which type. One table drives both
//! directions, so a JSON client and a protobuf client see the same object.

use std::collections::HashMap;
use std::sync::LazyLock;

/// The type of a field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// UTF-8 text.
    String,
    /// Raw bytes (base64 in JSON).
    Bytes,
    /// A varint 0 or 1.
    Bool,
    /// A varint (negative numbers sign-extended to 64 bits, as Go writes them).
    Int32,
    /// A varint.
    Int64,
    /// `metav1.Time`: seconds and nanos; RFC 3339 to the second in JSON.
    Time,
    /// `metav1.MicroTime`: as `Time`, to the microsecond in JSON.
    MicroTime,
    /// `resource.Quantity`: a message holding the quantity's text.
    Quantity,
    /// `intstr.IntOrString`: a type tag, then the int or the text.
    IntOrString,
    /// `metav1.FieldsV1`: JSON text in a bytes field; an object in JSON.
    FieldsV1,
    /// `runtime.RawExtension`: JSON text in a bytes field; any value in JSON.
    RawExtension,
    /// A message of the table (its index).
    Message(u16),
}

/// How a field occurs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Once (the last occurrence wins, as protobuf merges).
    One,
    /// Repeated: a JSON array.
    Repeated,
    /// `map<string, T>`: repeated entries {1: key, 2: value}; a JSON object.
    Map,
    /// A message whose fields JSON writes into the parent object.
    Inline,
}

/// One field of a message.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The field number.
    pub number: u32,
    /// The JSON name (upstream's protobuf names are the JSON names).
    pub name: &'static str,
    /// How it occurs.
    pub shape: Shape,
    /// Its value's type.
    pub ty: Ty,
}

/// One message: its fields, by number and in number order.
#[derive(Debug)]
pub struct Message {
    /// The message's name (`Pod`, `ObjectMeta`).
    pub name: &'static str,
    /// In field-number order (the order Go writes them).
    pub fields: Vec<Field>,
    /// Field number → index into `fields` (`u16::MAX`: none).
    by_number: Vec<u16>,
}

impl Message {
    /// The field with this number, if the message has one.
    pub fn field(&self, number: u64) -> Option<&Field> {
        let index = *self.by_number.get(usize::try_from(number).ok()?)?;
        self.fields.get(usize::from(index))
    }
}

/// Every message of the table.
#[derive(Debug)]
pub struct Schema {
    messages: Vec<Message>,
    by_name: HashMap<&'static str, u16>,
}

impl Schema {
    /// The message at `index`. Indexes come from this schema, so it exists.
    pub fn message(&self, index: u16) -> &Message {
        &self.messages[usize::from(index)]
    }

    /// The index of the message named `name` (`Node`, `PodList`).
    pub fn find(&self, name: &str) -> Option<u16> {
        self.by_name.get(name).copied()
    }
}

/// The table, parsed on first use (a few hundred lines: microseconds).
pub fn schema() -> &'static Schema {
    static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
        parse(include_str!("schema.txt")).unwrap_or_else(|error| {
            // The table is part of the binary and checked by a test: a
            // broken one is a build defect, not an input error.
            panic!("schema.txt: {error}")
        })
    });
    &SCHEMA
}

/// Parses the table's text.
fn parse(text: &'static str) -> Result<Schema, String> {
    let mut names: Vec<&'static str> = Vec::new();
    let mut bodies: Vec<Vec<(u32, &'static str, &'static str)>> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            names.push(line.trim());
            bodies.push(Vec::new());
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(field), Some(name), Some(ty), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("line {}: expected `NUMBER NAME TYPE`", number + 1));
        };
        let field = field
            .parse()
            .map_err(|_| format!("line {}: bad field number", number + 1))?;
        bodies
            .last_mut()
            .ok_or_else(|| format!("line {}: a field outside a message", number + 1))?
            .push((field, name, ty));
    }
    let by_name: HashMap<&'static str, u16> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Ok((*name, u16::try_from(i).map_err(|_| "too many messages")?)))
        .collect::<Result<_, String>>()?;
    let messages = names
        .iter()
        .zip(bodies)
        .map(|(name, body)| message(name, body, &by_name))
        .collect::<Result<_, _>>()?;
    Ok(Schema { messages, by_name })
}

fn message(
    name: &'static str,
    body: Vec<(u32, &'static str, &'static str)>,
    by_name: &HashMap<&'static str, u16>,
) -> Result<Message, String> {
    let mut fields = Vec::with_capacity(body.len());
    for (number, field, ty) in body {
        let (shape, ty) = if let Some(rest) = ty.strip_prefix("[]") {
            (Shape::Repeated, rest)
        } else if let Some(rest) = ty.strip_prefix("{}") {
            (Shape::Map, rest)
        } else if let Some(rest) = ty.strip_prefix('^') {
            (Shape::Inline, rest)
        } else {
            (Shape::One, ty)
        };
        let ty = match ty {
            "string" => Ty::String,
            "bytes" => Ty::Bytes,
            "bool" => Ty::Bool,
            "int32" => Ty::Int32,
            "int64" => Ty::Int64,
            "Time" => Ty::Time,
            "MicroTime" => Ty::MicroTime,
            "Quantity" => Ty::Quantity,
            "IntOrString" => Ty::IntOrString,
            "FieldsV1" => Ty::FieldsV1,
            "RawExtension" => Ty::RawExtension,
            other => Ty::Message(
                *by_name
                    .get(other)
                    .ok_or_else(|| format!("{name}.{field}: unknown type {other}"))?,
            ),
        };
        if shape == Shape::Inline && !matches!(ty, Ty::Message(_)) {
            return Err(format!("{name}.{field}: only a message can be inline"));
        }
        fields.push(Field {
            number,
            name: field,
            shape,
            ty,
        });
    }
    fields.sort_by_key(|f| f.number);
    let highest = fields.last().map_or(0, |f| f.number as usize);
    let mut by_number = vec![u16::MAX; highest + 1];
    for (index, field) in fields.iter().enumerate() {
        by_number[field.number as usize] = u16::try_from(index).map_err(|_| "too many fields")?;
    }
    Ok(Message {
        name,
        fields,
        by_number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_names_the_upstream_numbers() {
        let schema = schema();
        let pod = schema.message(schema.find("Pod").unwrap());
        let names: Vec<_> = pod.fields.iter().map(|f| (f.number, f.name)).collect();
        assert_eq!(names, [(1, "metadata"), (2, "spec"), (3, "status")]);
        let meta = schema.message(schema.find("ObjectMeta").unwrap());
        let rv = meta.field(6).unwrap();
        assert_eq!((rv.name, rv.ty), ("resourceVersion", Ty::String));
        assert_eq!(meta.field(11).unwrap().shape, Shape::Map);
        assert_eq!(meta.field(8).unwrap().ty, Ty::Time);
        // runtime.TypeMeta (the envelope's), not meta/v1's: apiVersion is 1.
        let type_meta = schema.message(schema.find("TypeMeta").unwrap());
        assert_eq!(type_meta.field(1).unwrap().name, "apiVersion");
        let volume = schema.message(schema.find("Volume").unwrap());
        assert_eq!(volume.field(2).unwrap().shape, Shape::Inline);
        assert!(meta.field(999).is_none());
        for root in [
            "NodeList",
            "PodList",
            "EventList",
            "WatchEvent",
            "Status",
            "Unknown",
        ] {
            assert!(schema.find(root).is_some(), "{root}");
        }
    }

    #[test]
    fn a_broken_table_is_an_error_naming_the_line() {
        assert!(
            parse("A\n 1 x Missing\n")
                .unwrap_err()
                .contains("unknown type")
        );
        assert!(parse(" 1 x string\n").unwrap_err().contains("outside"));
        assert!(parse("A\n one x string\n").unwrap_err().contains("line 2"));
        assert!(parse("A\n 1 x ^string\n").unwrap_err().contains("inline"));
    }
}

//! The protobuf wire format itself: varints, tags and length-delimited
//! fields, read from a byte slice without copying and written into a
//! buffer. Malformed input is an error, never a panic.

/// One field's value as it lies on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 2: bytes, a string, a message or packed numbers.
    Bytes(&'a [u8]),
    /// Wire types 1 and 5 (no Kubernetes field uses them; skipped).
    Fixed,
}

/// Malformed protobuf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

/// Reads a varint from the front of `bytes`.
pub fn varint(bytes: &[u8]) -> Result<(u64, &[u8]), Malformed> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, &bytes[i + 1..]));
        }
    }
    Err(Malformed)
}

/// The fields of one message, in wire order.
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    /// The fields of `message`.
    pub fn new(message: &'a [u8]) -> Self {
        Fields { rest: message }
    }

    /// What is left to read.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let read = read_field(self.rest);
        match read {
            Ok((field, rest)) => {
                self.rest = rest;
                Some(Ok(field))
            }
            Err(error) => {
                self.rest = &[];
                Some(Err(error))
            }
        }
    }
}

fn read_field(bytes: &[u8]) -> Result<((u64, Value<'_>), &[u8]), Malformed> {
    let (tag, rest) = varint(bytes)?;
    let number = tag >> 3;
    if number == 0 {
        return Err(Malformed);
    }
    match tag & 7 {
        0 => {
            let (value, rest) = varint(rest)?;
            Ok(((number, Value::Varint(value)), rest))
        }
        1 => Ok(((number, Value::Fixed), rest.get(8..).ok_or(Malformed)?)),
        2 => {
            let (len, rest) = varint(rest)?;
            let len = usize::try_from(len).map_err(|_| Malformed)?;
            if len > rest.len() {
                return Err(Malformed);
            }
            let (value, rest) = rest.split_at(len);
            Ok(((number, Value::Bytes(value)), rest))
        }
        5 => Ok(((number, Value::Fixed), rest.get(4..).ok_or(Malformed)?)),
        _ => Err(Malformed),
    }
}

/// Appends a varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // Truncation intended: the low seven bits, with the "more" bit.
        #[allow(clippy::cast_possible_truncation, reason = "the low seven bits")]
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "below 0x80")]
    out.push(value as u8);
}

/// Appends a varint field.
pub fn put_varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    put_varint(out, u64::from(number) << 3);
    put_varint(out, value);
}

/// Appends a length-delimited field.
pub fn put_bytes_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(number) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a length-delimited field whose content `write` appends (written
/// in place, then moved right by its length prefix's size: one copy of the
/// content, no buffer of its own).
pub fn put_nested(out: &mut Vec<u8>, number: u32, write: impl FnOnce(&mut Vec<u8>)) {
    put_varint(out, (u64::from(number) << 3) | 2);
    let start = out.len();
    write(out);
    let len = out.len() - start;
    let mut prefix = Vec::with_capacity(10);
    put_varint(&mut prefix, len as u64);
    out.splice(start..start, prefix);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_overlong_ones_fail() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(varint(&out), Ok((value, &[][..])));
        }
        assert_eq!(varint(&[0x80; 11]), Err(Malformed));
        assert_eq!(varint(&[0x80]), Err(Malformed));
    }

    #[test]
    fn fields_read_in_order_and_a_cut_message_fails() {
        let mut out = Vec::new();
        put_bytes_field(&mut out, 1, b"abc");
        put_varint_field(&mut out, 2, 7);
        put_nested(&mut out, 3, |out| put_bytes_field(out, 1, &[b'x'; 200]));
        let fields: Vec<_> = Fields::new(&out).collect::<Result<_, _>>().unwrap();
        assert_eq!(fields[0], (1, Value::Bytes(b"abc")));
        assert_eq!(fields[1], (2, Value::Varint(7)));
        let (3, Value::Bytes(inner)) = fields[2] else {
            panic!("{fields:?}")
        };
        assert_eq!(inner.len(), 203);
        let cut = &out[..out.len() - 1];
        assert!(Fields::new(cut).any(|f| f.is_err()));
        // Field number 0 and wire types 3, 4, 6, 7 do not exist.
        assert!(Fields::new(&[0x02, 0x00]).any(|f| f.is_err()));
        assert!(Fields::new(&[0x0b]).any(|f| f.is_err()));
    }
}

//! Splits a JSON byte stream at its List items. Each item is then decoded from
//! its own bytes — serde_json reads a slice several times faster than a
//! reader, and a Node or Pod goes straight into its slim type without a tree
//! of values — while the rest of each document (its envelope, `items`
//! emptied) goes through the document decoder in `stream` as before.
//!
//! Only the `items` array directly under a top-level object is split; every
//! other shape (a single object, a top-level array of documents, a scalar)
//! stays whole in the envelope. The scanner only tracks strings and nesting,
//! never validates: malformed bytes reach serde_json, whose error is moved
//! back to the line and column of the whole file.

use std::io::Read;

/// What the scanner hands over.
pub(super) enum Piece<'a> {
    /// One element of a top-level List's `items`, with the position of its
    /// first byte and the List's `kind` when it came before the items.
    Item {
        bytes: &'a [u8],
        at: Position,
        list_kind: Option<&'a str>,
    },
    /// A whole document with its items taken out, and its List's `kind`.
    Document {
        envelope: &'a Envelope,
        list_kind: Option<&'a str>,
    },
}

/// A 1-based line and column in the whole input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// Where a position reported inside a piece that starts here lies.
    pub fn offset(self, line: usize, column: usize) -> Position {
        if line <= 1 {
            Position {
                line: self.line,
                column: self.column + column.saturating_sub(1),
            }
        } else {
            Position {
                line: self.line + line - 1,
                column,
            }
        }
    }
}

/// A document's bytes without its items, and how to find a position of the
/// envelope in the whole input.
#[derive(Debug, Default)]
pub(super) struct Envelope {
    pub bytes: Vec<u8>,
    start: Position,
    /// Per items array taken out: the envelope line it was on and how many
    /// lines it spanned.
    gaps: Vec<(usize, usize)>,
}

impl Envelope {
    /// The position in the whole input of a line and column of the envelope.
    pub fn position(&self, line: usize, column: usize) -> Position {
        let removed: usize = self
            .gaps
            .iter()
            .filter(|(gap_line, _)| *gap_line < line)
            .map(|(_, lines)| lines)
            .sum();
        self.start.offset(line + removed, column)
    }

    fn clear(&mut self, start: Position) {
        self.bytes.clear();
        self.gaps.clear();
        self.start = start;
    }

    fn line(&self) -> usize {
        1 + memchr::memchr_iter(b'\n', &self.bytes).count()
    }
}

/// The longest depth-1 string kept to compare with `items`/`kind` or use as
/// the List's kind; longer ones match nothing.
const MAX_KEPT_STRING: usize = 256;

/// Reads `reader` to the end, handing each item and each document to `sink`
/// in input order; stops at the first error `sink` returns.
pub(super) fn split<E>(
    reader: impl Read,
    sink: impl FnMut(Piece<'_>) -> Result<(), E>,
    read_error: impl Fn(std::io::Error) -> E,
) -> Result<(), E> {
    split_holding(reader, sink, read_error, MAX_HELD_BYTES)
}

/// The most the splitter holds at once: one List item, or one document
/// without its items (a document of another shape is held whole). A file
/// may be far larger (a 65,000-node `kubectl get nodes,pods -A -o json` is
/// about 1.3 GB), but no Kubernetes object is near this: etcd stores at
/// most 1.5 MiB per object.
pub(super) const MAX_HELD_BYTES: usize = 1 << 30;

/// [`split`], holding at most `max_held` bytes at once.
fn split_holding<E>(
    reader: impl Read,
    mut sink: impl FnMut(Piece<'_>) -> Result<(), E>,
    read_error: impl Fn(std::io::Error) -> E,
    max_held: usize,
) -> Result<(), E> {
    let mut scanner = Scanner::default();
    scanner.envelope.clear(scanner.at);
    let mut reader = reader;
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(read_error(error)),
        };
        scanner.feed(&chunk[..read], &mut sink)?;
        if scanner.item.len().max(scanner.envelope.bytes.len()) > max_held {
            return Err(read_error(held_too_much(max_held)));
        }
    }
    scanner.finish(&mut sink)
}

/// The error of a document or List item past `max_held` bytes.
pub(super) fn held_too_much(max_held: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "a document or List item larger than {}: refused (no Kubernetes object is near it)",
            crate::input::limits::human_bytes(max_held as u64)
        ),
    )
}

#[derive(Default)]
struct Scanner {
    /// The position of the next byte.
    at: Position,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The top-level value is an object (only then are its items split).
    in_object: bool,
    place: Place,
    /// Lines inside the current items array (taken out of the envelope).
    items_lines: usize,
    items_envelope_line: usize,
    item: Vec<u8>,
    item_at: Position,
    envelope: Envelope,
    /// The depth-1 string being read, `None` when too long to matter.
    string: Option<Vec<u8>>,
    /// The last depth-1 string read, a key until a `:` says so.
    last_string: Option<Vec<u8>>,
    /// The key whose value comes next.
    key: Option<Vec<u8>>,
    list_kind: Option<String>,
}

impl Scanner {
    /// The bytes of one read: runs inside an item that hold nothing the
    /// scanner follows are copied whole; the rest goes byte by byte.
    fn feed<E>(
        &mut self,
        mut bytes: &[u8],
        sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some((&first, rest)) = bytes.split_first() {
            if self.place == Place::InItem && !self.escaped {
                let plain = if self.in_string {
                    memchr::memchr2(b'"', b'\\', bytes)
                } else {
                    bytes.iter().position(|&b| follows_outside_strings(b))
                };
                let plain = plain.unwrap_or(bytes.len());
                if plain > 0 {
                    let (run, rest) = bytes.split_at(plain);
                    self.item.extend_from_slice(run);
                    self.advance(run);
                    bytes = rest;
                    continue;
                }
            }
            self.byte(first, sink)?;
            bytes = rest;
        }
        Ok(())
    }

    /// Moves the position past a run of item bytes.
    fn advance(&mut self, run: &[u8]) {
        let Some(last) = memchr::memrchr(b'\n', run) else {
            self.at.column += run.len();
            return;
        };
        let lines = memchr::memchr_iter(b'\n', run).count();
        self.items_lines += lines;
        self.at.line += lines;
        self.at.column = run.len() - last;
    }

    fn byte<E>(
        &mut self,
        byte: u8,
        sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.place {
            Place::BetweenItems => self.between_items(byte, sink)?,
            Place::InItem => self.in_item_byte(byte, sink)?,
            Place::Envelope => self.envelope_byte(byte, sink)?,
        }
        if byte == b'\n' {
            self.at.line += 1;
            self.at.column = 1;
        } else {
            self.at.column += 1;
        }
        Ok(())
    }

    fn between_items<E>(
        &mut self,
        byte: u8,
        sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match byte {
            b'\n' => self.items_lines += 1,
            b' ' | b'\t' | b'\r' | b',' => {}
            b']' => {
                self.place = Place::Envelope;
                self.depth = 1;
                self.envelope.bytes.push(b']');
                self.envelope
                    .gaps
                    .push((self.items_envelope_line, self.items_lines));
            }
            _ => {
                self.place = Place::InItem;
                self.item.clear();
                self.item_at = self.at;
                self.in_item_byte(byte, sink)?;
            }
        }
        Ok(())
    }

    fn in_item_byte<E>(
        &mut self,
        byte: u8,
        sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.in_string && self.depth == 2 && matches!(byte, b',' | b']') {
            self.place = Place::BetweenItems;
            sink(Piece::Item {
                bytes: &self.item,
                at: self.item_at,
                list_kind: self.list_kind.as_deref(),
            })?;
            return self.between_items(byte, sink);
        }
        if byte == b'\n' {
            self.items_lines += 1;
        }
        self.item.push(byte);
        self.track(byte);
        Ok(())
    }

    /// Strings and nesting, for bytes of an item or the envelope.
    fn track(&mut self, byte: u8) -> Option<Structure> {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                return Some(Structure::StringEnd);
            }
            return None;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                Some(Structure::StringStart)
            }
            b'{' | b'[' => {
                self.depth += 1;
                Some(Structure::Open)
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                Some(Structure::Close)
            }
            _ => None,
        }
    }

    fn envelope_byte<E>(
        &mut self,
        byte: u8,
        sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let depth_before = self.depth;
        let was_in_string = self.in_string;
        // `[` opening the value of a top-level `items`: the items start.
        if !was_in_string
            && byte == b'['
            && depth_before == 1
            && self.in_object
            && self.key.as_deref() == Some(b"items".as_slice())
        {
            self.key = None;
            self.envelope.bytes.push(byte);
            self.depth = 2;
            self.place = Place::BetweenItems;
            self.items_lines = 0;
            self.items_envelope_line = self.envelope.line();
            return Ok(());
        }
        self.envelope.bytes.push(byte);
        let structure = self.track(byte);
        if depth_before == 0 && structure == Some(Structure::Open) {
            self.in_object = byte == b'{';
        }
        if depth_before == 1 && self.in_object {
            self.top_level_field(byte, was_in_string, structure);
        }
        if depth_before >= 1 && self.depth == 0 && structure == Some(Structure::Close) {
            return self.document_end(sink);
        }
        Ok(())
    }

    /// Follows the keys of the top-level object, to see `items` and `kind`.
    fn top_level_field(&mut self, byte: u8, was_in_string: bool, structure: Option<Structure>) {
        if was_in_string {
            match structure {
                Some(Structure::StringEnd) => {
                    let text = self.string.take();
                    if self.key.as_deref() == Some(b"kind".as_slice()) {
                        self.key = None;
                        self.list_kind = text.and_then(|t| String::from_utf8(t).ok());
                    } else {
                        self.last_string = text;
                    }
                }
                _ => {
                    if let Some(text) = self.string.as_mut() {
                        if text.len() < MAX_KEPT_STRING {
                            text.push(byte);
                        } else {
                            self.string = None;
                        }
                    }
                }
            }
            return;
        }
        match (byte, structure) {
            (_, Some(Structure::StringStart)) => self.string = Some(Vec::new()),
            (b':', _) => self.key = self.last_string.take(),
            (b' ' | b'\t' | b'\r' | b'\n', _) => {}
            _ => self.key = None,
        }
    }

    fn document_end<E>(
        &mut self,
        sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let list_kind = self.list_kind.take();
        sink(Piece::Document {
            envelope: &self.envelope,
            list_kind: list_kind.as_deref(),
        })?;
        self.reset();
        Ok(())
    }

    fn reset(&mut self) {
        let at = self.at;
        // The closing byte is counted after this call: start past it.
        self.envelope.clear(Position {
            line: at.line,
            column: at.column + 1,
        });
        self.in_object = false;
        self.string = None;
        self.last_string = None;
        self.key = None;
        self.list_kind = None;
    }

    /// The end of input: a cut item and what is left of the envelope go to
    /// the decoder, which says what is wrong with them.
    fn finish<E>(mut self, sink: &mut impl FnMut(Piece<'_>) -> Result<(), E>) -> Result<(), E> {
        if self.place == Place::InItem {
            sink(Piece::Item {
                bytes: &self.item,
                at: self.item_at,
                list_kind: self.list_kind.as_deref(),
            })?;
        }
        if self.place != Place::Envelope {
            // The input ends inside `items`: hand the decoder an envelope
            // that is cut there too, so it reports the end of input.
            self.envelope
                .gaps
                .push((self.items_envelope_line, self.items_lines));
        }
        let has_content = self.envelope.bytes.iter().any(|b| !b.is_ascii_whitespace());
        if has_content {
            let list_kind = self.list_kind.take();
            sink(Piece::Document {
                envelope: &self.envelope,
                list_kind: list_kind.as_deref(),
            })?;
        }
        Ok(())
    }
}

/// Whether the scanner must see this byte outside a string (inside one:
/// quotes and backslashes).
fn follows_outside_strings(byte: u8) -> bool {
    matches!(byte, b'"' | b'{' | b'}' | b'[' | b']' | b',')
}

/// Where in a document the scanner is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Place {
    /// Outside a top-level `items` array: the bytes are the envelope's.
    #[default]
    Envelope,
    /// Inside `items`, between elements.
    BetweenItems,
    /// Inside `items`, in an element.
    InItem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Structure {
    StringStart,
    StringEnd,
    Open,
    Close,
}

impl Default for Position {
    fn default() -> Self {
        Position { line: 1, column: 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the scanner hands over, as text: `item@line:column` and `doc`.
    fn pieces(input: &str) -> Vec<String> {
        let mut seen = Vec::new();
        let sink = |piece: Piece<'_>| {
            seen.push(match piece {
                Piece::Item {
                    bytes,
                    at,
                    list_kind,
                } => format!(
                    "item {} @{}:{} {list_kind:?}",
                    String::from_utf8_lossy(bytes).trim(),
                    at.line,
                    at.column
                ),
                Piece::Document {
                    envelope,
                    list_kind,
                } => format!(
                    "doc {} {list_kind:?}",
                    String::from_utf8_lossy(&envelope.bytes).trim()
                ),
            });
            Ok::<(), ()>(())
        };
        split(input.as_bytes(), sink, |_| ()).unwrap();
        seen
    }

    #[test]
    fn items_of_a_top_level_list_come_one_by_one_with_their_position() {
        let input = "{\"kind\": \"NodeList\",\n \"items\": [\n  {\"a\": [1, {\"b\": \"]}\"}]},\n  {\"c\": 2}\n ],\n \"metadata\": {}}";
        assert_eq!(
            pieces(input),
            [
                "item {\"a\": [1, {\"b\": \"]}\"}]} @3:3 Some(\"NodeList\")",
                "item {\"c\": 2} @4:3 Some(\"NodeList\")",
                "doc {\"kind\": \"NodeList\",\n \"items\": [],\n \"metadata\": {}} Some(\"NodeList\")",
            ]
        );
    }

    #[test]
    fn the_kind_after_the_items_comes_with_the_document() {
        let pieces = pieces(r#"{"items": [{"x": "\"[{"}], "kind": "PodList"}"#);
        assert_eq!(pieces[0], r#"item {"x": "\"[{"} @1:12 None"#);
        assert_eq!(
            pieces[1],
            r#"doc {"items": [], "kind": "PodList"} Some("PodList")"#
        );
    }

    #[test]
    fn only_the_top_level_items_array_is_split() {
        // Nested `items`, a top-level array, `items` that is not an array, a
        // key named `items` in a string value: all stay in the envelope.
        for input in [
            r#"{"spec": {"items": [1, 2]}}"#,
            r#"[{"items": [1]}]"#,
            r#"{"items": {"a": 1}}"#,
            r#"{"note": "items", "other": [1]}"#,
        ] {
            assert_eq!(pieces(input), [format!("doc {input} None")], "{input}");
        }
    }

    #[test]
    fn concatenated_documents_and_scalars_between_them() {
        assert_eq!(
            pieces("{\"items\": [1]} 7 {\"items\": []}"),
            [
                "item 1 @1:12 None",
                "doc {\"items\": []} None",
                "doc 7 {\"items\": []} None"
            ]
        );
    }

    #[test]
    fn cut_input_hands_over_what_it_has() {
        assert_eq!(
            pieces(r#"{"items": [{"a": 1}, {"b": "#),
            [
                "item {\"a\": 1} @1:12 None",
                "item {\"b\": @1:22 None",
                "doc {\"items\": [ None"
            ]
        );
    }

    #[test]
    fn envelope_positions_count_the_lines_of_the_items_taken_out() {
        let mut envelope = None;
        let input = "{\"items\": [\n{},\n{}\n],\n\"x\": oops}";
        split(
            input.as_bytes(),
            |piece| {
                if let Piece::Document { envelope: e, .. } = piece {
                    envelope = Some(e.position(2, 7));
                }
                Ok::<(), ()>(())
            },
            |_| (),
        )
        .unwrap();
        // `oops` is on line 2 of the envelope, line 5 of the input.
        assert_eq!(envelope, Some(Position { line: 5, column: 7 }));
    }

    #[test]
    fn positions_inside_a_piece_move_to_the_whole_input() {
        let at = Position { line: 3, column: 5 };
        assert_eq!(at.offset(1, 4), Position { line: 3, column: 8 });
        assert_eq!(at.offset(2, 4), Position { line: 4, column: 4 });
    }

    /// A file may be larger than what is held at once: many small items
    /// pass, one item or one unsplit document past the bound is refused
    /// (checked between reads: the read stops there, not at the end of the
    /// input).
    #[test]
    fn only_what_is_held_at_once_is_bounded() {
        // Read 16 bytes at a time: the bound is checked between reads.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(out.len()).min(16);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let run = |input: &str| {
            let mut items = 0;
            let result = split_holding(
                Trickle(input.as_bytes()),
                |piece: Piece<'_>| {
                    items += usize::from(matches!(piece, Piece::Item { .. }));
                    Ok(())
                },
                |error| error.to_string(),
                64,
            );
            (items, result)
        };
        let many = format!("{{\"items\": [{}{{}}]}}", "{\"a\": 1}, ".repeat(100));
        assert_eq!(run(&many), (101, Ok(())));
        let big_item = format!("{{\"items\": [{{\"a\": \"{}\"}}]}}", "x".repeat(100));
        let (_, result) = run(&big_item);
        assert!(
            result
                .as_ref()
                .is_err_and(|e| e.contains("a document or List item larger than 64 bytes")),
            "{result:?}"
        );
        let big_document = format!("{{\"kind\": \"Node\", \"a\": \"{}\"}}", "x".repeat(100));
        assert!(run(&big_document).1.is_err());
    }
}

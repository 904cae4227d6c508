//! The container-log sections of `kubectl cluster-info dump` output, removed
//! from the byte stream before JSON decoding. kubectl writes each section as
//! a `==== START logs for container ... ====` line, the log text, and an
//! `==== END logs for container ... ====` line, between its JSON Lists. JSON
//! strings cannot span lines, so a line starting with the marker is never
//! part of a JSON value. Owns only that filtering.

use std::io::{BufRead, Read};

const START: &[u8] = b"==== START logs";
const END: &[u8] = b"==== END logs";

/// A reader that passes every line except log sections through. Only the
/// first bytes of each line are buffered (a minified List is one long line).
pub(super) struct LogSections<R> {
    inner: R,
    /// The start of the current line, until it is known not to be a marker.
    prefix: Vec<u8>,
    at: usize,
    mode: Mode,
    in_section: bool,
    /// How many log sections were dropped.
    pub skipped: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// At the start of a line: read its first bytes and decide.
    LineStart,
    /// Pass the prefix, then the rest of the line, through.
    Pass,
    /// Drop the rest of the line.
    Drop,
}

impl<R: BufRead> LogSections<R> {
    pub fn new(inner: R) -> Self {
        LogSections {
            inner,
            prefix: Vec::with_capacity(START.len()),
            at: 0,
            mode: Mode::LineStart,
            in_section: false,
            skipped: 0,
        }
    }

    /// Reads up to a marker's length of the line; decides pass or drop.
    fn start_line(&mut self) -> std::io::Result<bool> {
        self.prefix.clear();
        self.at = 0;
        // Both markers start with `=`: a line that does not is decided by
        // its first byte, without copying it aside (most lines of a dump).
        match self.inner.fill_buf()?.first() {
            None => return Ok(false),
            Some(&first) if first != b'=' => {
                self.mode = if self.in_section {
                    Mode::Drop
                } else {
                    Mode::Pass
                };
                return Ok(true);
            }
            Some(_) => {}
        }
        while self.prefix.len() < START.len() && self.prefix.last() != Some(&b'\n') {
            let Some(&byte) = self.inner.fill_buf()?.first() else {
                break;
            };
            self.inner.consume(1);
            self.prefix.push(byte);
        }
        if self.prefix.is_empty() {
            return Ok(false);
        }
        let ends_line = self.prefix.last() == Some(&b'\n');
        if self.prefix.starts_with(START) {
            self.in_section = true;
            self.skipped += 1;
        } else if self.prefix.starts_with(END) {
            self.in_section = false;
        } else if !self.in_section {
            self.mode = Mode::Pass;
            return Ok(true);
        }
        self.prefix.clear();
        self.mode = if ends_line {
            Mode::LineStart
        } else {
            Mode::Drop
        };
        Ok(true)
    }
}

impl<R: BufRead> Read for LogSections<R> {
    /// Fills `buf` with as many lines as fit (one line per call would make
    /// a pretty-printed dump cost a call per 30 bytes).
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut written = 0;
        while written < buf.len() {
            let n = self.read_line_part(&mut buf[written..])?;
            if n == 0 {
                break;
            }
            written += n;
        }
        Ok(written)
    }
}

impl<R: BufRead> LogSections<R> {
    /// At most the rest of one line that passes; 0 at the end of input.
    fn read_line_part(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.mode {
                Mode::LineStart => {
                    if !self.start_line()? {
                        return Ok(0);
                    }
                }
                Mode::Pass if self.at < self.prefix.len() => {
                    let rest = &self.prefix[self.at..];
                    let n = rest.len().min(buf.len());
                    buf[..n].copy_from_slice(&rest[..n]);
                    self.at += n;
                    if self.at == self.prefix.len() && self.prefix.last() == Some(&b'\n') {
                        self.mode = Mode::LineStart;
                    }
                    return Ok(n);
                }
                Mode::Pass | Mode::Drop => {
                    let chunk = self.inner.fill_buf()?;
                    if chunk.is_empty() {
                        return Ok(0);
                    }
                    let pass = self.mode == Mode::Pass;
                    // Look no further than what this call can pass on: a
                    // minified List is one line of megabytes, and a reader
                    // asking for a byte at a time must not rescan it per byte.
                    let window = if pass {
                        &chunk[..chunk.len().min(buf.len())]
                    } else {
                        chunk
                    };
                    let (len, ends_line) = match window.iter().position(|&b| b == b'\n') {
                        Some(i) => (i + 1, true),
                        None => (window.len(), false),
                    };
                    let n = if pass { len.min(buf.len()) } else { len };
                    if pass {
                        buf[..n].copy_from_slice(&chunk[..n]);
                    }
                    self.inner.consume(n);
                    if ends_line && n == len {
                        self.mode = Mode::LineStart;
                    }
                    if pass {
                        return Ok(n);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_sections_are_dropped_and_counted() {
        let text = "{\"a\":\n1}\n==== START logs for container c of pod ns/p ====\n{not json\n==== END logs for container c of pod ns/p ====\n{\"b\":2}\n==== START logs for container d of pod ns/q ====\nlast";
        for capacity in [1, 3, 64] {
            let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
            let mut filter = LogSections::new(reader);
            let mut out = String::new();
            filter.read_to_string(&mut out).unwrap();
            assert_eq!(out, "{\"a\":\n1}\n{\"b\":2}\n", "capacity {capacity}");
            assert_eq!(filter.skipped, 2);
        }
        let long = format!("{{\"x\":\"{}\"}}", "y".repeat(100_000));
        let mut out = String::new();
        LogSections::new(long.as_bytes())
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, long, "a long line without a newline passes whole");
    }
}

//! Dumps as they arrive: a file, a FIFO, a directory (walked recursively), an
//! archive (`.tar`, `.tar.gz`/`.tgz`, `.tar.xz`, `.zip`, and archives inside
//! those one level deep) or stdin (`-`), fed document by document to the
//! snapshot loader.
//!
//! Archives are read as streams, in memory: nothing is ever extracted to disk,
//! so a `../../x` entry cannot write anywhere; such entries, links and
//! non-regular files are refused with a warning. Every expansion is bounded
//! ([`Limits`]): entry sizes, total expanded bytes, expansion ratio, entry
//! counts and nesting, with an error naming the bound; and so is every
//! document, wherever it comes from (a file, a FIFO, stdin, an archive
//! member, a decompressed stream): at most [`Limits::max_entry_bytes`],
//! counted as it is read. Knows nothing of
//! object kinds beyond the file-name hints of [`layout`]; decoding is the
//! loader's.

mod archive;
pub mod layout;

use std::cell::{Cell, RefCell};
use std::path::Path;

use crate::input::error::SnapshotError;
use crate::input::limits::human_bytes;
use crate::input::loader::SnapshotLoader;
use crate::input::source::{self, Opened, STDIN_NAME};

/// The bounds on what a dump may expand to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// One document or archive member, however it arrives (a file, a FIFO,
    /// stdin, an archive entry, a decompressed stream).
    pub max_entry_bytes: u64,
    /// Everything read or decompressed from one input, together.
    pub max_total_bytes: u64,
    /// Files and archive entries in one input.
    pub max_entries: usize,
    /// Archives inside archives (1: a tarball of must-gather tarballs, no deeper).
    pub max_nesting: usize,
    /// Decompressed bytes per compressed byte, beyond `ratio_floor` bytes.
    pub max_ratio: u64,
    /// Output below which the ratio is not checked.
    pub ratio_floor: u64,
    /// Folder depth of a directory walk.
    pub max_dir_depth: usize,
    /// Memory the xz decoder may use for its dictionary, in KiB.
    pub xz_memory_kib: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        const GIB: u64 = 1 << 30;
        Limits {
            // JSON streams (the loader holds one List item at a time, and
            // YAML at most 1 GiB): a 65,000-node `kubectl get nodes,pods -A
            // -o json` in one file is about 1.3 GB.
            max_entry_bytes: 8 * GIB,
            max_total_bytes: 16 * GIB,
            max_entries: 1_000_000,
            max_nesting: 1,
            max_ratio: 200,
            ratio_floor: 64 << 20,
            max_dir_depth: 64,
            xz_memory_kib: 256 * 1024,
        }
    }
}

/// Adds one `-f` argument: stdin, a directory, an archive or a document file.
pub fn add_input(loader: &mut SnapshotLoader, path: &Path) -> Result<(), SnapshotError> {
    add_input_with(loader, path, &Limits::default())
}

/// [`add_input`] under `limits`.
pub fn add_input_with(
    loader: &mut SnapshotLoader,
    path: &Path,
    limits: &Limits,
) -> Result<(), SnapshotError> {
    let budget = Budget::new(limits.clone());
    let mut walk = archive::Walk {
        loader,
        budget: &budget,
    };
    let name = path.display().to_string();
    match source::open(path, &name)? {
        Opened::Stdin => {
            let stdin = std::io::stdin().lock();
            walk.stream(STDIN_NAME, walk.whole_input(Box::new(stdin)), 0, None, true)
        }
        Opened::Directory => walk.directory(path, &name),
        Opened::File { file, size } => walk.file(file, size, &name, true),
    }
}

/// What one input has used of its [`Limits`] so far; shared by the readers
/// that count bytes as they pass, which record here why they stopped.
#[derive(Debug)]
pub(crate) struct Budget {
    limits: Limits,
    expanded: Cell<u64>,
    entries: Cell<usize>,
    refused: RefCell<Option<String>>,
}

impl Budget {
    fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            expanded: Cell::new(0),
            entries: Cell::new(0),
            refused: RefCell::new(None),
        }
    }

    /// Records why reading stopped; the first reason wins.
    fn refuse(&self, message: String) -> std::io::Error {
        let mut refused = self.refused.borrow_mut();
        if refused.is_none() {
            *refused = Some(message.clone());
        }
        std::io::Error::other(message)
    }

    /// The reason reading was refused, if a bound was hit.
    fn take_refusal(&self) -> Option<String> {
        self.refused.borrow_mut().take()
    }
}

/// A reader counting what passes against a limit (`what` names it: `one
/// file`), the input's total (when `expands`) and a ratio to the compressed
/// size (when known).
struct Bounded<'b, R> {
    inner: R,
    budget: &'b Budget,
    read: u64,
    limit: u64,
    what: &'static str,
    expands: bool,
    compressed: Option<u64>,
}

impl<'b, R> Bounded<'b, R> {
    fn new(
        inner: R,
        budget: &'b Budget,
        limit: u64,
        expands: bool,
        compressed: Option<u64>,
    ) -> Self {
        Bounded {
            inner,
            budget,
            read: 0,
            limit,
            what: "one file",
            expands,
            compressed,
        }
    }
}

impl<R: std::io::Read> std::io::Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let step = n as u64;
        self.read += step;
        let limits = &self.budget.limits;
        if self.read > self.limit {
            return Err(self.budget.refuse(format!(
                "refused: larger than {}, the limit for {}",
                human_bytes(self.limit),
                self.what
            )));
        }
        if self.expands {
            let total = self.budget.expanded.get() + step;
            self.budget.expanded.set(total);
            if total > limits.max_total_bytes {
                return Err(self.budget.refuse(format!(
                    "refused: expands past {} in total",
                    human_bytes(limits.max_total_bytes)
                )));
            }
            if let Some(compressed) = self.compressed
                && self.read > limits.ratio_floor
                && self.read > compressed.saturating_mul(limits.max_ratio)
            {
                return Err(self.budget.refuse(format!(
                    "refused: expands more than {} times its compressed size of {compressed} bytes (a zip bomb?)",
                    limits.max_ratio
                )));
            }
        }
        Ok(n)
    }
}

impl<R> Bounded<'_, R> {
    /// Names the limit in the refusal (`one input`).
    fn named(mut self, what: &'static str) -> Self {
        self.what = what;
        self
    }
}

#[cfg(test)]
mod tests;

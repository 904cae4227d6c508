//! Walking one input: directories, archive formats and compression layers,
//! down to the documents handed to the loader. Every byte that comes out of
//! a decompressor or an archive entry passes a [`Bounded`] reader.

use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Component, Path};

use super::layout::{FileClass, classify, decompressed_name, kind_hint};
use super::{Bounded, Budget};
use crate::input::error::SnapshotError;
use crate::input::limits::human_bytes;
use crate::input::loader::SnapshotLoader;
use crate::input::source::{self, Start, ZERO_PROBE};

/// How many compression layers one stream may have (`.tar.gz` has one).
const MAX_LAYERS: usize = 2;

/// What the first bytes of a stream say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Gzip,
    Xz,
    Zip,
    Tar,
    /// Neither an archive nor compressed: JSON, YAML, or nothing rollcall reads.
    Document,
}

fn sniff(head: &[u8]) -> Format {
    if head.starts_with(&[0x1f, 0x8b]) {
        Format::Gzip
    } else if head.starts_with(b"\xfd7zXZ\0") {
        Format::Xz
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Format::Zip
    } else if head.get(257..262) == Some(b"ustar") {
        Format::Tar
    } else {
        Format::Document
    }
}

/// One input being walked.
pub(super) struct Walk<'w, 'b> {
    pub loader: &'w mut SnapshotLoader,
    pub budget: &'b Budget,
}

impl<'b> Walk<'_, 'b> {
    fn refused(source_name: &str, message: String) -> SnapshotError {
        SnapshotError::Refused {
            source_name: source_name.to_owned(),
            message,
        }
    }

    /// An I/O error while reading `source_name`: the refusal behind it, if any.
    fn io_error(&self, source_name: &str, error: &std::io::Error) -> SnapshotError {
        match self.budget.take_refusal() {
            Some(message) => Self::refused(source_name, message),
            None => SnapshotError::Refused {
                source_name: source_name.to_owned(),
                message: format!("cannot read the archive: {error}"),
            },
        }
    }

    /// Counts one more file or entry against the input's limit.
    fn count_entry(&self, source_name: &str) -> Result<(), SnapshotError> {
        let entries = self.budget.entries.get() + 1;
        self.budget.entries.set(entries);
        let max = self.budget.limits.max_entries;
        if entries > max {
            return Err(Self::refused(
                source_name,
                format!("refused: more than {max} files and archive entries"),
            ));
        }
        Ok(())
    }

    /// Walks a directory, files in name order; symbolic links are not followed.
    pub fn directory(&mut self, root: &Path, root_name: &str) -> Result<(), SnapshotError> {
        let mut stack = vec![(root.to_path_buf(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let read_error = |error| SnapshotError::Read {
                source_name: dir.display().to_string(),
                error,
            };
            let mut children: Vec<_> = std::fs::read_dir(&dir)
                .map_err(read_error)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .collect();
            children.sort();
            // Depth first, in name order: push subfolders in reverse.
            let mut subdirs = Vec::new();
            for child in children {
                let name = child.display().to_string();
                let Ok(metadata) = std::fs::symlink_metadata(&child) else {
                    self.loader.skip_file(&name, "unreadable", true);
                    continue;
                };
                if metadata.file_type().is_symlink() {
                    self.loader
                        .skip_file(&name, "symbolic link (not followed)", false);
                } else if metadata.is_dir() {
                    if depth + 1 > self.budget.limits.max_dir_depth {
                        self.loader.skip_file(&name, "folder nested too deep", true);
                    } else {
                        subdirs.push((child, depth + 1));
                    }
                } else if metadata.is_file() {
                    self.count_entry(root_name)?;
                    match classify(&name) {
                        FileClass::Document | FileClass::Archive => {
                            let file = File::open(&child).map_err(|error| SnapshotError::Read {
                                source_name: name.clone(),
                                error,
                            })?;
                            self.file(file, Some(metadata.len()), &name, false)?;
                        }
                        FileClass::Other => {
                            self.loader
                                .skip_file(&name, "not .json, .yaml or .yml", false);
                        }
                    }
                } else {
                    self.loader.skip_file(&name, "not a regular file", false);
                }
            }
            stack.extend(subdirs.into_iter().rev());
        }
        Ok(())
    }

    /// Bounds everything read from one `-f` argument that is a stream (stdin,
    /// a FIFO, a file): the input's total, like what is decompressed from it.
    pub fn whole_input<'r>(&self, reader: Box<dyn Read + 'r>) -> Box<dyn Read + 'r>
    where
        'b: 'r,
    {
        let limit = self.budget.limits.max_total_bytes;
        Box::new(Bounded::new(reader, self.budget, limit, false, None).named("one input"))
    }

    /// An open file (a regular file of `size` bytes, or a FIFO): a zip by its
    /// first bytes (read from disk where it can seek), else a stream.
    pub fn file(
        &mut self,
        mut file: File,
        size: Option<u64>,
        name: &str,
        strict: bool,
    ) -> Result<(), SnapshotError> {
        let read_error = |error| SnapshotError::Read {
            source_name: name.to_owned(),
            error,
        };
        let mut head = Vec::with_capacity(512);
        (&mut file)
            .take(512)
            .read_to_end(&mut head)
            .map_err(read_error)?;
        if size.is_some() && sniff(&head) == Format::Zip {
            file.seek(SeekFrom::Start(0)).map_err(read_error)?;
            return self.zip(name, file, 0);
        }
        let reader = self.whole_input(Box::new(Cursor::new(head).chain(file)));
        self.stream(name, reader, 0, size, strict)
    }

    /// A stream of unknown format: decompressed, unpacked or read as documents.
    /// `depth` counts archives around it; `compressed` is its size when known.
    pub fn stream<'r>(
        &mut self,
        name: &str,
        reader: Box<dyn Read + 'r>,
        depth: usize,
        compressed: Option<u64>,
        strict: bool,
    ) -> Result<(), SnapshotError>
    where
        'b: 'r,
    {
        self.layer(name, reader, depth, compressed, strict, 0)
    }

    fn layer<'r>(
        &mut self,
        name: &str,
        mut reader: Box<dyn Read + 'r>,
        depth: usize,
        compressed: Option<u64>,
        strict: bool,
        layers: usize,
    ) -> Result<(), SnapshotError>
    where
        'b: 'r,
    {
        let mut head = Vec::with_capacity(512);
        (&mut reader)
            .take(512)
            .read_to_end(&mut head)
            .map_err(|e| self.io_error(name, &e))?;
        let format = sniff(&head);
        let reader: Box<dyn Read + 'r> = Box::new(Cursor::new(head).chain(reader));
        let limits = &self.budget.limits;
        let budget = self.budget;
        let decompressed = |decoder: Box<dyn Read + 'r>| -> Box<dyn Read + 'r> {
            Box::new(Bounded::new(
                decoder,
                budget,
                limits.max_total_bytes,
                true,
                compressed,
            ))
        };
        if matches!(format, Format::Gzip | Format::Xz) && layers >= MAX_LAYERS {
            return Err(Self::refused(
                name,
                format!("refused: more than {MAX_LAYERS} compression layers"),
            ));
        }
        let inner = decompressed_name(name);
        match format {
            Format::Gzip => {
                let decoder = decompressed(Box::new(flate2::read::MultiGzDecoder::new(reader)));
                self.layer(&inner, decoder, depth, compressed, strict, layers + 1)
            }
            Format::Xz => {
                let xz = lzma_rust2::XzReader::new_mem_limit(reader, true, limits.xz_memory_kib);
                let decoder = decompressed(Box::new(xz));
                self.layer(&inner, decoder, depth, compressed, strict, layers + 1)
            }
            Format::Tar => self.tar(name, reader, depth),
            Format::Zip => {
                let mut bytes = Vec::new();
                Bounded::new(reader, budget, limits.max_entry_bytes, false, None)
                    .read_to_end(&mut bytes)
                    .map_err(|e| self.io_error(name, &e))?;
                self.zip(name, Cursor::new(bytes), depth)
            }
            Format::Document => self.document(name, name, reader, strict),
        }
    }

    /// Documents: handed to the loader with the file name's kind hint, at
    /// most one file's worth, once their first bytes show they can be JSON or
    /// YAML. Outside `strict` mode (files found inside a dump) a malformed
    /// file is a warning.
    fn document(
        &mut self,
        source_name: &str,
        path: &str,
        reader: Box<dyn Read + '_>,
        strict: bool,
    ) -> Result<(), SnapshotError> {
        let budget = self.budget;
        let mut reader = Bounded::new(reader, budget, budget.limits.max_entry_bytes, false, None);
        let mut head = Vec::with_capacity(512);
        let result = (&mut reader)
            .take(512)
            .read_to_end(&mut head)
            .map_err(|e| self.io_error(source_name, &e))
            .and_then(|_| match source::start(&head) {
                Start::Text => {
                    let reader = Cursor::new(head).chain(reader);
                    self.loader
                        .add_reader_as(source_name, reader, kind_hint(path))
                }
                Start::Zeros => self.zeros(source_name, head.len(), reader),
                Start::Refused(message) => Err(Self::refused(source_name, message)),
            });
        match result {
            Ok(()) => Ok(()),
            Err(error) => {
                if let Some(message) = self.budget.take_refusal() {
                    return Err(Self::refused(source_name, message));
                }
                if strict {
                    return Err(error);
                }
                self.loader.file_failed(&error);
                Ok(())
            }
        }
    }

    /// A stream that starts with `seen` NUL bytes: skipped when it ends within
    /// [`ZERO_PROBE`] bytes, all of them NUL (an empty tar archive, which is
    /// only zeros), else refused without reading further.
    fn zeros(
        &mut self,
        source_name: &str,
        seen: usize,
        reader: impl Read,
    ) -> Result<(), SnapshotError> {
        let mut rest = Vec::new();
        let probe = ZERO_PROBE.saturating_sub(seen as u64) + 1;
        reader
            .take(probe)
            .read_to_end(&mut rest)
            .map_err(|e| self.io_error(source_name, &e))?;
        if (rest.len() as u64) < probe && rest.iter().all(|&b| b == 0) {
            self.loader.skip_file(
                source_name,
                "empty (only NUL bytes: an empty tar archive)",
                false,
            );
            return Ok(());
        }
        Err(Self::refused(source_name, source::zeros_refused()))
    }

    fn tar<'r>(
        &mut self,
        name: &str,
        reader: Box<dyn Read + 'r>,
        depth: usize,
    ) -> Result<(), SnapshotError>
    where
        'b: 'r,
    {
        let budget = self.budget;
        let mut archive = tar::Archive::new(reader);
        let entries = archive.entries().map_err(|e| self.io_error(name, &e))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| self.io_error(name, &e))?;
            self.count_entry(name)?;
            let path = entry
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let entry_name = format!("{name}:{path}");
            let kind = entry.header().entry_type();
            if kind.is_dir() {
                continue;
            }
            if kind.is_symlink() || kind.is_hard_link() {
                self.loader
                    .skip_file(&entry_name, "link inside an archive (refused)", true);
                continue;
            }
            if !(kind.is_file() || kind.is_contiguous()) {
                continue;
            }
            if leaves_archive(&path) {
                self.loader.skip_file(
                    &entry_name,
                    "path leads outside the archive (refused)",
                    true,
                );
                continue;
            }
            let size = entry.size();
            let class = classify(&path);
            if class != FileClass::Other && size > budget.limits.max_entry_bytes {
                return Err(Self::refused(
                    &entry_name,
                    format!(
                        "refused: larger than {}, the limit for one file ({size} bytes)",
                        human_bytes(budget.limits.max_entry_bytes)
                    ),
                ));
            }
            let bounded = Bounded::new(
                &mut entry,
                budget,
                budget.limits.max_entry_bytes,
                false,
                None,
            );
            self.entry(
                &entry_name,
                &path,
                class,
                Box::new(bounded),
                depth,
                Some(size),
            )?;
        }
        Ok(())
    }

    fn zip<R: Read + Seek>(
        &mut self,
        name: &str,
        reader: R,
        depth: usize,
    ) -> Result<(), SnapshotError> {
        let budget = self.budget;
        let mut archive = zip::ZipArchive::new(reader)
            .map_err(|e| Self::refused(name, format!("cannot read the zip archive: {e}")))?;
        for index in 0..archive.len() {
            self.count_entry(name)?;
            let file = archive
                .by_index(index)
                .map_err(|e| Self::refused(name, format!("cannot read the zip archive: {e}")))?;
            let raw = file
                .name()
                .map(std::borrow::Cow::into_owned)
                .unwrap_or_default();
            let entry_name = format!("{name}:{raw}");
            if file.is_dir() {
                continue;
            }
            if file.is_symlink() {
                self.loader
                    .skip_file(&entry_name, "link inside an archive (refused)", true);
                continue;
            }
            if file.enclosed_name().is_none() || leaves_archive(&raw) {
                self.loader.skip_file(
                    &entry_name,
                    "path leads outside the archive (refused)",
                    true,
                );
                continue;
            }
            let class = classify(&raw);
            let max = budget.limits.max_entry_bytes;
            if class != FileClass::Other && file.size() > max {
                return Err(Self::refused(
                    &entry_name,
                    format!(
                        "refused: larger than {}, the limit for one file ({} bytes)",
                        human_bytes(max),
                        file.size()
                    ),
                ));
            }
            let compressed = file.compressed_size();
            let bounded = Bounded::new(file, budget, max, true, Some(compressed));
            self.entry(
                &entry_name,
                &raw,
                class,
                Box::new(bounded),
                depth,
                Some(compressed),
            )?;
        }
        Ok(())
    }

    /// One regular file inside an archive.
    fn entry<'r>(
        &mut self,
        entry_name: &str,
        path: &str,
        class: FileClass,
        reader: Box<dyn Read + 'r>,
        depth: usize,
        compressed: Option<u64>,
    ) -> Result<(), SnapshotError>
    where
        'b: 'r,
    {
        match class {
            FileClass::Document => self.document(entry_name, path, reader, false),
            FileClass::Archive if depth >= self.budget.limits.max_nesting => {
                self.loader.skip_file(
                    entry_name,
                    "archive nested more than one level deep (refused)",
                    true,
                );
                Ok(())
            }
            FileClass::Archive => self.stream(entry_name, reader, depth + 1, compressed, false),
            FileClass::Other => {
                self.loader
                    .skip_file(entry_name, "not .json, .yaml or .yml", false);
                Ok(())
            }
        }
    }
}

/// Whether an entry path is absolute or climbs out (`../../x`).
fn leaves_archive(path: &str) -> bool {
    path.starts_with(['/', '\\'])
        || Path::new(path).components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        })
        || path.split(['/', '\\']).any(|part| part == "..")
}

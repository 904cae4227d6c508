//! The entry point for `-f`: every path in order into one snapshot, and the
//! error that says what was there when nothing rollcall reads was.

use std::path::Path;

use crate::input::dump;
use crate::input::error::SnapshotError;
use crate::input::loaded::LoadedSnapshot;
use crate::input::loader::SnapshotLoader;

/// Loads every path in order (`-` is stdin; directories and archives are
/// walked, see [`crate::input::dump`]) into one snapshot. Input without a single
/// object of a kind rollcall reads is an error saying what was there.
pub fn load_paths<P: AsRef<Path>>(paths: &[P]) -> Result<LoadedSnapshot, SnapshotError> {
    load_with(SnapshotLoader::default(), paths)
}

/// [`load_paths`], keeping nodes and pods whole for the embedded cluster.
pub fn load_paths_whole<P: AsRef<Path>>(paths: &[P]) -> Result<LoadedSnapshot, SnapshotError> {
    load_with(SnapshotLoader::keep_whole(), paths)
}

fn load_with<P: AsRef<Path>>(
    mut loader: SnapshotLoader,
    paths: &[P],
) -> Result<LoadedSnapshot, SnapshotError> {
    for path in paths {
        dump::add_input(&mut loader, path.as_ref())?;
    }
    let result = loader.finish();
    if result.snapshot.is_empty() {
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.as_ref().display().to_string())
            .collect();
        let mut found = result.summary.found_instead();
        let first: Vec<String> = result
            .warnings
            .iter()
            .take(3)
            .map(ToString::to_string)
            .collect();
        if !first.is_empty() {
            found = format!("{found} ({})", first.join("; "));
        }
        return Err(SnapshotError::Empty {
            inputs: names.join(", "),
            found,
        });
    }
    Ok(result)
}

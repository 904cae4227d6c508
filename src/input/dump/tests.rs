//! Inputs as they arrive, built in memory: trees, archives, nesting, and
//! hostile archives that must be refused or bounded.

use std::io::Write;
use std::path::Path;

use super::{Limits, add_input_with};
use crate::input::LoadedSnapshot;
use crate::input::{SnapshotError, SnapshotLoader};

const NODE: &str = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","uid":"u1"}}"#;

fn tar(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, data) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        // Written raw: `set_path` would refuse the hostile names tested here.
        let gnu = header.as_gnu_mut().expect("gnu header");
        gnu.name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        builder.append(&header, *data).expect("append");
    }
    builder.into_inner().expect("tar")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut writer =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).expect("xz");
    writer.write_all(bytes).expect("xz");
    writer.finish().expect("xz")
}

fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        writer.start_file(*name, options).expect("zip entry");
        writer.write_all(data).expect("zip data");
    }
    writer.finish().expect("zip").into_inner()
}

fn load_file(name: &str, bytes: &[u8], limits: &Limits) -> Result<LoadedSnapshot, SnapshotError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    let mut loader = SnapshotLoader::default();
    add_input_with(&mut loader, &path, limits)?;
    Ok(loader.finish())
}

fn warnings(loaded: &LoadedSnapshot) -> String {
    let lines: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

#[test]
fn every_archive_format_is_read_in_memory() {
    let inner = tar(&[
        (
            "dump/cluster/Nodes.json",
            br#"[{"metadata":{"name":"n1"}}]"#,
        ),
        ("dump/notes.txt", b"not read"),
    ]);
    let limits = Limits::default();
    for (name, bytes) in [
        ("d.tar", inner.clone()),
        ("d.tar.gz", gzip(&inner)),
        ("d.tgz", gzip(&inner)),
        ("d.tar.xz", xz(&inner)),
        (
            "d.zip",
            zip(&[(
                "dump/cluster/Nodes.json",
                br#"[{"metadata":{"name":"n1"}}]"#,
            )]),
        ),
        ("nodes.json.gz", gzip(NODE.as_bytes())),
    ] {
        let loaded = load_file(name, &bytes, &limits).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            loaded.snapshot.nodes.len(),
            1,
            "{name}: {}",
            warnings(&loaded)
        );
    }
}

#[test]
fn traversal_and_link_entries_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut builder = tar::Builder::new(Vec::new());
    let mut link = tar::Header::new_gnu();
    link.set_entry_type(tar::EntryType::Symlink);
    link.set_size(0);
    builder
        .append_link(&mut link, "dump/nodes.json", "/etc/passwd")
        .expect("link");
    let mut bytes = builder.into_inner().expect("tar");
    // The end-of-archive blocks go last: splice the link before them.
    bytes.truncate(bytes.len() - 1024);
    bytes.extend(tar(&[
        ("../../escaped.json", NODE.as_bytes()),
        ("/abs/pods.json", NODE.as_bytes()),
        ("dump/ok.json", NODE.as_bytes()),
    ]));
    let path = dir.path().join("inner").join("hostile.tar");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, &bytes).expect("write");
    let mut tar_loader = SnapshotLoader::default();
    add_input_with(&mut tar_loader, &path, &Limits::default()).expect("loads the good entry");
    let loaded = tar_loader.finish();
    let text = warnings(&loaded);
    assert_eq!(loaded.snapshot.nodes.len(), 1, "{text}");
    assert!(
        text.contains("dump/nodes.json: skipped: link inside an archive"),
        "{text}"
    );
    assert!(
        text.contains("../../escaped.json: skipped: path leads outside"),
        "{text}"
    );
    assert!(
        text.contains("/abs/pods.json: skipped: path leads outside"),
        "{text}"
    );
    assert!(!dir.path().join("escaped.json").exists());
    let mut zip_writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    zip_writer
        .add_symlink("nodes.json", "/etc/passwd", options)
        .expect("symlink");
    zip_writer
        .start_file("../x/nodes.json", options)
        .expect("entry");
    zip_writer.write_all(NODE.as_bytes()).expect("data");
    zip_writer
        .start_file("ok/nodes.json", options)
        .expect("entry");
    zip_writer.write_all(NODE.as_bytes()).expect("data");
    let bytes = zip_writer.finish().expect("zip").into_inner();
    let loaded = load_file("h.zip", &bytes, &Limits::default()).expect("loads");
    let text = warnings(&loaded);
    assert_eq!(loaded.snapshot.nodes.len(), 1, "{text}");
    assert!(
        text.contains("h.zip:nodes.json: skipped: link inside an archive"),
        "{text}"
    );
    assert!(
        text.contains("h.zip:../x/nodes.json: skipped: path leads outside"),
        "{text}"
    );
}

#[test]
fn a_zip_bomb_is_refused_with_the_bound_it_hit() {
    let zeros = vec![b' '; 4 << 20];
    let small = Limits {
        ratio_floor: 256 << 10,
        ..Limits::default()
    };
    let err = load_file("bomb.zip", &zip(&[("nodes.json", &zeros)]), &small).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SnapshotError::Refused { .. }), "{text}");
    assert!(
        text.contains("bomb.zip:nodes.json: refused: expands more than 200 times"),
        "{text}"
    );
    let err = load_file(
        "bomb.tar.gz",
        &gzip(&tar(&[("nodes.json", &zeros)])),
        &small,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("refused: expands more than 200 times"),
        "{err}"
    );
    let tight = Limits {
        max_total_bytes: 1 << 20,
        max_entry_bytes: 512 << 10,
        ..Limits::default()
    };
    let err = load_file("big.zip", &zip(&[("nodes.json", &zeros)]), &tight).unwrap_err();
    assert!(err.to_string().contains("for one file"), "{err}");
    let many: Vec<(String, Vec<u8>)> = (0..20)
        .map(|i| (format!("n{i}/nodes.json"), NODE.as_bytes().to_vec()))
        .collect();
    let entries: Vec<(&str, &[u8])> = many
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let few = Limits {
        max_entries: 10,
        ..Limits::default()
    };
    let err = load_file("many.tar", &tar(&entries), &few).unwrap_err();
    assert!(err.to_string().contains("more than 10 files"), "{err}");
}

#[test]
fn archives_nest_one_level_deep_and_no_deeper() {
    let innermost = tar(&[("deep/nodes.json", br#"[{"metadata":{"name":"deep"}}]"#)]);
    let middle = tar(&[
        ("mid/nodes.json", br#"[{"metadata":{"name":"mid"}}]"#),
        ("mid/deeper.tar", &innermost),
    ]);
    let outer = zip(&[
        ("top/nodes.json", br#"[{"metadata":{"name":"top"}}]"#),
        ("top/inner.tar.gz", &gzip(&middle)),
    ]);
    let loaded = load_file("outer.zip", &outer, &Limits::default()).expect("loads");
    let mut names: Vec<String> = loaded
        .snapshot
        .nodes
        .iter()
        .filter_map(|n| n.metadata.name.as_deref().map(str::to_owned))
        .collect();
    names.sort();
    assert_eq!(names, ["mid", "top"]);
    assert!(
        warnings(&loaded)
            .contains("mid/deeper.tar: skipped: archive nested more than one level deep"),
        "{}",
        warnings(&loaded)
    );
}

#[test]
fn a_directory_is_walked_and_other_files_are_counted_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("a/cluster/nodes/n1.yaml", "metadata:\n  name: n1\n");
    write("a/logs/current.log", "{ not json");
    write("a/broken.json", "{\"kind\": \"Node\", ");
    let loaded = {
        let mut loader = SnapshotLoader::default();
        add_input_with(&mut loader, Path::new(root), &Limits::default()).expect("loads");
        loader.finish()
    };
    assert_eq!(loaded.snapshot.nodes.len(), 1, "{}", warnings(&loaded));
    assert_eq!(
        loaded.summary.files_skipped.get("not .json, .yaml or .yml"),
        Some(&1)
    );
    assert_eq!(
        loaded.summary.files_skipped.get("unreadable or malformed"),
        Some(&1)
    );
    assert!(
        warnings(&loaded).contains("broken.json"),
        "{}",
        warnings(&loaded)
    );
}

/// A small per-file limit, to see it counted while reading.
fn one_file_limit(bytes: u64) -> Limits {
    Limits {
        max_entry_bytes: bytes,
        ..Limits::default()
    }
}

#[test]
fn every_document_is_bounded_while_it_is_read_wherever_it_comes_from() {
    // Whitespace before a Node: nothing to sniff as wrong, so only the
    // count can stop it (issue 30 item 5: the bound was a `stat` size, or
    // none at all for streams).
    let padded = format!("{}{NODE}", " ".repeat(64 << 10));
    let limit = one_file_limit(32 << 10);
    let cases: [(&str, &str, Vec<u8>); 4] = [
        ("plain file", "nodes.json", padded.clone().into_bytes()),
        ("gzip", "nodes.json.gz", gzip(padded.as_bytes())),
        ("xz", "nodes.json.xz", xz(padded.as_bytes())),
        (
            "tar member",
            "dump.tar",
            tar(&[("nodes.json", padded.as_bytes())]),
        ),
    ];
    for (name, file, bytes) in cases {
        let err = load_file(file, &bytes, &limit).unwrap_err();
        assert!(
            err.to_string()
                .contains("refused: larger than 32 KiB, the limit for one file"),
            "{name}: {err}"
        );
    }
    let fits = format!("{}{NODE}", " ".repeat(1 << 10));
    let loaded = load_file("nodes.json", fits.as_bytes(), &limit).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
}

/// (case, file name, bytes, `Ok(reason skipped)` or `Err(words of the error)`).
type StartCase<'a> = (&'a str, &'a str, Vec<u8>, Result<&'a str, &'a str>);

#[test]
fn bytes_that_start_no_format_are_refused_early_and_empty_tars_skipped() {
    let empty_tar = tar(&[]);
    assert!(empty_tar.iter().all(|&b| b == 0), "an empty tar is zeros");
    let zeros = vec![0u8; 1 << 20];
    let cases: [StartCase; 6] = [
        (
            "nul-led file",
            "nodes.json",
            [b"\0".as_slice(), NODE.as_bytes()].concat(),
            Err(
                "nodes.json: starts with the byte 0x00, which cannot start JSON, YAML, tar, zip, gzip or xz",
            ),
        ),
        (
            "a megabyte of zeros",
            "nodes.json",
            zeros.clone(),
            Err(
                "nodes.json: starts with more than 16 KiB of NUL bytes: not JSON, YAML, tar, zip, gzip or xz",
            ),
        ),
        (
            "zeros behind gzip",
            "nodes.json.gz",
            gzip(&zeros),
            Err("starts with more than 16 KiB of NUL bytes"),
        ),
        (
            "an empty tar on its own",
            "empty.tar",
            empty_tar.clone(),
            Ok("empty (only NUL bytes: an empty tar archive)"),
        ),
        (
            // Support bundles carry empty tars; they are not "invalid YAML"
            // (issue 30 item 6).
            "an empty tar inside a bundle",
            "bundle.tar",
            tar(&[
                ("nodes.json", NODE.as_bytes()),
                ("logs/empty.tar", &empty_tar),
            ]),
            Ok("empty (only NUL bytes: an empty tar archive)"),
        ),
        (
            "utf-16",
            "nodes.json",
            b"\xff\xfe{\0}\0".to_vec(),
            Err("nodes.json: UTF-16 text; rollcall reads UTF-8"),
        ),
    ];
    for (name, file, bytes, expected) in cases {
        match (load_file(file, &bytes, &Limits::default()), expected) {
            (Ok(loaded), Ok(skipped)) => {
                assert_eq!(
                    loaded.summary.files_skipped.get(skipped),
                    Some(&1),
                    "{name}: {:?}",
                    loaded.summary
                );
                assert!(loaded.warnings.is_empty(), "{name}: {}", warnings(&loaded));
            }
            (Err(err), Err(words)) => {
                assert!(err.to_string().contains(words), "{name}: {err}");
            }
            (other, _) => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn a_nul_led_file_inside_a_dump_is_a_warning_not_the_end() {
    let bytes = tar(&[
        ("nodes.json", NODE.as_bytes()),
        ("pods.json", b"\0\0\0\x01garbage"),
    ]);
    let loaded = load_file("dump.tar", &bytes, &Limits::default()).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
    assert!(
        warnings(&loaded).contains("dump.tar:pods.json: starts with the byte 0x00"),
        "{}",
        warnings(&loaded)
    );
}

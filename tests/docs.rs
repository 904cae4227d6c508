//! The manual stays true to the repository: `docs/cli.md` is what the command
//! definitions generate (a golden file), and every relative link in the
//! Markdown files leads to a file that exists (and, into a Markdown file, to
//! a heading it has).
//!
//! To regenerate the reference after changing a flag:
//! `cargo run -- docs cli-reference > docs/cli.md` (or run this test with
//! `ROLLCALL_BLESS=1`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn cli_reference_is_current() {
    let path = repo().join("docs/cli.md");
    let generated = rollcall::cli::reference::markdown();
    if std::env::var_os("ROLLCALL_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write docs/cli.md");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "docs/cli.md is stale (first difference at line {}): regenerate it with \
             `cargo run -- docs cli-reference > docs/cli.md` or ROLLCALL_BLESS=1 cargo test --test docs",
            first + 1
        );
    }
}

/// The Markdown files of the manual.
fn markdown_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"]
        .iter()
        .map(|name| repo().join(name))
        .collect();
    for dir in ["docs", "assets/scenarios"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
            .expect(dir)
            .map(|entry| entry.expect("entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// The text outside code: fenced blocks, indented blocks and inline code
/// spans are blanked (a link shown as an example is not a link).
fn prose_of(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced || (line.starts_with("    ") && !line.trim_start().starts_with(['-', '*'])) {
            out.push('\n');
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// Every `[text](target)` target of the file, without titles.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose_of(text);
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.to_owned());
        rest = &rest[end..];
    }
    targets
}

/// The anchors GitHub makes for a file's headings: lowercase, punctuation
/// dropped (but `-` and `_`), spaces to `-`, repeats numbered `-1`, `-2`.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

fn check_link(file: &Path, target: &str) -> Result<(), String> {
    if target.is_empty() {
        return Err("an empty link".to_owned());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let dir = file.parent().expect("a file's directory");
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        dir.join(path)
    };
    if !resolved.exists() {
        return Err(format!("{target}: no such file"));
    }
    if let Some(anchor) = anchor
        && resolved.extension().is_some_and(|ext| ext == "md")
    {
        let text = std::fs::read_to_string(&resolved).expect("linked Markdown");
        if !anchors(&text).contains(anchor) {
            return Err(format!("{target}: no heading with that anchor"));
        }
    }
    Ok(())
}

#[test]
fn relative_links_lead_to_files_and_headings_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        for target in link_targets(&text) {
            checked += 1;
            if let Err(problem) = check_link(&file, &target) {
                let name = file.strip_prefix(repo()).unwrap_or(&file);
                broken.push(format!("{}: {problem}", name.display()));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the scan right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn link_scan_reads_links_and_anchors_as_github_does() {
    let text = "See [a](docs/a.md#two-words) and `[not](x.md)`.\n\n    [code](y.md)\n";
    assert_eq!(link_targets(text), ["docs/a.md#two-words"]);
    let headings = "# Two words\n## A roster: `--roster FILE`\n## Two words\n";
    let found = anchors(headings);
    for anchor in ["two-words", "a-roster---roster-file", "two-words-1"] {
        assert!(found.contains(anchor), "{anchor}: {found:?}");
    }
}

#[test]
fn readme_stays_a_first_page() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines; move details into docs/"
    );
    // `.ci/run` and CI run the README's test command; the fresh-machine
    // commands stay as they are.
    for command in ["    cargo run --release -- demo\n", "    cargo test\n"] {
        assert!(readme.contains(command), "README.md lost {command:?}");
    }
}

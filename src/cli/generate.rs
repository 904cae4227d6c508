//! `rollcall completion SHELL` and `rollcall man`: a shell completion script and
//! the man page, both generated from the clap definitions so they never drift
//! from `--help`. Writes only to stdout.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;

/// Arguments of `rollcall completion`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  source <(rollcall completion bash)
  rollcall completion zsh > \"${fpath[1]}/_rollcall\"
  rollcall completion fish > ~/.config/fish/completions/rollcall.fish")]
pub struct CompletionArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// The completion script for `shell`, for the command named `name`.
pub fn completion_script(shell: clap_complete::Shell, name: &str) -> Vec<u8> {
    let mut command = super::command("rollcall");
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, name, &mut out);
    out
}

/// One of clap_mangen's section renderers.
type Section = fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>;

/// The man page in roff.
///
/// One page: its SUBCOMMANDS section names each as `rollcall SUB` with its
/// summary and points at `rollcall SUB --help`, instead of clap_mangen's
/// references to `rollcall-SUB(1)` pages that are not installed.
pub fn man_page() -> anyhow::Result<Vec<u8>> {
    let command = super::command("rollcall");
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    let sections: [Section; 4] = [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
    ];
    for section in sections {
        section(&man, &mut out).context("cannot render the man page")?;
    }
    man.render_options_section(&mut out)
        .context("cannot render the man page")?;
    out.extend_from_slice(b".SH SUBCOMMANDS\n");
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        out.extend_from_slice(
            format!(
                ".TP\n\\fBrollcall {}\\fR\n{}\n",
                roff_text(sub.get_name()),
                roff_text(&about)
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(
        b".PP\nEach subcommand's options: \\fBrollcall SUBCOMMAND \\-\\-help\\fR.\n",
    );
    for section in [
        clap_mangen::Man::render_extra_section,
        clap_mangen::Man::render_version_section,
    ] {
        section(&man, &mut out).context("cannot render the man page")?;
    }
    Ok(out)
}

/// Text for a roff line: backslashes and dashes escaped, a leading control
/// character neutralised.
fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// Runs `rollcall completion SHELL`.
pub fn completion(args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    write_stdout(&completion_script(args.shell, "rollcall"))
}

/// Runs `rollcall man`.
pub fn man() -> anyhow::Result<ExitCode> {
    write_stdout(&man_page()?)
}

/// Writes `bytes` to stdout as they are; a reader that stopped early is not an error.
pub(crate) fn write_stdout(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_name_the_subcommands_and_global_flags() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let script = String::from_utf8(completion_script(shell, "rollcall")).unwrap();
            for word in ["status", "rollback", "kubeconfig", "read-only"] {
                assert!(script.contains(word), "{shell}: {word} missing");
            }
        }
    }

    #[test]
    fn man_page_has_the_sections() {
        let page = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(
            page.starts_with(".ie") || page.contains(".TH rollcall"),
            "{page}"
        );
        assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
        assert!(page.contains("\\fBrollcall status\\fR"), "{page}");
        assert!(
            !page.contains("rollcall\\-auto(1)"),
            "no page for it is installed"
        );
        assert!(page.contains("kubeconfig"), "{page}");
    }
}

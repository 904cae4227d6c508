//! The command line before clap reads it: `-o FORMAT` typed before the
//! subcommand (`rollcall -o json status DS`, as kubectl users type global
//! flags) is moved to just after it, where each subcommand defines its own
//! formats (after `fleet status`, for a subcommand of a subcommand).
//! Everything else is left as typed.
//!
//! Pure: arguments in, arguments out.

use std::ffi::OsString;

/// `args` (without the program name) with an `-o`/`--output` given before the
/// subcommand moved right after the subcommand's name. Top-level flags that
/// take a value are stepped over with their value, so `--context o status`
/// is not misread; without a subcommand (the console) nothing moves.
pub fn hoist_output(args: Vec<OsString>, command: &clap::Command) -> Vec<OsString> {
    let mut output: Vec<OsString> = Vec::new();
    let mut before: Vec<OsString> = Vec::new();
    let mut rest = args.clone().into_iter();
    while let Some(arg) = rest.next() {
        let Some(text) = arg.to_str() else {
            before.push(arg);
            continue;
        };
        if text == "--" {
            before.push(arg);
            break;
        }
        if text == "-o" || text == "--output" {
            output.push(arg);
            output.extend(rest.next());
            continue;
        }
        if text.starts_with("--output=") || (text.starts_with("-o") && text.len() > 2) {
            output.push(arg);
            continue;
        }
        if let Some(flag) = text.strip_prefix('-') {
            let takes_value = !text.contains('=') && flag_takes_value(command, flag);
            before.push(arg);
            if takes_value {
                before.extend(rest.next());
            }
            continue;
        }
        let Some(sub) = command
            .get_subcommands()
            .find(|sub| sub.get_name() == text || sub.get_all_aliases().any(|a| a == text))
        else {
            break;
        };
        before.push(arg);
        // A subcommand of its own (`fleet status`): the format is the innermost's.
        let mut rest: Vec<OsString> = rest.collect();
        let nested = rest
            .first()
            .and_then(|next| next.to_str())
            .is_some_and(|next| sub.get_subcommands().any(|inner| inner.get_name() == next));
        if nested {
            before.push(rest.remove(0));
        }
        before.append(&mut output);
        before.extend(rest);
        return before;
    }
    // No subcommand after the flags: everything stays where it was typed, for clap to judge.
    args
}

/// Whether the top-level flag `flag` (`-n`, `-context`, after its first dash) takes a value.
fn flag_takes_value(command: &clap::Command, flag: &str) -> bool {
    let matches = |arg: &clap::Arg| match flag.strip_prefix('-') {
        Some(long) => arg.get_long() == Some(long),
        None => flag.len() == 1 && arg.get_short() == flag.chars().next(),
    };
    command
        .get_arguments()
        .find(|arg| matches(arg))
        .is_some_and(|arg| arg.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hoisted(line: &str) -> String {
        let args = line.split(' ').map(OsString::from).collect();
        let out = hoist_output(args, &super::super::command("rollcall"));
        out.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn output_before_the_subcommand_moves_after_it() {
        assert_eq!(hoisted("-o json status ds/x"), "status -o json ds/x");
        assert_eq!(
            hoisted("--output=json status ds/x"),
            "status --output=json ds/x"
        );
        assert_eq!(hoisted("-ojson history ds/x"), "history -ojson ds/x");
        assert_eq!(
            hoisted("-o json fleet status ds/x --all-contexts"),
            "fleet status -o json ds/x --all-contexts"
        );
    }

    #[test]
    fn values_of_other_global_flags_are_not_mistaken_for_the_subcommand() {
        assert_eq!(
            hoisted("--context status -o json status ds/x"),
            "--context status status -o json ds/x"
        );
        assert_eq!(
            hoisted("-n kube-system -o json status x"),
            "-n kube-system status -o json x"
        );
    }

    #[test]
    fn without_a_subcommand_or_after_it_nothing_moves() {
        assert_eq!(hoisted("status -o json ds/x"), "status -o json ds/x");
        assert_eq!(
            hoisted("-o json kube-system/agent"),
            "-o json kube-system/agent"
        );
        assert_eq!(
            hoisted("--read-only kube-system/agent"),
            "--read-only kube-system/agent"
        );
    }
}

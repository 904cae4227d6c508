//! The one vocabulary for eligibility: the words every surface prints (the
//! console's ELIG column and `?` help, `status`, the `explain` table) and what
//! each means, as one const table. Pure.

use std::fmt;

use super::eligibility::NodeVerdict;

/// A node's eligibility for a DaemonSet, in the words shown to people.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Eligibility {
    /// `yes`: a daemon pod belongs here (the controller creates one if none runs).
    Yes,
    /// `keep`: no new pod would be placed, but the pod running here stays.
    Keep,
    /// `no`: no daemon pod belongs here (one running would be deleted).
    No,
    /// `unknown`: the node could not be read (no right to list nodes); only
    /// its daemon pod is known.
    Unknown,
}

/// Every word with its meaning, in the order the help lists them.
pub const ELIGIBILITY_WORDS: [(Eligibility, &str, &str); 4] = [
    (
        Eligibility::Yes,
        "yes",
        "a daemon pod belongs on the node; the controller creates one if none runs",
    ),
    (
        Eligibility::Keep,
        "keep",
        "no new pod would be placed (e.g. an untolerated NoSchedule taint), but the pod running there stays",
    ),
    (
        Eligibility::No,
        "no",
        "no daemon pod belongs on the node; a pod there would be deleted (WHY says which rule)",
    ),
    (
        Eligibility::Unknown,
        "unknown",
        "the node could not be read (you may not list nodes): its pod is shown, the rules are not checked",
    ),
];

impl Eligibility {
    /// The word for a verdict; `has_pod`: a daemon pod runs on the node now
    /// ("keep" only describes a pod that exists).
    pub fn of(verdict: &NodeVerdict, has_pod: bool) -> Self {
        if verdict.is_unknown() {
            return Self::Unknown;
        }
        match (verdict.should_run, verdict.should_continue_running, has_pod) {
            (true, _, _) => Self::Yes,
            (false, true, true) => Self::Keep,
            (false, _, _) => Self::No,
        }
    }

    /// The word.
    pub fn word(self) -> &'static str {
        ELIGIBILITY_WORDS
            .iter()
            .find(|(e, _, _)| *e == self)
            .map_or("?", |(_, word, _)| word)
    }

    /// What the word means.
    pub fn meaning(self) -> &'static str {
        ELIGIBILITY_WORDS
            .iter()
            .find(|(e, _, _)| *e == self)
            .map_or("", |(_, _, meaning)| meaning)
    }
}

impl serde::Serialize for Eligibility {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.word())
    }
}

impl fmt::Display for Eligibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(should_run: bool, should_continue_running: bool) -> NodeVerdict {
        NodeVerdict {
            should_run,
            should_continue_running,
            reasons: Vec::new(),
        }
    }

    #[test]
    fn words_for_verdicts() {
        let cases = [
            ("eligible, no pod yet", verdict(true, true), false, "yes"),
            ("eligible with pod", verdict(true, true), true, "yes"),
            (
                "NoSchedule taint, pod stays",
                verdict(false, true),
                true,
                "keep",
            ),
            (
                "NoSchedule taint, no pod",
                verdict(false, true),
                false,
                "no",
            ),
            ("excluded, pod would go", verdict(false, false), true, "no"),
            ("excluded", verdict(false, false), false, "no"),
            (
                "node unreadable, pod there",
                NodeVerdict::unknown("cannot read nodes (forbidden)"),
                true,
                "unknown",
            ),
        ];
        for (name, verdict, has_pod, expected) in cases {
            assert_eq!(
                Eligibility::of(&verdict, has_pod).to_string(),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn every_word_has_a_meaning() {
        for (eligibility, word, meaning) in ELIGIBILITY_WORDS {
            assert_eq!(eligibility.word(), word);
            assert!(!meaning.is_empty());
        }
    }
}

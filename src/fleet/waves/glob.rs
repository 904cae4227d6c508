//! Shell-style globs over kubeconfig context names: `*` (any run of
//! characters, none included), `?` (one character); everything else is
//! literal. A pattern without either names one context. Pure.

/// Whether `pattern` has a wildcard (else it names one context).
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}

/// Whether the whole of `name` matches `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative with one backtrack point (the last `*`): linear in practice,
    // never exponential on hostile patterns such as `*a*a*a*b`.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some('?') => {
                p += 1;
                n += 1;
            }
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        let cases = [
            ("prod-*", "prod-eu-1", true),
            ("prod-*", "prod-", true),
            ("prod-*", "staging-prod-1", false),
            ("*-1", "prod-eu-1", true),
            ("prod-??-1", "prod-eu-1", true),
            ("prod-?-1", "prod-eu-1", false),
            ("prod-eu-1", "prod-eu-1", true),
            ("prod-eu-1", "prod-eu-10", false),
            ("*", "", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(matches(pattern, name), expected, "{pattern} vs {name}");
        }
        assert!(is_glob("prod-*"));
        assert!(!is_glob("prod-eu-1"));
    }
}

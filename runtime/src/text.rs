//! Small text helpers shared by error messages.

/// The candidate closest to `word` by edit distance, if it is close enough
/// to be a likely typo (at most a third of the word's length).
pub fn closest<S: AsRef<str>>(word: &str, candidates: impl IntoIterator<Item = S>) -> Option<S> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(word, c.as_ref()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Percent-encodes everything but RFC 3986's unreserved characters, for
/// user names and passwords inside connection URLs.
#[cfg(any(feature = "redis", feature = "agent-memory"))]
pub(crate) fn percent_encode(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

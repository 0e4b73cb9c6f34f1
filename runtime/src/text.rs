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

//! The rules nodekit checks in two places, written once: its macros check
//! them at compile time, the runtime at run time, so an author and a
//! workflow get the same answer for the same input.

/// Longest `$fromAI` key n8n accepts.
pub const MAX_FROM_AI_KEY_LEN: usize = 64;

/// n8n's `$fromAI` key rule: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_from_ai_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_FROM_AI_KEY_LEN
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The candidate closest to `word`, if close enough to be a likely typo: at
/// most a third of the word's length in edits (at least one), where swapped
/// neighbours count as one edit (`tabel` → `table`). Ties go to the first
/// candidate.
pub fn closest<S: AsRef<str>>(word: &str, candidates: impl IntoIterator<Item = S>) -> Option<S> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(word, c.as_ref()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_n8n() {
        assert!(is_from_ai_key("table_name-2"));
        assert!(is_from_ai_key(&"k".repeat(64)));
        assert!(!is_from_ai_key(&"k".repeat(65)));
        assert!(!is_from_ai_key(""));
        assert!(!is_from_ai_key("a b"));
        assert!(!is_from_ai_key("ключ"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            closest("defualt", ["default", "display_name"]),
            Some("default")
        );
        assert_eq!(closest("zzz", ["default"]), None);
        assert_eq!(closest("tabel", ["table", "rows"]), Some("table"));
        assert_eq!(
            closest("tabel", vec!["table".to_owned()]),
            Some("table".to_owned())
        );
    }
}

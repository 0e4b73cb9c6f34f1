//! Small text helpers.

/// Percent-encodes everything but RFC 3986's unreserved characters, for
/// user names and passwords inside connection URLs.
#[cfg(feature = "_agent-memory")]
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

/// Whether an `Authorization` header's value is `Bearer <token>` (the
/// scheme in any case, as HTTP allows).
#[cfg(any(feature = "mcp", feature = "serve"))]
pub(crate) fn bearer_matches(header: Option<&[u8]>, token: &[u8]) -> bool {
    let Some((scheme, given)) = header.unwrap_or_default().split_at_checked(7) else {
        return false;
    };
    scheme.eq_ignore_ascii_case(b"Bearer ") && same_secret(given, token)
}

/// Whether a secret someone sent equals the expected one, compared in a
/// time that does not depend on where they differ.
#[cfg(any(feature = "mcp", feature = "serve"))]
pub(crate) fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

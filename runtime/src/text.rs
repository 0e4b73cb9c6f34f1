//! Small text helpers.

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

//! Small text helpers.

/// Whether an `Authorization` header's value is `Bearer <token>` (the
/// scheme in any case, as HTTP allows).
#[cfg(any(feature = "mcp-server", feature = "serve"))]
pub(crate) fn bearer_matches(header: Option<&[u8]>, token: &[u8]) -> bool {
    let Some((scheme, given)) = header.unwrap_or_default().split_at_checked(7) else {
        return false;
    };
    scheme.eq_ignore_ascii_case(b"Bearer ") && same_secret(given, token)
}

/// Whether a secret someone sent equals the expected one, compared in a
/// time that does not depend on where they differ.
#[cfg(any(feature = "mcp-server", feature = "serve"))]
pub(crate) fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

//! PostgreSQL and SQLite as nodekit's stores reach them: one configuration
//! and pool policy per database ([`postgres`], [`sqlite`]), and the
//! drivers' errors as [`StoreError`](nodekit_core::error::StoreError)s of
//! the kind they are ([`store_error`]). Chat histories, agent memory,
//! vector stores and the SQL tools all open their databases here. Users
//! reach it through `nodekit` (features `postgres`, `sqlite`), as
//! `nodekit::postgres`.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod error;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use error::store_error;

/// Whether `name` can be a SQL identifier nodekit quotes itself: 1 to
/// `max` ASCII letters, digits and `_`, not starting with a digit.
pub fn is_plain_identifier(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `s` with everything but RFC 3986's unreserved characters
/// percent-encoded: a user name or password inside a connection URL.
pub fn encode_userinfo(s: &str) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    const USERINFO: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    utf8_percent_encode(s, USERINFO).to_string()
}

//! Limits set on every SQLite connection of a SQL tool, through the two
//! SQLite calls sqlx does not wrap.
//!
//! - `SQLITE_LIMIT_LENGTH`: no string, blob or row over [`MAX_VALUE_BYTES`].
//!   Without it, allowed functions can build values of up to 1 GB per row
//!   (`x || x || ...`), and one `LIKE` over such a value runs inside a
//!   single VM step, past the progress handler that enforces the timeout.
//! - `SQLITE_LIMIT_LIKE_PATTERN_LENGTH`: `LIKE` patterns of at most
//!   [`MAX_LIKE_PATTERN`] bytes, which bounds the cost of one `LIKE` step.
//! - `SQLITE_DBCONFIG_DQS_DML` / `_DDL` off: a double-quoted name that is
//!   not a column is an error, not a string literal, so `"nosuchcol" =
//!   "nosuchcol"` cannot pass for a condition.

use sqlx::sqlite::LockedSqliteHandle;

/// Largest string, blob or row a tool's SQLite connection will build or read.
pub const MAX_VALUE_BYTES: i32 = 4 << 20;
/// Longest `LIKE` pattern on SQLite.
pub const MAX_LIKE_PATTERN: i32 = 100;

/// Applies the limits to a freshly opened connection.
#[allow(unsafe_code)]
pub fn apply(handle: &mut LockedSqliteHandle<'_>) {
    use libsqlite3_sys as ffi;
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: `db` is a valid, open connection, and holding the locked
    // handle keeps sqlx's worker thread from using it concurrently.
    // `sqlite3_limit` takes plain integers; `sqlite3_db_config` with the
    // DQS options takes an int and an int pointer, which may be null.
    unsafe {
        ffi::sqlite3_limit(db, ffi::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES);
        ffi::sqlite3_limit(db, ffi::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN);
        ffi::sqlite3_db_config(
            db,
            ffi::SQLITE_DBCONFIG_DQS_DML,
            0,
            std::ptr::null_mut::<std::ffi::c_int>(),
        );
        ffi::sqlite3_db_config(
            db,
            ffi::SQLITE_DBCONFIG_DQS_DDL,
            0,
            std::ptr::null_mut::<std::ffi::c_int>(),
        );
    }
}

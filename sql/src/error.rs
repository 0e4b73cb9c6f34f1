//! Database errors turned into the tool's error response: one category the
//! model can act on, a short message safe to show it, a suggestion when we
//! know one, and the database's code.
//!
//! # What the message may contain
//!
//! Only the database's *primary* message (PostgreSQL `message()`, SQLite's
//! `sqlite3_errmsg`), passed through [`mask`] and cut to about 300
//! characters. PostgreSQL's `detail` is never used: it carries row values
//! (`Key (email)=(a@b.c) already exists`, `Failing row contains (...)`).
//! Its `hint` is used as the suggestion when we have no better one; hints
//! are written by the server and name objects, not values (data-exception
//! hints are dropped: they are about server settings such as `datestyle`). Primary messages
//! of data exceptions (SQLSTATE class 22) quote the offending value
//! (`invalid input syntax for type integer: "abc"`), which may be a bound
//! value the model never saw: the quoted part is replaced by `"***"`.
//! Authentication failures get a fixed message, since PostgreSQL's names the
//! user, database and client address. Statement text is never included;
//! a syntax error's message may quote the token it stopped at, as both
//! databases print it.
//!
//! # Mapping
//!
//! Every error gets one of the eight categories of [`ErrorType`]; a
//! `reason` ([`Reason`]) says more where the category is broad.
//!
//! | Source | Code | `ErrorType` (`reason`) | Suggestion |
//! |---|---|---|---|
//! | PostgreSQL | `08xxx` connection exception | `connection_error` | check the server, retry |
//! | PostgreSQL | `3D000` database does not exist | `connection_error` | check the credentials |
//! | PostgreSQL | `53300` too many connections | `connection_error` | retry later |
//! | PostgreSQL | `57P01`-`57P04` server shutting down / starting | `connection_error` | retry later |
//! | PostgreSQL | `28xxx` (`28000`, `28P01`) | `authentication_error` | credentials are not the model's to fix |
//! | PostgreSQL | `42P01` undefined table | `invalid_table` | check the name (callers add the allowed tables) |
//! | PostgreSQL | `3F000` schema does not exist | `invalid_table` | as above |
//! | PostgreSQL | `42703` undefined column | `invalid_column` | server hint or check the names |
//! | PostgreSQL | `42501` insufficient privilege | `permission_denied` | |
//! | PostgreSQL | `25006` read-only transaction | `permission_denied` | writing is not allowed here |
//! | PostgreSQL | other `42xxx` (`42601` syntax, `42883` undefined function, ...) | `syntax_error` | server hint |
//! | PostgreSQL | `23xxx` integrity constraint, `44000` check option | `constraint_violation` | names the constraint (and the column for not-null), never values |
//! | PostgreSQL | `22xxx` data exception (`22P02`, `22003`, `22007`, `22001`, `22012` ...) | `constraint_violation` (`bad_value`) | check format, type and size |
//! | PostgreSQL | `57014` query canceled (statement timeout) | `timeout` | narrow the request |
//! | PostgreSQL | `55P03` lock not available | `timeout` | retry later |
//! | PostgreSQL | `40001` serialization, `40P01` deadlock | `timeout` (`conflict`) | retry |
//! | PostgreSQL | `54xxx` program limits (statement too complex, too many columns) | `syntax_error` (`too_complex`) | simplify the request |
//! | PostgreSQL | other `53xxx` insufficient resources (disk, memory) | `connection_error` (`resources`) | simplify the request |
//! | PostgreSQL | `25xxx`, `55xxx`, other `57xxx`, `58xxx`, `XXxxx` (transaction state, object state, operator intervention, system and internal errors) | `connection_error` (`database`) | server hint |
//! | PostgreSQL | `P0xxx` raised by a trigger or function | `constraint_violation` (`database`) | server hint |
//! | PostgreSQL | anything else (`0A000` not supported, `21000` cardinality, ...) | `syntax_error` (`database`) | server hint |
//! | SQLite | `19` CONSTRAINT and its extended codes (`275` check, `531`, `787` foreign key, `1043`, `1299` not null, `1555` primary key, `1811` trigger, `2067` unique, `2323`, `2579`, `2835`) | `constraint_violation` | per code |
//! | SQLite | `3091` CONSTRAINT_DATATYPE (STRICT table) | `constraint_violation` (`wrong_type`) | the value's type does not fit the column |
//! | SQLite | `9` INTERRUPT (the tool's deadline) | `timeout` | narrow the request |
//! | SQLite | `5` BUSY, `6` LOCKED and extended | `timeout` | retry |
//! | SQLite | `8` READONLY and extended, `23` AUTH, `3` PERM | `permission_denied` | |
//! | SQLite | `14` CANTOPEN, `26` NOTADB | `connection_error` | check the file path |
//! | SQLite | `1` ERROR, message `no such table` | `invalid_table` | |
//! | SQLite | `1` ERROR, message `no such column` / `has no column named` | `invalid_column` | |
//! | SQLite | `1` ERROR, message `syntax error` / `near "..."` / `incomplete input` / `unrecognized token` / `no such function` | `syntax_error` | |
//! | SQLite | `18` TOOBIG, `25` RANGE | `constraint_violation` (`bad_value`) | |
//! | SQLite | `20` MISMATCH | `constraint_violation` (`wrong_type`) | |
//! | SQLite | `1` ERROR, any other message | `syntax_error` (`database`) | |
//! | SQLite | anything else (I/O, full disk, corrupt file, ...) | `connection_error` (`database`) | |
//! | sqlx | `Io`, `Tls`, `PoolTimedOut`, `PoolClosed`, `WorkerCrashed`, `Configuration` | `connection_error` | |
//! | sqlx | `Encode` | `constraint_violation` (`wrong_type`) | |
//! | sqlx | `InvalidArgument` | `syntax_error` (`malformed`) | |
//! | sqlx | `ColumnDecode`, `Decode`, `TypeNotFound`, `ColumnNotFound`, `ColumnIndexOutOfBounds` | `invalid_column` (`unreadable`) | |
//! | sqlx | `Protocol`, anything else | `connection_error` (`database`) | |
//!
//! `sql_state` is the SQLSTATE on PostgreSQL and the extended result code
//! (decimal, as sqlx's `DatabaseError::code()` gives it) on SQLite.
//! `53300` and the `57P0x` codes are connection problems although their
//! classes are "resources" and "operator intervention"; `3091` is a type
//! error although SQLite files it under CONSTRAINT.

use std::sync::LazyLock;

use regex::Regex;
use sqlx::error::DatabaseError;
#[cfg(feature = "postgres")]
use sqlx::postgres::PgDatabaseError;
#[cfg(feature = "sqlite")]
use sqlx::sqlite::SqliteError;

use super::response::{ErrorType, Reason, ToolError};

/// Longest message or suggestion shown, in characters.
const MAX_CHARS: usize = 300;

/// The tool's error response for a database error (see the module docs for
/// the mapping and what the text may contain).
pub fn classify(err: &sqlx::Error) -> ToolError {
    use ErrorType::*;
    use sqlx::Error as E;
    let (error_type, reason, message) = match err {
        E::Database(db) => return database(db.as_ref()),
        E::Io(e) => (
            ConnectionError,
            None,
            format!("could not reach the database: {e}"),
        ),
        E::Tls(e) => (
            ConnectionError,
            None,
            format!("could not set up TLS with the database: {e}"),
        ),
        E::PoolTimedOut => (
            ConnectionError,
            None,
            "timed out waiting for a database connection".into(),
        ),
        E::PoolClosed | E::WorkerCrashed => (
            ConnectionError,
            None,
            "the database connection is closed".into(),
        ),
        E::Configuration(e) => (
            ConnectionError,
            None,
            format!("invalid database connection settings: {e}"),
        ),
        // The encoder's message may quote the value being bound.
        E::Encode(_) => (
            ConstraintViolation,
            Some(Reason::WrongType),
            "a value could not be sent to the database (wrong type or out of range)".into(),
        ),
        E::InvalidArgument(e) => (SyntaxError, Some(Reason::Malformed), e.clone()),
        E::ColumnDecode { index, source } => {
            return unreadable(clean(
                &format!("could not read column {index}: {source}"),
                false,
            ));
        }
        e @ (E::Decode(_)
        | E::TypeNotFound { .. }
        | E::ColumnNotFound(_)
        | E::ColumnIndexOutOfBounds { .. }) => return unreadable(clean(&e.to_string(), false)),
        E::Protocol(e) => (
            ConnectionError,
            Some(Reason::Database),
            format!("unexpected reply from the database: {e}"),
        ),
        other => (ConnectionError, Some(Reason::Database), other.to_string()),
    };
    let suggestion = match error_type {
        ConnectionError => Some("Check that the database is running and reachable, then retry."),
        _ => None,
    };
    let mut out = ToolError::new(error_type, clean(&message, false));
    out.reason = reason;
    out.suggestion = suggestion.map(String::from);
    out
}

/// A result column the tool cannot turn into JSON.
pub(super) fn unreadable(message: String) -> ToolError {
    ToolError::new(ErrorType::InvalidColumn, message)
        .because(Reason::Unreadable)
        .suggest("Cast the column to text in the query, or leave it out.")
}

fn database(db: &dyn DatabaseError) -> ToolError {
    #[cfg(feature = "postgres")]
    if let Some(pg) = db.try_downcast_ref::<PgDatabaseError>() {
        return postgres(pg);
    }
    #[cfg(feature = "sqlite")]
    if let Some(lite) = db.try_downcast_ref::<SqliteError>() {
        return sqlite(lite);
    }
    let mut out = ToolError::new(ErrorType::ConnectionError, clean(db.message(), false))
        .because(Reason::Database);
    out.sql_state = db.code().map(|c| c.into_owned());
    out
}

/// The category and reason of a PostgreSQL SQLSTATE (the PostgreSQL rows
/// of the table).
#[cfg(feature = "postgres")]
fn pg_category(code: &str) -> (ErrorType, Option<Reason>) {
    use ErrorType::*;
    let category = match code {
        "42P01" | "3F000" => InvalidTable,
        "42703" => InvalidColumn,
        "42501" | "25006" => PermissionDenied,
        "57014" | "55P03" => Timeout,
        "3D000" | "53300" | "57P01" | "57P02" | "57P03" | "57P04" => ConnectionError,
        "44000" => ConstraintViolation,
        "40001" | "40P01" => return (Timeout, Some(Reason::Conflict)),
        _ => match code.get(..2) {
            Some("08") => ConnectionError,
            Some("28") => AuthenticationError,
            Some("42") => SyntaxError,
            Some("23") => ConstraintViolation,
            Some("22") => return (ConstraintViolation, Some(Reason::BadValue)),
            Some("54") => return (SyntaxError, Some(Reason::TooComplex)),
            Some("53") => return (ConnectionError, Some(Reason::Resources)),
            Some("25" | "55" | "57" | "58" | "XX") => {
                return (ConnectionError, Some(Reason::Database));
            }
            Some("P0") => return (ConstraintViolation, Some(Reason::Database)),
            _ => return (SyntaxError, Some(Reason::Database)),
        },
    };
    (category, None)
}

#[cfg(feature = "postgres")]
fn postgres(e: &PgDatabaseError) -> ToolError {
    let code = e.code();
    let (error_type, reason) = pg_category(code);
    let data_exception = code.starts_with("22");
    let message = match code {
        // PostgreSQL's text names the user, database and client address.
        "28P01" => "password authentication failed".to_owned(),
        _ if error_type == ErrorType::AuthenticationError => {
            "the database refused this login (user, database, client address or SSL mode)"
                .to_owned()
        }
        _ => clean(e.message(), data_exception),
    };
    let hint = e.hint().map(|h| clean(h, false));
    let quoted = |name: Option<&str>| name.map(|n| format!(" \"{}\"", clean(n, false)));
    let constraint = quoted(e.constraint()).unwrap_or_default();
    let suggestion: Option<String> = match code {
        "23505" => Some(format!(
            "Another row already has this value (unique constraint{constraint}); \
             use a different value or change the existing row."
        )),
        "23503" => Some(format!(
            "The value must match a row in the referenced table, and a row still \
             referenced elsewhere cannot be removed (foreign key{constraint})."
        )),
        "23502" => Some(match quoted(e.column()) {
            Some(column) => format!("Provide a value for column{column}; it cannot be null."),
            None => "Provide a value for every column that cannot be null.".into(),
        }),
        "23514" => Some(format!(
            "The value breaks check constraint{constraint}; change it to satisfy the rule."
        )),
        "23P01" => Some(format!(
            "The row conflicts with an existing one (exclusion constraint{constraint})."
        )),
        "25006" => Some("This request runs read-only: writing is not allowed here.".into()),
        "40001" | "40P01" => {
            Some("The transaction conflicted with a concurrent one; retry the request.".into())
        }
        "55P03" => Some("Another transaction holds a lock on the data; retry later.".into()),
        "57014" => Some(
            "The statement ran past the time limit; narrow the filter or lower the limit.".into(),
        ),
        _ => match error_type {
            ErrorType::AuthenticationError => Some(
                "The credentials configured for this tool were refused; changing the \
                 request cannot fix this."
                    .into(),
            ),
            _ if matches!(reason, Some(Reason::Resources | Reason::TooComplex)) => hint.or(Some(
                "The request needs more resources than allowed; simplify it or return fewer rows."
                    .into(),
            )),
            ErrorType::ConnectionError if reason.is_none() => {
                Some("Check that the database is running and reachable, then retry.".into())
            }
            // Data-exception hints are about server settings (`datestyle`)
            // the model cannot change.
            _ if code == "22012" => {
                Some("Guard the divisor, for example with NULLIF(divisor, 0).".into())
            }
            _ if data_exception => {
                Some("Check the values: their format, type and size must fit the columns.".into())
            }
            ErrorType::ConstraintViolation if reason.is_none() => {
                Some(format!("The change breaks constraint{constraint}."))
            }
            ErrorType::SyntaxError => hint.or(Some("Check the statement's syntax.".into())),
            ErrorType::InvalidColumn => hint.or(Some(
                "Check the column names against the table's columns.".into(),
            )),
            ErrorType::InvalidTable => hint.or(Some("Check the table name.".into())),
            _ => hint,
        },
    };
    ToolError {
        error_type,
        reason,
        message,
        suggestion,
        sql_state: Some(code.to_owned()),
    }
}

/// The category and reason of an SQLite extended result code with its
/// message (the SQLite rows of the table).
#[cfg(feature = "sqlite")]
fn sqlite_category(code: i32, message: &str) -> (ErrorType, Option<Reason>) {
    use ErrorType::*;
    const DATATYPE: i32 = 3091; // SQLITE_CONSTRAINT_DATATYPE
    if code == DATATYPE {
        return (ConstraintViolation, Some(Reason::WrongType));
    }
    let category = match code & 0xFF {
        19 => ConstraintViolation,
        9 | 5 | 6 => Timeout,
        8 | 23 | 3 => PermissionDenied,
        14 | 26 => ConnectionError,
        18 | 25 => return (ConstraintViolation, Some(Reason::BadValue)),
        20 => return (ConstraintViolation, Some(Reason::WrongType)),
        1 => {
            let m = message.to_ascii_lowercase();
            if m.contains("no such table") {
                InvalidTable
            } else if m.contains("no such column") || m.contains("has no column named") {
                InvalidColumn
            } else if m.contains("syntax error")
                || m.starts_with("near \"")
                || m.contains("incomplete input")
                || m.contains("unrecognized token")
                || m.contains("no such function")
            {
                SyntaxError
            } else {
                return (SyntaxError, Some(Reason::Database));
            }
        }
        _ => return (ConnectionError, Some(Reason::Database)),
    };
    (category, None)
}

#[cfg(feature = "sqlite")]
fn sqlite(e: &SqliteError) -> ToolError {
    let code_text = e.code().map(|c| c.into_owned()).unwrap_or_default();
    let code: i32 = code_text.parse().unwrap_or(1);
    let (error_type, reason) = sqlite_category(code, e.message());
    let suggestion = match code {
        2067 | 1555 | 2579 => Some(
            "Another row already has this value; use a different value or change the existing row.",
        ),
        787 => Some(
            "The value must match a row in the referenced table, and a row still referenced \
             elsewhere cannot be removed.",
        ),
        1299 => Some("Provide a value for the column named in the message; it cannot be null."),
        275 => Some("The value breaks the check constraint shown; change it to satisfy the rule."),
        3091 => Some("Give the column a value of its declared type."),
        _ => match (code & 0xFF, error_type) {
            (9, _) => {
                Some("The statement ran past the time limit; narrow the filter or lower the limit.")
            }
            (5 | 6, _) => Some("The database is busy with another writer; retry the request."),
            (8, _) => Some("This request runs read-only: writing is not allowed here."),
            (_, ErrorType::ConnectionError) => {
                Some("Check that the SQLite file path in the credentials points at a database.")
            }
            (_, ErrorType::InvalidColumn) => {
                Some("Check the column names against the table's columns.")
            }
            (_, ErrorType::InvalidTable) => Some("Check the table name."),
            (_, ErrorType::SyntaxError) => Some("Check the statement's syntax."),
            _ => None,
        },
    };
    ToolError {
        error_type,
        reason,
        message: clean(e.message(), false),
        suggestion: suggestion.map(String::from),
        sql_state: Some(code_text),
    }
}

/// Masked, optionally with quoted values redacted, and cut to length.
fn clean(text: &str, redact_quoted: bool) -> String {
    static QUOTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"(?s)".*""#).unwrap());
    let masked = mask(text);
    let text = if redact_quoted {
        // Greedy, first quote to last: a value may itself contain quotes.
        QUOTED.replace_all(&masked, "\"***\"").into_owned()
    } else {
        masked
    };
    truncate(text.trim(), MAX_CHARS)
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) => {
            let end = text.char_indices().nth(max - 1).map_or(0, |(i, _)| i);
            format!("{}…", &text[..end])
        }
    }
}

/// Hides credentials in any text: the user-info part of URLs
/// (`postgres://user:pass@host/db` → `postgres://***@host/db`), the values of
/// password-like keys (`password=...`, `PGPASSWORD=...`, `"password": "..."`,
/// `sslpassword`, `secret`, `api_key`, `access_token`, ...; quoted or not)
/// and the literal after SQL's `PASSWORD` keyword.
///
/// A URL's user info is taken to end at the *last* `@` before whitespace or
/// a quote, so a raw `@` or `/` in a password is still hidden; an `@` later
/// in the URL (in a query string) hides more than needed, never less.
pub fn mask(text: &str) -> String {
    static URL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s'"<>`]*@"#).unwrap());
    static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?i)\b([a-z0-9_\-]*(?:password|passwd|passphrase|pwd|secret|api[_\-]?key|(?:access|auth|api|refresh|bearer|session)[_\-]?token)|pass)(\s*["']?\s*[=:]\s*)('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&;,'"]+)"#,
        )
        .unwrap()
    });
    static SQL_PASSWORD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(password\s+)'(?:[^']|'')*'?").unwrap());
    let text = URL.replace_all(text, "${1}***@");
    let text = KEY_VALUE.replace_all(&text, "${1}${2}***");
    SQL_PASSWORD.replace_all(&text, "${1}'***'").into_owned()
}

#[cfg(all(test, feature = "sqlite", feature = "postgres"))]
mod tests;

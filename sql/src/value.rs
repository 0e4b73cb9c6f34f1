//! Result rows as JSON objects, typed the way a model should read them:
//! numbers as numbers, exact decimals as strings, timestamps in ISO 8601,
//! bytes in base64, `json`/`jsonb` as JSON.
//!
//! # Keys
//!
//! A row becomes an object keyed by column name, in column order. A result
//! may repeat a name (`SELECT a.id, b.id ...`); later duplicates get a
//! suffix `_2`, `_3`, ... (`id`, `id_2`), skipping any suffix that is the
//! real name of another column in the result, so no value is lost and every
//! real column keeps its own name.
//!
//! # PostgreSQL
//!
//! [`pg_row_keyed`] reads the raw bytes of each value and decodes them itself, so
//! no value goes through a lossy Rust type. Rows should come from the
//! extended protocol (`sqlx::query(..)`, `query_with`, `fetch*` on a
//! `Query`), which sqlx always runs with *binary* results; that is the exact
//! path. Rows from the simple protocol (`sqlx::raw_sql`, or `&str` executed
//! directly) arrive as PostgreSQL's *text* output and are typed best-effort
//! (see the last column below).
//!
//! | PostgreSQL type | JSON (binary results) | text results |
//! |---|---|---|
//! | `NULL` | `null` | same |
//! | `int2`, `int4`, `int8`, `oid`, `xid`, `cid`, `xid8` | number | same |
//! | `regclass`, `regtype`, other `reg*` | number (the OID) | the name |
//! | `float4`, `float8` | number; `"NaN"`, `"Infinity"`, `"-Infinity"` | same |
//! | `numeric` | string, exactly as PostgreSQL prints it (`"12.50"`, `"NaN"`) | same |
//! | `money` | string `"-1234.56"` (minor units / 100; no symbol) | PostgreSQL's text (`"$1,234.56"`) |
//! | `bool` | `true` / `false` | same |
//! | `text`, `varchar`, `bpchar` (padded), `name`, `"char"`, `xml`, enums, `citext` | string | same |
//! | `bytea` | base64 string (standard alphabet, padded) | same (hex output only) |
//! | `json`, `jsonb` | the JSON value; integers beyond 64 bits become floats, and a document with a number beyond `f64` is returned as its text | same |
//! | `uuid` | `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"` | same |
//! | `date` | `"2024-03-05"` | same |
//! | `time` | `"13:45:06"`, `"13:45:06.5"` (fraction trimmed as PostgreSQL does) | same |
//! | `timetz` | `"13:45:06+02:00"` | PostgreSQL's text (`"13:45:06+02"`) |
//! | `timestamp` | `"2024-03-05T13:45:06.123456"` | same |
//! | `timestamptz` | `"2024-03-05T11:45:06.123456Z"` (always UTC) | same |
//! | infinite `date`/`timestamp[tz]` | `"infinity"` / `"-infinity"` | same |
//! | `interval` | ISO 8601 duration as PostgreSQL's `iso_8601` style: `"P1Y2M3DT4H5M6.5S"`, `"PT0S"`, `"P-1D"` | PostgreSQL's text (`"1 year 2 mons"`) |
//! | `inet`, `cidr` | `"192.168.0.1"`, `"10.0.0.0/8"` | same |
//! | `macaddr`, `macaddr8` | `"08:00:2b:01:02:03"` | same |
//! | `bit`, `varbit` | `"10110"` | same |
//! | arrays of any type here | JSON arrays; multi-dimensional arrays nest; lower bounds other than 1 are dropped | same, except arrays of a non-built-in type the connection has not looked up yet: PostgreSQL's text |
//! | ranges | PostgreSQL-style string with the bounds typed as above: `"[1,10)"`, `"empty"` | PostgreSQL's text |
//! | composite types | object by field name; anonymous `record`s: array | PostgreSQL's text |
//! | domains | as their base type | same |
//! | `void` | `null` | same |
//! | anything else | the value as a string when its bytes are UTF-8 text without control characters (types whose binary form is their text: `citext`, most extension types); otherwise `"<unsupported type NAME>"` | PostgreSQL's text |
//!
//! Dates use the proleptic Gregorian calendar with astronomical years, as
//! ISO 8601 does: 1 BC is `0000`, 2 BC is `-0001`, and years after 9999 carry
//! a `+` sign. A value that is malformed for its declared type (a protocol
//! error, not a user error) fails the row with an `invalid_column` error (reason `unreadable`); an unknown
//! type never does.
//!
//! # SQLite
//!
//! [`sqlite_row_keyed`] follows each value's storage class, since SQLite types
//! values, not columns: `NULL` → `null`, `INTEGER` → number, `REAL` → number
//! (`±Infinity` as strings; SQLite stores no NaN), `TEXT` → string (invalid
//! UTF-8 replaced by U+FFFD), `BLOB` → base64 string. An integer 0 or 1 in a
//! column declared `BOOLEAN`/`BOOL` becomes `false`/`true`. JSON stored in
//! `TEXT` stays a string: SQLite has no JSON type, sqlx does not expose a
//! `JSON` declaration, and guessing from the content would turn a text
//! column holding `"42"` into a number.

#[cfg(feature = "postgres")]
use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Number, Value};
#[cfg(feature = "postgres")]
use sqlx::postgres::{PgRow, PgTypeInfo, PgTypeKind, PgValueFormat, PgValueRef, types::Oid};
#[cfg(feature = "sqlite")]
use sqlx::sqlite::SqliteRow;
use sqlx::{Column as _, Row, TypeInfo as _, ValueRef as _};

use super::error::unreadable;
use super::response::ToolError;

// PostgreSQL's binary and text formats.
#[cfg(feature = "postgres")]
mod binary;
#[cfg(feature = "postgres")]
mod temporal;
#[cfg(feature = "postgres")]
mod text;

#[cfg(feature = "postgres")]
use {binary::*, temporal::*, text::*};

/// Nesting limit for arrays, records and ranges inside each other: deeper
/// than any real value, low enough that a hostile server cannot exhaust the
/// stack.
#[cfg(feature = "postgres")]
const MAX_DEPTH: u32 = 32;

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
#[cfg(feature = "postgres")]
const PG_EPOCH_DAYS: i64 = 10_957;
#[cfg(feature = "postgres")]
const USECS_PER_DAY: i64 = 86_400_000_000;

/// The keys of a result's rows (see "Keys" above). Every row of one result
/// has the same columns, so a caller reading many rows computes them once.
pub fn row_keys<R: Row>(row: &R) -> Vec<String> {
    unique_keys(row.columns().iter().map(|c| c.name()))
}

/// One PostgreSQL row as a JSON object, with keys from [`row_keys`] of the
/// same result (see the module docs for the mapping and for duplicate column
/// names).
///
/// Fails only when the server sends bytes that do not fit the column's
/// declared type; unknown types become strings instead.
#[cfg(feature = "postgres")]
pub fn pg_row_keyed(row: &PgRow, keys: &[String]) -> Result<Map<String, Value>, ToolError> {
    let columns = row.columns();
    let mut out = Map::with_capacity(columns.len());
    for (index, (column, key)) in columns.iter().zip(keys.iter().cloned()).enumerate() {
        let raw = row
            .try_get_raw(index)
            .map_err(|e| read_error(column.name(), &e))?;
        let value = pg_value(&raw).map_err(|why| {
            unreadable(format!(
                "could not read column \"{}\" of type {}: {why}",
                column.name(),
                type_name(column.type_info())
            ))
        })?;
        out.insert(key, value);
    }
    Ok(out)
}

/// One SQLite row as a JSON object, with keys from [`row_keys`] of the same
/// result (see the module docs for the mapping and for duplicate column
/// names).
#[cfg(feature = "sqlite")]
pub fn sqlite_row_keyed(row: &SqliteRow, keys: &[String]) -> Result<Map<String, Value>, ToolError> {
    use sqlx::{Decode, Sqlite};
    let columns = row.columns();
    let mut out = Map::with_capacity(columns.len());
    for (index, (column, key)) in columns.iter().zip(keys.iter().cloned()).enumerate() {
        let name = column.name();
        let raw = row.try_get_raw(index).map_err(|e| read_error(name, &e))?;
        let failed = |e: sqlx::error::BoxDynError| {
            unreadable(format!("could not read column \"{name}\": {e}"))
        };
        // The value's own type is its storage class once it is not NULL.
        // Each value is decoded from the one reference read above.
        let value = if raw.is_null() {
            Value::Null
        } else {
            match raw.type_info().name() {
                "INTEGER" => {
                    let n = <i64 as Decode<Sqlite>>::decode(raw).map_err(failed)?;
                    if column.type_info().name() == "BOOLEAN" && (n == 0 || n == 1) {
                        Value::Bool(n == 1)
                    } else {
                        Value::from(n)
                    }
                }
                "REAL" => float(<f64 as Decode<Sqlite>>::decode(raw).map_err(failed)?),
                // Read as bytes: SQLite does not enforce UTF-8 in TEXT.
                "TEXT" => Value::String(
                    String::from_utf8_lossy(
                        <&[u8] as Decode<Sqlite>>::decode(raw).map_err(failed)?,
                    )
                    .into_owned(),
                ),
                _ => Value::String(
                    BASE64.encode(<&[u8] as Decode<Sqlite>>::decode(raw).map_err(failed)?),
                ),
            }
        };
        out.insert(key, value);
    }
    Ok(out)
}

fn read_error(column: &str, err: &sqlx::Error) -> ToolError {
    unreadable(format!("could not read column \"{column}\": {err}"))
}

/// A number, or PostgreSQL's spelling of a non-finite float (JSON has none).
fn float(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String("NaN".into()),
        None if f > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}

/// Object keys for the column names: the first use of a name keeps it, later
/// ones get `_2`, `_3`, ... skipping suffixed names that are real columns.
fn unique_keys<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    let real: std::collections::HashSet<&str> = names.clone().collect();
    let mut used = std::collections::HashSet::new();
    let mut keys = Vec::new();
    for name in names {
        let mut key = name.to_owned();
        let mut n = 2;
        // A generated name must not take the name of a real column.
        while used.contains(&key) || (key != name && real.contains(key.as_str())) {
            key = format!("{name}_{n}");
            n += 1;
        }
        used.insert(key.clone());
        keys.push(key);
    }
    keys
}

/// The type's name for messages; sqlx calls types it has not looked up `?`.
#[cfg(feature = "postgres")]
fn type_name(ty: &PgTypeInfo) -> String {
    match (ty.name(), ty.oid()) {
        ("?", Some(oid)) => format!("oid {}", oid.0),
        (name, _) => name.to_ascii_lowercase(),
    }
}

/// The type's kind, or `None` when sqlx has only the OID: for such a type
/// (`PgType::DeclareWithOid`, named `?`) `PgTypeInfo::kind()` panics. It
/// happens for non-built-in types in simple-protocol results.
#[cfg(feature = "postgres")]
fn kind_of(ty: &PgTypeInfo) -> Option<&PgTypeKind> {
    if ty.name() == "?" {
        None
    } else {
        Some(ty.kind())
    }
}

#[cfg(feature = "postgres")]
fn pg_value(raw: &PgValueRef<'_>) -> Result<Value, String> {
    if raw.is_null() {
        return Ok(Value::Null);
    }
    let bytes = raw.as_bytes().map_err(|e| e.to_string())?;
    let ty = raw.type_info();
    match raw.format() {
        PgValueFormat::Binary => binary(&ty, bytes, 0),
        PgValueFormat::Text => Ok(text(&ty, &String::from_utf8_lossy(bytes), 0)),
    }
}

#[cfg(all(test, feature = "sqlite", feature = "postgres"))]
mod tests;

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
//! error, not a user error) fails the row with a `query_error`; an unknown
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

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Number, Value};
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgRow, PgTypeInfo, PgTypeKind, PgValueFormat, PgValueRef};
use sqlx::sqlite::SqliteRow;
use sqlx::{Column as _, Row, TypeInfo as _, ValueRef as _};

use super::response::{ErrorType, ToolError};

/// Nesting limit for arrays, records and ranges inside each other: deeper
/// than any real value, low enough that a hostile server cannot exhaust the
/// stack.
const MAX_DEPTH: u32 = 32;

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const PG_EPOCH_DAYS: i64 = 10_957;
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
pub fn pg_row_keyed(row: &PgRow, keys: &[String]) -> Result<Map<String, Value>, ToolError> {
    let columns = row.columns();
    let mut out = Map::with_capacity(columns.len());
    for (index, (column, key)) in columns.iter().zip(keys.iter().cloned()).enumerate() {
        let raw = row
            .try_get_raw(index)
            .map_err(|e| read_error(column.name(), &e))?;
        let value = pg_value(&raw).map_err(|why| {
            ToolError::new(
                ErrorType::QueryError,
                format!(
                    "could not read column \"{}\" of type {}: {why}",
                    column.name(),
                    type_name(column.type_info())
                ),
            )
        })?;
        out.insert(key, value);
    }
    Ok(out)
}

/// One SQLite row as a JSON object, with keys from [`row_keys`] of the same
/// result (see the module docs for the mapping and for duplicate column
/// names).
pub fn sqlite_row_keyed(row: &SqliteRow, keys: &[String]) -> Result<Map<String, Value>, ToolError> {
    use sqlx::{Decode, Sqlite};
    let columns = row.columns();
    let mut out = Map::with_capacity(columns.len());
    for (index, (column, key)) in columns.iter().zip(keys.iter().cloned()).enumerate() {
        let name = column.name();
        let raw = row.try_get_raw(index).map_err(|e| read_error(name, &e))?;
        let failed = |e: sqlx::error::BoxDynError| {
            ToolError::new(
                ErrorType::QueryError,
                format!("could not read column \"{name}\": {e}"),
            )
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
    ToolError::new(
        ErrorType::QueryError,
        format!("could not read column \"{column}\": {err}"),
    )
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
fn type_name(ty: &PgTypeInfo) -> String {
    match (ty.name(), ty.oid()) {
        ("?", Some(oid)) => format!("oid {}", oid.0),
        (name, _) => name.to_ascii_lowercase(),
    }
}

/// The type's kind, or `None` when sqlx has only the OID: for such a type
/// (`PgType::DeclareWithOid`, named `?`) `PgTypeInfo::kind()` panics. It
/// happens for non-built-in types in simple-protocol results.
fn kind_of(ty: &PgTypeInfo) -> Option<&PgTypeKind> {
    if ty.name() == "?" {
        None
    } else {
        Some(ty.kind())
    }
}

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

// ---------------------------------------------------------------------------
// Binary format (extended protocol)
// ---------------------------------------------------------------------------

/// A cursor over a binary value, failing cleanly on short input.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("value is shorter than its type requires".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }
    fn i16(&mut self) -> Result<i16, String> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    /// A length-prefixed field of an array, record or range: `None` for NULL.
    fn field(&mut self) -> Result<Option<&'a [u8]>, String> {
        let len = self.i32()?;
        if len < 0 {
            return Ok(None);
        }
        self.take(len as usize).map(Some)
    }
    /// The whole value must have been read: a longer value is malformed.
    fn end(self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err("value is longer than its type allows".into())
        }
    }
}

/// Reads a fixed-size value that must fill `bytes` exactly.
fn exact<'a, T>(
    bytes: &'a [u8],
    read: impl FnOnce(&mut Reader<'a>) -> Result<T, String>,
) -> Result<T, String> {
    let mut r = Reader(bytes);
    let v = read(&mut r)?;
    r.end()?;
    Ok(v)
}

fn binary(ty: &PgTypeInfo, bytes: &[u8], depth: u32) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("value is nested too deeply".into());
    }
    if let Some(oid) = ty.oid()
        && let Some(v) = builtin_binary(oid.0, bytes, depth)?
    {
        return Ok(v);
    }
    match kind_of(ty) {
        Some(PgTypeKind::Array(elem)) => array_binary(Some(elem), bytes, depth),
        // A domain's values are sent in its base type's format.
        Some(PgTypeKind::Domain(base)) => binary(base, bytes, depth + 1),
        Some(PgTypeKind::Enum(_)) => Ok(Value::String(lossy(bytes))),
        Some(PgTypeKind::Range(sub)) => range_binary(sub, bytes, depth),
        Some(PgTypeKind::Composite(fields)) => record_binary(Some(fields), bytes, depth),
        _ => Ok(fallback(ty, bytes)),
    }
}

/// Built-in scalar types by OID (stable across servers: pg_type.dat);
/// `None` for types decoded by kind or not known at all.
fn builtin_binary(oid: u32, bytes: &[u8], depth: u32) -> Result<Option<Value>, String> {
    let v = match oid {
        16 => Value::Bool(exact(bytes, Reader::u8)? != 0),
        17 => Value::String(BASE64.encode(bytes)),
        18 => Value::String(pg_char(exact(bytes, Reader::u8).unwrap_or(0))),
        // name, text, unknown, xml, bpchar, varchar, refcursor
        19 | 25 | 705 | 142 | 1042 | 1043 | 1790 => Value::String(lossy(bytes)),
        20 => Value::from(exact(bytes, Reader::i64)?),
        21 => Value::from(exact(bytes, Reader::i16)?),
        23 => Value::from(exact(bytes, Reader::i32)?),
        // oid, xid, cid and the reg* aliases of oid
        26 | 28 | 29 | 24 | 2202 | 2203 | 2204 | 2205 | 2206 | 3734 | 3769 | 4089 | 4096 | 4191 => {
            Value::from(exact(bytes, Reader::u32)?)
        }
        5069 => Value::from(exact(bytes, Reader::u64)?),
        // int2vector, oidvector: sent as arrays
        22 | 30 => array_binary(None, bytes, depth)?,
        27 => {
            let (block, offset) = exact(bytes, |r| Ok((r.u32()?, r.u16()?)))?;
            Value::String(format!("({block},{offset})"))
        }
        // Rust prints the shortest text that reads back as the same f32, as
        // PostgreSQL does; widening the f32 itself would print 0.1 as
        // 0.10000000149011612.
        700 => {
            let f = f32::from_bits(exact(bytes, Reader::u32)?);
            if f.is_finite() {
                float(f.to_string().parse::<f64>().unwrap_or(f64::from(f)))
            } else {
                float(f64::from(f))
            }
        }
        701 => float(f64::from_bits(exact(bytes, Reader::u64)?)),
        114 => json_text(&lossy(bytes)),
        3802 => match bytes.split_first() {
            Some((1, rest)) => json_text(&lossy(rest)),
            _ => return Err("unknown jsonb version".into()),
        },
        4072 => match bytes.split_first() {
            Some((1, rest)) => Value::String(lossy(rest)),
            _ => return Err("unknown jsonpath version".into()),
        },
        1700 => Value::String(numeric(bytes)?),
        790 => Value::String(money(exact(bytes, Reader::i64)?)),
        2950 => Value::String(uuid(bytes)?),
        1082 => Value::String(date(exact(bytes, Reader::i32)?)),
        1083 => Value::String(time_of_day(exact(bytes, Reader::i64)?)),
        1266 => {
            let (micros, zone) = exact(bytes, |r| Ok((r.i64()?, r.i32()?)))?;
            let mut s = time_of_day(micros);
            // PostgreSQL stores the zone as seconds *west* of UTC.
            push_offset(&mut s, -i64::from(zone));
            Value::String(s)
        }
        1114 => Value::String(timestamp(exact(bytes, Reader::i64)?, false)),
        1184 => Value::String(timestamp(exact(bytes, Reader::i64)?, true)),
        1186 => {
            let (micros, days, months) = exact(bytes, |r| Ok((r.i64()?, r.i32()?, r.i32()?)))?;
            Value::String(interval(micros, days, months))
        }
        869 | 650 => Value::String(inet(bytes)?),
        829 | 774 => {
            if bytes.len() != 6 && bytes.len() != 8 {
                return Err("a MAC address has 6 or 8 bytes".into());
            }
            let parts: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
            Value::String(parts.join(":"))
        }
        1560 | 1562 => Value::String(bits(bytes)?),
        3220 => {
            let lsn = exact(bytes, Reader::u64)?;
            Value::String(format!("{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF))
        }
        2249 => record_binary(None, bytes, depth)?,
        2278 => Value::Null,
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
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

/// JSON text as a value; text serde_json cannot hold (a number beyond
/// `f64`, which `jsonb` accepts) stays a string rather than failing.
fn json_text(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_owned()))
}

/// A type we do not know: its bytes as text when they look like text
/// (types whose binary form is their text output, such as `citext`), since
/// that is what `psql` would show; binary structures contain NUL or other
/// control bytes and get a placeholder instead of noise.
fn fallback(ty: &PgTypeInfo, bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(s)
            if !s
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) =>
        {
            Value::String(s.to_owned())
        }
        _ => Value::String(format!("<unsupported type {}>", type_name(ty))),
    }
}

/// The one-byte `"char"` type, printed as PostgreSQL's `charout` does.
fn pg_char(b: u8) -> String {
    match b {
        0 => String::new(),
        1..=0x7F => char::from(b).to_string(),
        _ => format!("\\{b:03o}"),
    }
}

/// `numeric`'s binary form (base-10000 digits with weight and display
/// scale) printed exactly as PostgreSQL's `numeric_out`, without going
/// through any float.
fn numeric(bytes: &[u8]) -> Result<String, String> {
    let mut r = Reader(bytes);
    let ndigits = r.i16()?;
    let weight = i32::from(r.i16()?);
    let sign = r.u16()?;
    let dscale = usize::from(r.u16()?);
    let negative = match sign {
        0x0000 => false,
        0x4000 => true,
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        _ => return Err("unknown numeric sign".into()),
    };
    let ndigits = usize::try_from(ndigits).map_err(|_| "negative digit count")?;
    let mut digits = Vec::with_capacity(ndigits);
    for _ in 0..ndigits {
        let d = r.i16()?;
        if !(0..10_000).contains(&d) {
            return Err("numeric digit out of range".into());
        }
        digits.push(d);
    }
    r.end()?;
    let digit = |d: i32| -> i16 {
        usize::try_from(d)
            .ok()
            .and_then(|d| digits.get(d).copied())
            .unwrap_or(0)
    };
    let mut s = String::with_capacity(ndigits * 4 + dscale + 3);
    if negative {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for d in 0..=weight {
            if d == 0 {
                let _ = write!(s, "{}", digit(d));
            } else {
                let _ = write!(s, "{:04}", digit(d));
            }
        }
    }
    if dscale > 0 {
        s.push('.');
        let start = s.len();
        let mut d = weight + 1;
        while s.len() - start < dscale {
            let _ = write!(s, "{:04}", digit(d));
            d += 1;
        }
        s.truncate(start + dscale);
    }
    Ok(s)
}

/// `money` is an integer count of minor units. The number of fractional
/// digits comes from the server's `lc_monetary`; 2 is assumed (true for the
/// C locale and most currencies). The symbol and grouping are left out.
fn money(units: i64) -> String {
    let sign = if units < 0 { "-" } else { "" };
    let abs = units.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

fn uuid(bytes: &[u8]) -> Result<String, String> {
    if bytes.len() != 16 {
        return Err("a uuid has 16 bytes".into());
    }
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    Ok(s)
}

/// `inet`/`cidr`: family, prefix bits, cidr flag, address length, address.
/// `inet` shows the prefix only when it is not the full width, `cidr`
/// always, as PostgreSQL prints them.
fn inet(bytes: &[u8]) -> Result<String, String> {
    let mut r = Reader(bytes);
    let family = r.u8()?;
    let bits = r.u8()?;
    let is_cidr = r.u8()? != 0;
    let len = r.u8()?;
    let addr = r.take(usize::from(len))?;
    r.end()?;
    let (text, full) = match (family, addr.len()) {
        (2, 4) => {
            let a: [u8; 4] = addr.try_into().map_err(|_| "bad IPv4 address")?;
            (std::net::Ipv4Addr::from(a).to_string(), 32)
        }
        (3, 16) => {
            let a: [u8; 16] = addr.try_into().map_err(|_| "bad IPv6 address")?;
            (std::net::Ipv6Addr::from(a).to_string(), 128)
        }
        _ => return Err("unknown address family".into()),
    };
    Ok(if is_cidr || bits != full {
        format!("{text}/{bits}")
    } else {
        text
    })
}

/// `bit`/`varbit`: a bit count, then the bits, most significant first.
fn bits(bytes: &[u8]) -> Result<String, String> {
    let mut r = Reader(bytes);
    let n = usize::try_from(r.i32()?).map_err(|_| "negative bit count")?;
    let data = r.take(n.div_ceil(8))?;
    r.end()?;
    Ok((0..n)
        .map(|i| {
            if data[i / 8] & (0x80 >> (i % 8)) != 0 {
                '1'
            } else {
                '0'
            }
        })
        .collect())
}

/// An array: dimensions, a null flag, the element type, then each
/// element length-prefixed in row-major order. Nests one JSON array per
/// dimension.
fn array_binary(elem: Option<&PgTypeInfo>, bytes: &[u8], depth: u32) -> Result<Value, String> {
    let mut r = Reader(bytes);
    let ndim = usize::try_from(r.i32()?).map_err(|_| "negative array dimensions")?;
    let _has_nulls = r.i32()?;
    let elem_oid = r.u32()?;
    if ndim > 6 {
        // PostgreSQL's MAXDIM.
        return Err("too many array dimensions".into());
    }
    let mut dims = Vec::with_capacity(ndim);
    for _ in 0..ndim {
        let len = usize::try_from(r.i32()?).map_err(|_| "negative array length")?;
        let _lower_bound = r.i32()?;
        dims.push(len);
    }
    // The header names the element type; prefer the resolved type info (it
    // knows enums and composites) when it is the same type.
    let declared;
    let elem = match elem {
        Some(e) if e.oid().map(|o| o.0) == Some(elem_oid) => e,
        _ => {
            declared = PgTypeInfo::with_oid(Oid(elem_oid));
            &declared
        }
    };
    if ndim == 0 {
        r.end()?;
        return Ok(Value::Array(Vec::new()));
    }
    let value = array_level(&mut r, elem, &dims, depth)?;
    r.end()?;
    Ok(value)
}

fn array_level(
    r: &mut Reader<'_>,
    elem: &PgTypeInfo,
    dims: &[usize],
    depth: u32,
) -> Result<Value, String> {
    let (&len, inner) = dims.split_first().ok_or("array without dimensions")?;
    // Every element takes at least its 4-byte length: refuse a count the
    // remaining bytes cannot hold before allocating for it.
    if len > r.0.len() / 4 + 1 {
        return Err("array is shorter than its dimensions".into());
    }
    let mut items = Vec::with_capacity(len);
    for _ in 0..len {
        items.push(if inner.is_empty() {
            match r.field()? {
                None => Value::Null,
                Some(b) => binary(elem, b, depth + 1)?,
            }
        } else {
            array_level(r, elem, inner, depth + 1)?
        });
    }
    Ok(Value::Array(items))
}

/// A record: field count, then each field's type OID and length-prefixed
/// value. Composite types (known field names) become objects, anonymous
/// `record`s arrays.
fn record_binary(
    fields: Option<&[(String, PgTypeInfo)]>,
    bytes: &[u8],
    depth: u32,
) -> Result<Value, String> {
    let mut r = Reader(bytes);
    let n = usize::try_from(r.i32()?).map_err(|_| "negative field count")?;
    if n > r.0.len() / 8 {
        return Err("record is shorter than its field count".into());
    }
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let oid = r.u32()?;
        let declared;
        let ty = match fields.and_then(|f| f.get(i)) {
            Some((_, t)) if t.oid().map(|o| o.0) == Some(oid) => t,
            _ => {
                declared = PgTypeInfo::with_oid(Oid(oid));
                &declared
            }
        };
        values.push(match r.field()? {
            None => Value::Null,
            Some(b) => binary(ty, b, depth + 1)?,
        });
    }
    r.end()?;
    Ok(match fields {
        Some(f) if f.len() == values.len() => {
            Value::Object(f.iter().map(|(name, _)| name.clone()).zip(values).collect())
        }
        _ => Value::Array(values),
    })
}

/// A range: flags, then the present bounds length-prefixed. Printed as
/// PostgreSQL prints ranges, with the bounds typed as this module types them.
fn range_binary(sub: &PgTypeInfo, bytes: &[u8], depth: u32) -> Result<Value, String> {
    const EMPTY: u8 = 0x01;
    const LB_INC: u8 = 0x02;
    const UB_INC: u8 = 0x04;
    const LB_INF: u8 = 0x08;
    const UB_INF: u8 = 0x10;
    let mut r = Reader(bytes);
    let flags = r.u8()?;
    if flags & EMPTY != 0 {
        r.end()?;
        return Ok(Value::String("empty".into()));
    }
    let mut bound = |infinite: bool| -> Result<String, String> {
        if infinite {
            return Ok(String::new());
        }
        match r.field()? {
            None => Ok(String::new()),
            Some(b) => Ok(range_bound(&binary(sub, b, depth + 1)?)),
        }
    };
    let lower = bound(flags & LB_INF != 0)?;
    let upper = bound(flags & UB_INF != 0)?;
    r.end()?;
    Ok(Value::String(format!(
        "{}{lower},{upper}{}",
        if flags & LB_INC != 0 { '[' } else { '(' },
        if flags & UB_INC != 0 { ']' } else { ')' },
    )))
}

/// A range bound as text, double-quoted when it holds characters that are
/// special in range syntax (as `range_out` quotes).
fn range_bound(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.is_empty()
        || s.chars()
            .any(|c| matches!(c, '"' | '\\' | '(' | ')' | '[' | ']' | ',') || c.is_whitespace())
    {
        let mut q = String::from("\"");
        for c in s.chars() {
            if matches!(c, '"' | '\\') {
                q.push('\\');
            }
            q.push(c);
        }
        q.push('"');
        q
    } else {
        s
    }
}

// ---------------------------------------------------------------------------
// Dates and times
// ---------------------------------------------------------------------------

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01 (`days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn push_date(s: &mut String, unix_days: i64) {
    let (y, m, d) = civil_from_days(unix_days);
    if y > 9999 {
        let _ = write!(s, "+{y}");
    } else if y < 0 {
        let _ = write!(s, "-{:04}", -y);
    } else {
        let _ = write!(s, "{y:04}");
    }
    let _ = write!(s, "-{m:02}-{d:02}");
}

/// `HH:MM:SS[.ffffff]` with trailing zeros of the fraction trimmed.
fn push_time(s: &mut String, micros: i64) {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let _ = write!(
        s,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    push_fraction(s, frac);
}

fn push_fraction(s: &mut String, frac_micros: i64) {
    if frac_micros != 0 {
        let digits = format!("{frac_micros:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
}

/// `+HH:MM[:SS]` for an offset in seconds east of UTC.
fn push_offset(s: &mut String, east: i64) {
    let abs = east.abs();
    let _ = write!(
        s,
        "{}{:02}:{:02}",
        if east < 0 { '-' } else { '+' },
        abs / 3600,
        abs / 60 % 60
    );
    if abs % 60 != 0 {
        let _ = write!(s, ":{:02}", abs % 60);
    }
}

fn date(pg_days: i32) -> String {
    match pg_days {
        i32::MAX => "infinity".into(),
        i32::MIN => "-infinity".into(),
        d => {
            let mut s = String::with_capacity(10);
            push_date(&mut s, i64::from(d) + PG_EPOCH_DAYS);
            s
        }
    }
}

fn time_of_day(micros: i64) -> String {
    let mut s = String::with_capacity(15);
    push_time(&mut s, micros);
    s
}

/// Microseconds since 2000-01-01 (UTC for `timestamptz`) in ISO 8601.
fn timestamp(pg_micros: i64, utc: bool) -> String {
    match pg_micros {
        i64::MAX => "infinity".into(),
        i64::MIN => "-infinity".into(),
        t => {
            // Work in days from PostgreSQL's epoch: shifting the microseconds
            // to 1970 would overflow near the end of the timestamp range.
            let mut s = String::with_capacity(27);
            push_date(&mut s, t.div_euclid(USECS_PER_DAY) + PG_EPOCH_DAYS);
            s.push('T');
            push_time(&mut s, t.rem_euclid(USECS_PER_DAY));
            if utc {
                s.push('Z');
            }
            s
        }
    }
}

/// An interval as PostgreSQL prints it with `IntervalStyle = iso_8601`:
/// each field keeps its own sign, zero fields are left out, zero is `PT0S`.
fn interval(micros: i64, days: i32, months: i32) -> String {
    // PostgreSQL 17's infinite intervals.
    if months == i32::MAX && days == i32::MAX && micros == i64::MAX {
        return "infinity".into();
    }
    if months == i32::MIN && days == i32::MIN && micros == i64::MIN {
        return "-infinity".into();
    }
    let (years, months) = (months / 12, months % 12);
    let hours = micros / 3_600_000_000;
    let rest = micros - hours * 3_600_000_000;
    let minutes = rest / 60_000_000;
    let rest = rest - minutes * 60_000_000;
    let (secs, frac) = (rest / 1_000_000, rest % 1_000_000);
    if years == 0 && months == 0 && days == 0 && micros == 0 {
        return "PT0S".into();
    }
    let mut s = String::from("P");
    let part = |s: &mut String, n: i64, unit: char| {
        if n != 0 {
            let _ = write!(s, "{n}{unit}");
        }
    };
    part(&mut s, i64::from(years), 'Y');
    part(&mut s, i64::from(months), 'M');
    part(&mut s, i64::from(days), 'D');
    if micros != 0 {
        s.push('T');
    }
    part(&mut s, hours, 'H');
    part(&mut s, minutes, 'M');
    if secs != 0 || frac != 0 {
        if secs < 0 || frac < 0 {
            s.push('-');
        }
        let _ = write!(s, "{}", secs.abs());
        push_fraction(&mut s, frac.abs());
        s.push('S');
    }
    s
}

// ---------------------------------------------------------------------------
// Text format (simple protocol): best effort
// ---------------------------------------------------------------------------

fn text(ty: &PgTypeInfo, s: &str, depth: u32) -> Value {
    let oid = ty.oid().map_or(0, |o| o.0);
    match oid {
        16 => match s {
            "t" => return Value::Bool(true),
            "f" => return Value::Bool(false),
            _ => {}
        },
        20 | 21 | 23 | 26 | 28 | 29 | 5069 => {
            if let Ok(n) = s.parse::<i64>() {
                return Value::from(n);
            }
            if let Ok(n) = s.parse::<u64>() {
                return Value::from(n);
            }
        }
        700 | 701 => match s {
            "NaN" | "Infinity" | "-Infinity" => return Value::String(s.into()),
            _ => {
                if let Ok(f) = s.parse::<f64>() {
                    return float(f);
                }
            }
        },
        114 | 3802 => return json_text(s),
        17 => {
            if let Some(bytes) = s.strip_prefix("\\x").and_then(unhex) {
                return Value::String(BASE64.encode(bytes));
            }
        }
        1082 => {
            if let Some(v) = text_timestamp(s, Stamp::Date) {
                return Value::String(v);
            }
        }
        1114 => {
            if let Some(v) = text_timestamp(s, Stamp::Local) {
                return Value::String(v);
            }
        }
        1184 => {
            if let Some(v) = text_timestamp(s, Stamp::Utc) {
                return Value::String(v);
            }
        }
        2278 => return Value::Null,
        _ => {}
    }
    if depth < MAX_DEPTH
        && let Some(PgTypeKind::Array(elem)) = kind_of(ty)
        && let Some(items) = parse_array(s)
    {
        return items.into_json(elem, depth + 1);
    }
    if depth < MAX_DEPTH
        && let Some(PgTypeKind::Domain(base)) = kind_of(ty)
    {
        return text(base, s, depth + 1);
    }
    Value::String(s.to_owned())
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Stamp {
    Date,
    Local,
    Utc,
}

/// Rewrites PostgreSQL's ISO `DateStyle` output (which sqlx sets on every
/// connection) into this module's ISO 8601 form: `T` separator, BC years as
/// astronomical years, `timestamptz` shifted to UTC. `None` when `s` has
/// another shape; the caller then keeps PostgreSQL's text.
fn text_timestamp(s: &str, kind: Stamp) -> Option<String> {
    if s == "infinity" || s == "-infinity" {
        return Some(s.to_owned());
    }
    let (s, bc) = match s.strip_suffix(" BC") {
        Some(rest) => (rest, true),
        None => (s, false),
    };
    let (date_part, time_part) = match kind {
        Stamp::Date => (s, ""),
        _ => s.split_once(' ')?,
    };
    let mut it = date_part.splitn(3, '-');
    let year: i64 = it.next()?.parse().ok()?;
    let month: u32 = it.next()?.parse().ok()?;
    let day: u32 = it.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let year = if bc { 1 - year } else { year };
    let days = days_from_civil(year, month, day);
    if kind == Stamp::Date {
        let mut out = String::new();
        push_date(&mut out, days);
        return Some(out);
    }
    // Time, then (timestamptz) an offset: +HH, +HH:MM or +HH:MM:SS.
    let split = time_part.find(['+', '-']).unwrap_or(time_part.len());
    let (clock, offset) = time_part.split_at(split);
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut it = hms.splitn(3, ':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let sec: i64 = it.next()?.parse().ok()?;
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: i64 = format!("{frac:0<6}").parse().ok()?;
    let mut micros = ((h * 60 + m) * 60 + sec) * 1_000_000 + frac;
    if kind == Stamp::Utc {
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let mut secs = 0;
        for (i, part) in offset.get(1..)?.split(':').enumerate() {
            secs += part.parse::<i64>().ok()? * [3600, 60, 1].get(i)?;
        }
        micros -= sign * secs * 1_000_000;
    } else if !offset.is_empty() {
        return None;
    }
    let total = days.checked_mul(USECS_PER_DAY)?.checked_add(micros)?;
    let mut out = String::new();
    push_date(&mut out, total.div_euclid(USECS_PER_DAY));
    out.push('T');
    push_time(&mut out, total.rem_euclid(USECS_PER_DAY));
    if kind == Stamp::Utc {
        out.push('Z');
    }
    Some(out)
}

/// A parsed array literal (`{1,"a b",NULL,{2,3}}`).
enum Item {
    Null,
    Text(String),
    Nested(Vec<Item>),
}

impl Item {
    fn into_json(self, elem: &PgTypeInfo, depth: u32) -> Value {
        match self {
            Item::Null => Value::Null,
            Item::Text(s) => text(elem, &s, depth),
            Item::Nested(items) => Value::Array(
                items
                    .into_iter()
                    .map(|i| i.into_json(elem, depth))
                    .collect(),
            ),
        }
    }
}

/// Parses PostgreSQL's array output; `None` if `s` is not one.
fn parse_array(s: &str) -> Option<Item> {
    // Non-default lower bounds are printed as a prefix: `[0:2]={...}`.
    let s = if s.starts_with('[') {
        s.split_once('=')?.1
    } else {
        s
    };
    let mut chars = s.chars().peekable();
    let item = parse_list(&mut chars, 0)?;
    chars.next().is_none().then_some(item)
}

fn parse_list(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, depth: u32) -> Option<Item> {
    if depth > 6 || chars.next()? != '{' {
        return None;
    }
    let mut items = Vec::new();
    if chars.peek() == Some(&'}') {
        chars.next();
        return Some(Item::Nested(items));
    }
    loop {
        match chars.peek()? {
            '{' => items.push(parse_list(chars, depth + 1)?),
            '"' => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        '\\' => s.push(chars.next()?),
                        '"' => break,
                        c => s.push(c),
                    }
                }
                items.push(Item::Text(s));
            }
            _ => {
                let mut s = String::new();
                while let Some(&c) = chars.peek() {
                    if c == ',' || c == '}' {
                        break;
                    }
                    chars.next();
                    if c == '\\' {
                        s.push(chars.next()?);
                    } else {
                        s.push(c);
                    }
                }
                items.push(if s.eq_ignore_ascii_case("NULL") {
                    Item::Null
                } else {
                    Item::Text(s)
                });
            }
        }
        match chars.next()? {
            ',' => continue,
            '}' => return Some(Item::Nested(items)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests;

//! PostgreSQL's binary format (the extended protocol): exact decoding of
//! every built-in type, arrays, records and ranges.

use super::*;

/// A cursor over a binary value, failing cleanly on short input.
pub(super) struct Reader<'a>(&'a [u8]);

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
pub(super) fn exact<'a, T>(
    bytes: &'a [u8],
    read: impl FnOnce(&mut Reader<'a>) -> Result<T, String>,
) -> Result<T, String> {
    let mut r = Reader(bytes);
    let v = read(&mut r)?;
    r.end()?;
    Ok(v)
}

pub(super) fn binary(ty: &PgTypeInfo, bytes: &[u8], depth: u32) -> Result<Value, String> {
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
pub(super) fn builtin_binary(oid: u32, bytes: &[u8], depth: u32) -> Result<Option<Value>, String> {
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

pub(super) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// JSON text as a value; text serde_json cannot hold (a number beyond
/// `f64`, which `jsonb` accepts) stays a string rather than failing.
pub(super) fn json_text(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_owned()))
}

/// A type we do not know: its bytes as text when they look like text
/// (types whose binary form is their text output, such as `citext`), since
/// that is what `psql` would show; binary structures contain NUL or other
/// control bytes and get a placeholder instead of noise.
pub(super) fn fallback(ty: &PgTypeInfo, bytes: &[u8]) -> Value {
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
pub(super) fn pg_char(b: u8) -> String {
    match b {
        0 => String::new(),
        1..=0x7F => char::from(b).to_string(),
        _ => format!("\\{b:03o}"),
    }
}

/// `numeric`'s binary form (base-10000 digits with weight and display
/// scale) printed exactly as PostgreSQL's `numeric_out`, without going
/// through any float.
pub(super) fn numeric(bytes: &[u8]) -> Result<String, String> {
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
pub(super) fn money(units: i64) -> String {
    let sign = if units < 0 { "-" } else { "" };
    let abs = units.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

pub(super) fn uuid(bytes: &[u8]) -> Result<String, String> {
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
pub(super) fn inet(bytes: &[u8]) -> Result<String, String> {
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
pub(super) fn bits(bytes: &[u8]) -> Result<String, String> {
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
pub(super) fn array_binary(
    elem: Option<&PgTypeInfo>,
    bytes: &[u8],
    depth: u32,
) -> Result<Value, String> {
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

pub(super) fn array_level(
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
pub(super) fn record_binary(
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
pub(super) fn range_binary(sub: &PgTypeInfo, bytes: &[u8], depth: u32) -> Result<Value, String> {
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
pub(super) fn range_bound(v: &Value) -> String {
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

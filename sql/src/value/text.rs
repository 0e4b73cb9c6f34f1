//! PostgreSQL's text format (the simple protocol): typed best effort.

use super::*;

pub(super) fn text(ty: &PgTypeInfo, s: &str, depth: u32) -> Value {
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

pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Stamp {
    Date,
    Local,
    Utc,
}

/// Rewrites PostgreSQL's ISO `DateStyle` output (which sqlx sets on every
/// connection) into this module's ISO 8601 form: `T` separator, BC years as
/// astronomical years, `timestamptz` shifted to UTC. `None` when `s` has
/// another shape; the caller then keeps PostgreSQL's text.
pub(super) fn text_timestamp(s: &str, kind: Stamp) -> Option<String> {
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
pub(super) enum Item {
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
pub(super) fn parse_array(s: &str) -> Option<Item> {
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

pub(super) fn parse_list(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    depth: u32,
) -> Option<Item> {
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

//! The few JavaScript semantics n8n's behaviour depends on (trim, `Number()`,
//! number printing, `Array.prototype.join`, property order), reimplemented so
//! results match n8n byte for byte.

use serde_json::{Map, Number, Value};

/// JavaScript's `\s` / `String.prototype.trim` set, which differs from Rust's
/// `char::is_whitespace` (JS includes U+FEFF, excludes U+0085).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

pub(crate) fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_space)
}

/// JavaScript `Number(string)`; `None` stands for `NaN`.
pub(crate) fn js_string_to_number(s: &str) -> Option<f64> {
    let t = js_trim(s);
    if t.is_empty() {
        return Some(0.0);
    }
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => Some(16),
            b'o' | b'O' => Some(8),
            b'b' | b'B' => Some(2),
            _ => None,
        };
        if let Some(radix) = radix {
            return parse_radix(&t[2..], radix);
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return Some(if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if !is_decimal_literal(unsigned) {
        return None;
    }
    // Rust's float grammar is a superset of the JS one checked above and rounds
    // correctly, so it can do the conversion.
    t.parse::<f64>().ok()
}

fn parse_radix(digits: &str, radix: u32) -> Option<f64> {
    if digits.is_empty() {
        return None;
    }
    let mut exact: Option<u128> = Some(0);
    let mut approx = 0.0f64;
    for c in digits.chars() {
        let d = c.to_digit(radix)?;
        exact = exact
            .and_then(|v| v.checked_mul(u128::from(radix)))
            .and_then(|v| v.checked_add(u128::from(d)));
        approx = approx * f64::from(radix) + f64::from(d);
    }
    // `as` rounds to nearest, which is what JS does for exact integers.
    Some(exact.map_or(approx, |v| v as f64))
}

/// JS `StrUnsignedDecimalLiteral` without `Infinity`.
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = count_digits(&b[i..]);
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = count_digits(&b[i..]);
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// A JS number as JSON: integral values become JSON integers (JS has no
/// distinction, and `5` reads better than `5.0`); non-finite values become
/// `null`, which is what `JSON.stringify` emits for them.
pub(crate) fn f64_to_json(n: f64) -> Value {
    const MAX_SAFE: f64 = 9_007_199_254_740_992.0;
    if !n.is_finite() {
        return Value::Null;
    }
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE {
        // Exact: integral and within the range where f64 represents every integer.
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// `JSON.parse`: like serde_json, except every number is a double, so integers
/// beyond 2^53 round exactly as they do in n8n.
pub(crate) fn js_json_parse(text: &str) -> Option<Value> {
    let mut v: Value = serde_json::from_str(text).ok()?;
    // serde_json caps nesting at 128, so this recursion is bounded.
    round_big_integers(&mut v);
    Some(v)
}

fn round_big_integers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            if let Some(f) = n.as_f64() {
                *v = f64_to_json(f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(round_big_integers),
        Value::Object(map) => map.values_mut().for_each(round_big_integers),
        _ => {}
    }
}

/// JavaScript `Number.prototype.toString()` (radix 10).
pub(crate) fn js_number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    // `{:e}` yields the shortest round-trip digits, as JS does; only the layout differs.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    let n_exp = exp.parse::<i64>().unwrap_or(0) + 1;
    let mut out = String::new();
    if n < 0.0 {
        out.push('-');
    }
    if k <= n_exp && n_exp <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n_exp - k) as usize));
    } else if 0 < n_exp && n_exp <= 21 {
        let (int, frac) = digits.split_at(n_exp as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n_exp && n_exp <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n_exp) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n_exp - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.abs().to_string());
    }
    out
}

/// How a value prints inside `[...].join('')`, which is how n8n renders
/// `text {{ expr }}` templates (so objects really become `[object Object]`).
/// `None` when arrays nest deeper than `depth_left`.
pub(crate) fn js_join_string(v: &Value, depth_left: usize) -> Option<String> {
    Some(match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number_to_string(json_number_to_f64(n)),
        Value::String(s) => s.clone(),
        Value::Object(_) => "[object Object]".into(),
        Value::Array(items) => {
            let depth_left = depth_left.checked_sub(1)?;
            let parts = items
                .iter()
                .map(|i| js_join_string(i, depth_left))
                .collect::<Option<Vec<_>>>()?;
            parts.join(",")
        }
    })
}

/// JSON numbers reach JS as doubles, so large integers lose precision just as in n8n.
fn json_number_to_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(0.0)
}

/// Object entries in JavaScript property order (array-index keys ascending,
/// then the rest in insertion order), so "first appearance" matches n8n.
pub(crate) fn js_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, (&String, &Value))> = Vec::new();
    let mut named = Vec::with_capacity(map.len());
    for entry in map {
        match array_index(entry.0) {
            Some(i) => indexed.push((i, entry)),
            None => named.push(entry),
        }
    }
    if indexed.is_empty() {
        return named;
    }
    indexed.sort_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, e)| e).chain(named).collect()
}

/// A canonical array index: `0` or no leading zero, below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|&i| i != u32::MAX)
}

/// Whether `v` nests containers deeper than `limit`, checked without recursion
/// because the value may be arbitrarily deep.
pub(crate) fn exceeds_depth(v: &Value, limit: usize) -> bool {
    let mut stack = vec![(v, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if depth >= limit {
            return true;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_conversion_follows_js() {
        let cases: &[(&str, Option<f64>)] = &[
            ("", Some(0.0)),
            ("  ", Some(0.0)),
            (" 12 ", Some(12.0)),
            ("+5", Some(5.0)),
            ("-5.5", Some(-5.5)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1e3", Some(1000.0)),
            ("1E-2", Some(0.01)),
            ("0x1F", Some(31.0)),
            ("0b101", Some(5.0)),
            ("0o17", Some(15.0)),
            ("-0x10", None),
            ("0x", None),
            ("Infinity", Some(f64::INFINITY)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("infinity", None),
            ("inf", None),
            ("nan", None),
            ("1_000", None),
            ("1e", None),
            (".", None),
            ("abc", None),
            ("\u{FEFF}7\u{FEFF}", Some(7.0)),
        ];
        for (input, expected) in cases {
            assert_eq!(js_string_to_number(input), *expected, "Number({input:?})");
        }
    }

    #[test]
    fn number_printing_follows_js() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (5.0, "5"),
            (-5.5, "-5.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (123.456, "123.456"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
        ];
        for (n, expected) in cases {
            assert_eq!(js_number_to_string(*n), *expected);
        }
    }

    #[test]
    fn join_string_follows_js() {
        let v = json!([1, [2, null], {"b": 2}, "s", true]);
        assert_eq!(
            js_join_string(&v, 64).as_deref(),
            Some("1,2,,[object Object],s,true")
        );
        assert_eq!(
            js_join_string(&json!({"a": 1}), 64).as_deref(),
            Some("[object Object]")
        );
        assert_eq!(js_join_string(&json!(null), 64).as_deref(), Some(""));
        assert_eq!(js_join_string(&json!([[[1]]]), 2), None);
    }

    #[test]
    fn property_order_puts_array_indices_first() {
        let v = json!({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6});
        let keys: Vec<&str> = js_entries(v.as_object().unwrap())
            .into_iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["2", "10", "b", "a", "01", "4294967295"]);
    }

    #[test]
    fn depth_check_is_iterative() {
        let mut v = json!(1);
        for _ in 0..10 {
            v = json!([v]);
        }
        assert!(!exceeds_depth(&v, 10));
        assert!(exceeds_depth(&v, 9));
    }
}

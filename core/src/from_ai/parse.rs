//! Scanner for `$fromAI(...)` calls, following n8n's `extractFromAICalls`,
//! `parseArguments` and `parseDefaultValue` quirk for quirk.

use serde_json::Value;

use super::error::FromAiError;
use super::js::{f64_to_json, js_json_parse, js_string_to_number, js_trim, js_trim_start};
use super::{FromAiCall, FromAiType, MAX_RESCAN_FACTOR, MAX_TEXT_LEN};

/// Extra bytes of scanning allowed on top of `MAX_RESCAN_FACTOR * len`, so short
/// strings with a few legitimately nested calls never hit the limit.
const RESCAN_ALLOWANCE: usize = 64 * 1024;

/// Every `$fromAI` call in `text`, without key validation (n8n validates keys only
/// after the whole parameter tree has been parsed).
pub(crate) fn extract_calls(text: &str, path: &str) -> Result<Vec<FromAiCall>, FromAiError> {
    if text.len() > MAX_TEXT_LEN {
        return Err(FromAiError::TooLong {
            path: path.to_owned(),
            len: text.len(),
            limit: MAX_TEXT_LEN,
        });
    }
    let budget = text
        .len()
        .saturating_mul(MAX_RESCAN_FACTOR)
        .saturating_add(RESCAN_ALLOWANCE);
    let mut scanned = 0usize;
    let mut calls = Vec::new();
    let mut search_from = 0;
    while let Some(start) = find_args_start(text, search_from) {
        // n8n resumes the regex right after `(`, not after the call, so a
        // `$fromAI(` inside another call's arguments is a call of its own.
        search_from = start;
        let Some(end) = find_call_end(text.as_bytes(), start) else {
            return Err(FromAiError::UnbalancedParentheses {
                path: path.to_owned(),
                text: text[start..].to_owned(),
            });
        };
        scanned = scanned.saturating_add(end - start);
        if scanned > budget {
            return Err(FromAiError::TooComplex {
                path: path.to_owned(),
                factor: MAX_RESCAN_FACTOR,
            });
        }
        let args = &text[start..end];
        let call = parse_arguments(args).map_err(|ty| FromAiError::InvalidType {
            path: path.to_owned(),
            args: args.to_owned(),
            ty,
        })?;
        calls.push(call);
    }
    Ok(calls)
}

/// Where the arguments of the next `$fromAI\s*\(\s*` match begin (n8n's regex:
/// ASCII case-insensitive, JS whitespace, spaces after `(` skipped).
fn find_args_start(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(off) = bytes.get(i..)?.iter().position(|&b| b == b'$') {
        let dollar = i + off;
        i = dollar + 1;
        let name_end = dollar + 1 + "fromai".len();
        let name = bytes.get(dollar + 1..name_end)?;
        if !name.eq_ignore_ascii_case(b"fromai") {
            continue;
        }
        let after_name = js_trim_start(&text[name_end..]);
        let Some(after_paren) = after_name.strip_prefix('(') else {
            continue;
        };
        let args = js_trim_start(after_paren);
        return Some(text.len() - args.len());
    }
    None
}

/// Byte index of the `)` closing the call whose arguments start at `start`.
/// Bytes suffice: every character that matters is ASCII and UTF-8 never reuses
/// ASCII bytes inside multi-byte sequences.
fn find_call_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 1usize;
    let mut quote: Option<u8> = None;
    let mut i = start;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) => {
                if c == b'\\' && i + 1 < bytes.len() {
                    i += 2;
                    continue;
                }
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'"' | b'\'' | b'`' => quote = Some(c),
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// n8n's `parseArguments`: split on top-level commas, strip one pair of matching
/// quotes, unescape. Only the first four arguments matter; n8n ignores the rest.
/// `Err` carries the type text when it is not a known type.
pub(crate) fn parse_arguments(args: &str) -> Result<FromAiCall, String> {
    let parts = split_arguments(args);
    let mut cleaned = parts.iter().map(|p| clean_argument(p));
    let key = cleaned.next().unwrap_or_default();
    let description = cleaned.next();
    let raw_type = cleaned.next();
    let ty = match &raw_type {
        None => FromAiType::String,
        Some(t) => t.parse::<FromAiType>().map_err(|_| t.clone())?,
    };
    // n8n matches the type case-insensitively but converts the default only
    // for a type written in lowercase (`'Number'` defaults go through JSON).
    let exact = match &raw_type {
        Some(t) if t != ty.as_str() => None,
        _ => Some(ty),
    };
    let default = cleaned.next().map(|v| parse_default(&v, exact));
    Ok(FromAiCall {
        key,
        description,
        ty,
        default,
    })
}

/// Top-level comma split. A backslash is dropped and the next character taken
/// literally, inside or outside quotes, exactly as n8n does.
fn split_arguments(args: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut escape_next = false;
    for c in args.chars() {
        if escape_next {
            current.push(c);
            escape_next = false;
            continue;
        }
        match c {
            '\\' => escape_next = true,
            '"' | '\'' | '`' => {
                match quote {
                    None => quote = Some(c),
                    Some(q) if q == c => quote = None,
                    Some(_) => {}
                }
                current.push(c);
            }
            ',' if quote.is_none() => {
                parts.push(js_trim(&current).to_owned());
                current.clear();
                if parts.len() == 4 {
                    return parts;
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        parts.push(js_trim(&current).to_owned());
    }
    parts
}

/// Strips one pair of identical surrounding quotes, then applies n8n's four
/// sequential unescape passes (a second unescape after the split's own).
fn clean_argument(arg: &str) -> String {
    let t = js_trim(arg);
    let quoted = ['\'', '`', '"']
        .iter()
        .any(|&q| t.starts_with(q) && t.ends_with(q));
    if !quoted {
        return t.to_owned();
    }
    // A lone quote both starts and ends the text; JS `slice(1, -1)` gives "".
    let inner = if t.len() < 2 { "" } else { &t[1..t.len() - 1] };
    inner
        .replace("\\'", "'")
        .replace("\\`", "`")
        .replace("\\\"", "\"")
        .replace("\\\\", "\\")
}

/// n8n's `parseDefaultValue`: typed when the text fits the type, otherwise
/// `JSON.parse`, otherwise the raw text. `ty` is `None` for a type n8n does
/// not recognise here (written with capitals).
pub(crate) fn parse_default(value: &str, ty: Option<FromAiType>) -> Value {
    match ty {
        Some(FromAiType::String) => return Value::String(value.to_owned()),
        Some(FromAiType::Boolean) if value.eq_ignore_ascii_case("true") => {
            return Value::Bool(true);
        }
        Some(FromAiType::Boolean) if value.eq_ignore_ascii_case("false") => {
            return Value::Bool(false);
        }
        Some(FromAiType::Number) => {
            if let Some(n) = js_string_to_number(value) {
                return f64_to_json(n);
            }
        }
        _ => {}
    }
    js_json_parse(value).unwrap_or_else(|| Value::String(value.to_owned()))
}

/// n8n's key rule `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn check_key(key: &str, path: &str) -> Result<(), FromAiError> {
    if key.is_empty() {
        return Err(FromAiError::MissingKey {
            path: path.to_owned(),
        });
    }
    if nodekit_rules::is_from_ai_key(key) {
        Ok(())
    } else {
        Err(FromAiError::InvalidKey {
            path: path.to_owned(),
            key: key.to_owned(),
        })
    }
}

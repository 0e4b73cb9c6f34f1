//! n8n parameter expressions, as far as nodekit evaluates them: a value
//! starting with `=` is an expression; `{{ $json.a.b }}`, `{{ $json["a b"] }}`
//! and `{{ $json.list[0] }}` read the input item; text around `{{ }}` makes a
//! template. `$fromAI(...)` is left in place for tool preparation. Anything
//! else is refused with an error naming the node and the parameter: nodekit
//! does not run JavaScript.

use serde_json::{Map, Value};

use crate::error::{Error, Result, shorten};

/// Deepest parameter nesting walked.
const MAX_DEPTH: usize = 64;

/// Resolves every expression in `params` against the input `item`.
pub fn resolve(params: &Value, item: &Value, node: &str) -> Result<Value> {
    walk(params, item, node, &mut String::new(), 0)
}

fn walk(value: &Value, item: &Value, node: &str, path: &mut String, depth: usize) -> Result<Value> {
    if depth > MAX_DEPTH {
        return Err(Error::UnsupportedExpression {
            node: node.to_owned(),
            path: path.clone(),
            expression: format!("(parameters nested deeper than {MAX_DEPTH} levels)"),
        });
    }
    Ok(match value {
        Value::String(s) => match s.strip_prefix('=') {
            Some(expression) => {
                evaluate(expression, item).map_err(|e| Error::UnsupportedExpression {
                    node: node.to_owned(),
                    path: path.clone(),
                    expression: shorten(&e, 200),
                })?
            }
            None => value.clone(),
        },
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(walk(v, item, node, path, depth + 1)?);
                path.truncate(len);
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                out.insert(k.clone(), walk(v, item, node, path, depth + 1)?);
                path.truncate(len);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// Evaluates one expression (without its `=`); `Err` carries the code that is not supported.
fn evaluate(expression: &str, item: &Value) -> std::result::Result<Value, String> {
    if expression.to_ascii_lowercase().contains("$fromai") {
        return Ok(Value::String(format!("={expression}")));
    }
    let mut pieces = Vec::new();
    let mut rest = expression;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| format!("{{{{{after} (no closing }}}})"))?;
        pieces.push((&rest[..open], Some(after[..close].trim())));
        rest = &after[close + 2..];
    }
    pieces.push((rest, None));
    if let [("", Some(code)), ("", None)] = pieces.as_slice() {
        return json_path(code, item).ok_or_else(|| format!("{{{{ {code} }}}}"));
    }
    let mut out = String::new();
    for (text, code) in pieces {
        out.push_str(text);
        if let Some(code) = code {
            match json_path(code, item).ok_or_else(|| format!("{{{{ {code} }}}}"))? {
                Value::String(s) => out.push_str(&s),
                Value::Null => {}
                other => out.push_str(&other.to_string()),
            }
        }
    }
    Ok(Value::String(out))
}

/// `$json`, `$json.a.b`, `$json["a"]`, `$json['a']`, `$json.a[0]`; missing fields are `null`.
fn json_path(code: &str, item: &Value) -> Option<Value> {
    let mut rest = code.strip_prefix("$json")?;
    let mut current = Some(item);
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = &r[..end];
            if key.is_empty()
                || !key
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                return None;
            }
            current = current.and_then(|v| v.get(key));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = r[..end].trim();
            current = match inner.as_bytes().first()? {
                b'"' | b'\'' => {
                    let quote = inner.chars().next()?;
                    let key = inner.strip_prefix(quote)?.strip_suffix(quote)?;
                    current.and_then(|v| v.get(key))
                }
                _ => {
                    let index: usize = inner.parse().ok()?;
                    current.and_then(|v| v.get(index))
                }
            };
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(current.cloned().unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_access_and_templates() {
        let item = json!({"chatInput": "hi", "sessionId": "s1", "user": {"name": "Ada", "tags": ["a", "b"]}, "n": 3, "odd key": true});
        let params = json!({
            "text": "={{ $json.chatInput }}",
            "n": "={{ $json.n }}",
            "greeting": "=Hello {{ $json.user.name }}, you have {{ $json.n }} ({{$json.user.tags[1]}})",
            "odd": "={{ $json[\"odd key\"] }}",
            "missing": "={{ $json.nothing.here }}",
            "plain": "no expression",
            "nested": [{"k": "={{ $json['sessionId'] }}"}],
            "tool": "={{ $fromAI('q') }}"
        });
        let out = resolve(&params, &item, "n").unwrap();
        assert_eq!(
            out,
            json!({
                "text": "hi", "n": 3, "greeting": "Hello Ada, you have 3 (b)", "odd": true, "missing": null,
                "plain": "no expression", "nested": [{"k": "s1"}], "tool": "={{ $fromAI('q') }}"
            })
        );
    }

    #[test]
    fn anything_else_is_refused_with_node_and_parameter() {
        for expression in [
            "={{ $now }}",
            "={{ $json.a + 1 }}",
            "={{ $('Other').item.json.x }}",
            "={{ $json.a",
            "={{ $json..a }}",
        ] {
            let e = resolve(&json!({"opts": {"p": expression}}), &json!({}), "My Node")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("node `My Node`: parameter `opts.p` uses an unsupported expression"),
                "{e}"
            );
        }
    }
}

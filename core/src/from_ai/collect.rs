//! Walks parameter JSON like n8n's `traverseNodeParameters` and applies the key
//! and duplicate rules of `getSchema` in `create-node-as-tool`.

use std::collections::HashMap;

use serde_json::Value;

use super::error::FromAiError;
use super::js::js_entries;
use super::parse::{check_key, extract_calls};
use super::{FromAiCall, MAX_DEPTH};

/// Visits every string in `params` with its n8n-style path (`a.b[0].c`), in
/// JavaScript property order, refusing nesting deeper than `MAX_DEPTH`.
pub(crate) fn walk_strings<'a>(
    params: &'a Value,
    visit: &mut dyn FnMut(&'a str, &str) -> Result<(), FromAiError>,
) -> Result<(), FromAiError> {
    let mut path = String::new();
    walk(params, &mut path, 0, visit)
}

fn walk<'a>(
    value: &'a Value,
    path: &mut String,
    depth: usize,
    visit: &mut dyn FnMut(&'a str, &str) -> Result<(), FromAiError>,
) -> Result<(), FromAiError> {
    match value {
        Value::String(s) => visit(s, path),
        Value::Array(items) => {
            check_depth(path, depth)?;
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                walk(item, path, depth + 1, visit)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Object(map) => {
            check_depth(path, depth)?;
            for (key, item) in js_entries(map) {
                let len = path.len();
                push_key(path, key);
                walk(item, path, depth + 1, visit)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

pub(crate) fn check_depth(path: &str, depth: usize) -> Result<(), FromAiError> {
    if depth >= MAX_DEPTH {
        return Err(FromAiError::TooDeep {
            path: path.to_owned(),
            limit: MAX_DEPTH,
        });
    }
    Ok(())
}

pub(crate) fn push_index(path: &mut String, i: usize) {
    path.push('[');
    path.push_str(&i.to_string());
    path.push(']');
}

pub(crate) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// All calls in `params`, deduplicated the way n8n builds its tool schema.
pub(crate) fn collect(params: &Value) -> Result<Vec<FromAiCall>, FromAiError> {
    // Parse everything first, then validate: n8n reports a parse error anywhere
    // in the tree before any key error.
    let mut found: Vec<(FromAiCall, String)> = Vec::new();
    walk_strings(params, &mut |text, path| {
        found.extend(
            extract_calls(text, path)?
                .into_iter()
                .map(|c| (c, path.to_owned())),
        );
        Ok(())
    })?;
    dedupe(found)
}

/// n8n keeps the first position of a key but the last definition's default, and
/// rejects a repeat whose description or type differs from the first.
pub(crate) fn dedupe(found: Vec<(FromAiCall, String)>) -> Result<Vec<FromAiCall>, FromAiError> {
    let mut unique: Vec<(FromAiCall, String)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (call, path) in found {
        check_key(&call.key, &path)?;
        match index.get(&call.key) {
            Some(&i) => {
                let (first, first_path) = &unique[i];
                if first.description != call.description || first.ty != call.ty {
                    return Err(FromAiError::DuplicateKey {
                        key: call.key,
                        first_path: first_path.clone(),
                        path,
                    });
                }
                // Only the default can differ here; n8n's Map keeps the last one.
                unique[i].0.default = call.default;
            }
            None => {
                index.insert(call.key.clone(), unique.len());
                unique.push((call, path));
            }
        }
    }
    Ok(unique.into_iter().map(|(c, _)| c).collect())
}

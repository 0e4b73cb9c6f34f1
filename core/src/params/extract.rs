//! Typed extraction of one parameter value: lookup, conversion with the
//! field's checks, and the errors that name the node and the path.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::property_spec::{schema_of, shape_of};
use super::{Location, Params};
use crate::description::{PropertyType, number_to_json};
use crate::error::{Error, ParamError, Result, describe_value, shorten};

/// Checks on a parameter value beyond its type.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checks {
    /// Smallest number allowed.
    pub min: Option<f64>,
    /// Largest number allowed.
    pub max: Option<f64>,
    /// Allowed values of a string parameter with inline options.
    pub options: &'static [&'static str],
    /// A string value is JSON text to parse (n8n stores `json` parameters as text).
    pub json_text: bool,
    /// An empty string or `null` counts as missing (n8n's rule for required parameters).
    pub required: bool,
}

impl Checks {
    /// No checks.
    pub const NONE: Checks = Checks {
        min: None,
        max: None,
        options: &[],
        json_text: false,
        required: false,
    };
}

/// n8n's plain template: `=text` without `{{ }}` is the text itself; `None`
/// for an expression that needs evaluating.
fn plain_template(expression: &str) -> Option<&str> {
    let body = expression.strip_prefix('=').unwrap_or(expression);
    (!body.contains("{{")).then_some(body)
}

/// Looks a parameter up: `None` when absent; an `=text` expression without
/// `{{ }}` is n8n's plain template and yields `text`; any other expression is
/// an error, because something should have resolved it. A resource locator
/// (`{"__rl": true, "mode": "list", "value": "claude-sonnet-4-5"}`, how n8n
/// stores a model picked from a list) yields its `value`, as n8n's
/// `getNodeParameter(.., {extractValue: true})` does.
pub fn lookup<'v>(
    values: &'v Map<String, Value>,
    name: &str,
    at: &Location<'_>,
) -> Result<Option<Cow<'v, Value>>> {
    let value = match values.get(name) {
        Some(Value::Object(locator)) if locator.get("__rl") == Some(&Value::Bool(true)) => {
            locator.get("value")
        }
        other => other,
    };
    match value {
        None => Ok(None),
        Some(Value::String(s)) if s.starts_with('=') => match plain_template(s) {
            Some(text) => Ok(Some(Cow::Owned(Value::String(text.to_owned())))),
            None => Err(unresolved(s, at, name)),
        },
        Some(v) => Ok(Some(Cow::Borrowed(v))),
    }
}

fn unresolved(expression: &str, parent: &Location<'_>, name: &str) -> Error {
    ParamError::UnresolvedExpression {
        node: parent.node.to_owned(),
        path: parent.field(name).path.into_owned(),
        expression: shorten(expression, 80),
    }
    .into()
}

/// Converts one present parameter value to `T`, with the type's checks.
pub fn convert<T: DeserializeOwned + JsonSchema>(
    value: &Value,
    parent: &Location<'_>,
    name: &str,
    checks: &Checks,
) -> Result<T> {
    // The path is only built on error paths: this runs once per parameter per call.
    let at = || parent.field(name);
    if checks.required && (value.is_null() || value.as_str() == Some("")) {
        return Err(at().missing());
    }
    let parsed;
    let value = match value {
        // Empty JSON text is an unset parameter.
        Value::String(text) if checks.json_text && text.trim().is_empty() => &Value::Null,
        Value::String(text) if checks.json_text => {
            parsed = serde_json::from_str::<Value>(text).map_err(|e| ParamError::WrongType {
                node: parent.node.to_owned(),
                path: at().path.into_owned(),
                expected: format!("JSON text ({e})"),
                found: describe_value(value),
            })?;
            &parsed
        }
        v => v,
    };
    if let Value::Number(n) = value
        && let Some(x) = n.as_f64()
    {
        let below = checks.min.is_some_and(|m| x < m);
        let above = checks.max.is_some_and(|m| x > m);
        if below || above {
            return Err(ParamError::OutOfRange {
                node: parent.node.to_owned(),
                path: at().path.into_owned(),
                value: n.to_string(),
                range: describe_range(checks.min, checks.max),
            }
            .into());
        }
    }
    if !checks.options.is_empty() && !value.as_str().is_some_and(|s| checks.options.contains(&s)) {
        return Err(wrong_type(value, &at(), || {
            format!(
                "one of {}",
                list(checks.options.iter().map(|o| format!("\"{o}\"")))
            )
        }));
    }
    match T::deserialize(value) {
        Ok(v) => Ok(v),
        // An integral float such as 10.0 (LLMs send them) for an integer type.
        Err(_)
            if value
                .as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) =>
        {
            T::deserialize(Value::from(value.as_f64().unwrap_or_default() as i64))
                .map_err(|_| wrong_type(value, &at(), expected_of::<T>))
        }
        Err(_) => Err(wrong_type(value, &at(), expected_of::<T>)),
    }
}

/// The value of an absent parameter whose default is an n8n expression:
/// `=text` is plain text; anything with `{{ }}` needed resolving.
pub fn expression_default<T: DeserializeOwned + JsonSchema>(
    expression: &str,
    parent: &Location<'_>,
    name: &str,
    checks: &Checks,
) -> Result<T> {
    match plain_template(expression) {
        Some(text) => convert(&Value::String(text.to_owned()), parent, name, checks),
        None => Err(unresolved(expression, parent, name)),
    }
}

/// The error for a `#[from_ai]` parameter that no tool arguments filled.
pub fn unresolved_from_ai(parent: &Location<'_>, name: &str) -> Error {
    ParamError::UnresolvedExpression {
        node: parent.node.to_owned(),
        path: parent.field(name).path.into_owned(),
        expression: "$fromAI(...) (the LLM fills it: run the node as a tool with arguments)".into(),
    }
    .into()
}

/// `from 1 to 50`, `at least 1` or `at most 50`.
fn describe_range(min: Option<f64>, max: Option<f64>) -> String {
    let n = |v: f64| number_to_json(v).to_string();
    match (min, max) {
        (Some(lo), Some(hi)) => format!("from {} to {}", n(lo), n(hi)),
        (Some(lo), None) => format!("at least {}", n(lo)),
        (None, Some(hi)) => format!("at most {}", n(hi)),
        (None, None) => "any number".into(),
    }
}

/// Converts a nested collection value.
pub fn convert_nested<T: Params>(value: &Value, at: &Location<'_>) -> Result<T> {
    match value {
        Value::Object(map) => T::from_params_at(map, at),
        other => Err(wrong_type(other, at, || "an object of parameters".into())),
    }
}

/// Converts a fixed-collection value `{ "values": [ {..}, .. ] }`, or
/// `{ "values": {..} }`, one entry, as n8n stores a fixed collection
/// without `multipleValues`.
pub fn convert_fixed<T: Params>(value: &Value, at: &Location<'_>, group: &str) -> Result<Vec<T>> {
    let expected = || format!("an object with a `{group}` list of entries");
    let Value::Object(map) = value else {
        return Err(wrong_type(value, at, expected));
    };
    match map.get(group) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            let group = at.field(group);
            items
                .iter()
                .enumerate()
                .map(|(i, item)| convert_nested(item, &group.index(i)))
                .collect()
        }
        Some(item @ Value::Object(_)) => Ok(vec![convert_nested(item, &at.field(group))?]),
        Some(other) => Err(wrong_type(other, at, expected)),
    }
}

/// The error for a required parameter without value.
pub fn missing(name: &str, at: &Location<'_>) -> Error {
    at.field(name).missing()
}

fn wrong_type(value: &Value, at: &Location<'_>, expected: impl FnOnce() -> String) -> Error {
    ParamError::WrongType {
        node: at.node.to_owned(),
        path: at.path.to_string(),
        expected: expected(),
        found: describe_value(value),
    }
    .into()
}

/// Describes what values `T` accepts, for error messages.
fn expected_of<T: JsonSchema>() -> String {
    let schema = schema_of::<T>();
    let shape = shape_of(&schema);
    let rust = short_type_name(std::any::type_name::<T>());
    let what = match shape.kind {
        PropertyType::Options | PropertyType::MultiOptions => {
            let values = shape.choices.clone().unwrap_or_default();
            let values = list(values.iter().map(|c| c.value.to_string()));
            if shape.kind == PropertyType::Options {
                format!("one of {values}")
            } else {
                format!("a list of {values}")
            }
        }
        _ if shape.multiple => format!("a list of {}s", shape.kind),
        PropertyType::Number => {
            let integer = schema.get("type").and_then(Value::as_str) == Some("integer");
            let what = if integer { "an integer" } else { "a number" };
            return match (shape.min, shape.max) {
                (None, None) => format!("{what} ({rust})"),
                (min, max) => format!("{what} ({rust}, {})", describe_range(min, max)),
            };
        }
        PropertyType::Boolean => "a boolean".into(),
        PropertyType::Json => "JSON".into(),
        other => format!("a {other}"),
    };
    format!("{what} ({rust})")
}

/// `alloc::vec::Vec<alloc::string::String>` → `Vec<String>`.
fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment_start = 0;
    for (i, c) in full.char_indices() {
        if matches!(c, '<' | '>' | ',' | ' ' | '(' | ')' | '[' | ']' | ';' | '&') {
            out.push_str(short_segment(&full[segment_start..i]));
            out.push(c);
            segment_start = i + c.len_utf8();
        }
    }
    out.push_str(short_segment(&full[segment_start..]));
    out
}

fn short_segment(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

fn list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

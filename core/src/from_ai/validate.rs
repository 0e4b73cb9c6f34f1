//! Checks LLM arguments against the schema and explains failures in a form an
//! LLM can act on: every problem with its JSON pointer, then what was expected.
//!
//! The schemas are the ones [`arguments_schema`](super::arguments_schema)
//! writes (n8n's four `$fromAI` types; for declared fields also integers
//! with bounds, the choices of an options field and the lists of a
//! multiOptions one), so the check covers exactly their keywords and words
//! its messages as JSON Schema validators do (`"ten" is not of type
//! "number"`). A schema with any other keyword is refused when it is compiled.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::error::{ArgumentProblem, ArgumentsError, truncate_chars};
use super::js::exceeds_depth;
use super::schema::is_json_type_schema;

/// Deepest argument nesting accepted; matches serde_json's own parse limit so
/// anything parsed from text passes, while hand-built monsters cannot be
/// sent on to the node.
pub(crate) const MAX_ARGUMENT_DEPTH: usize = 128;

/// Longest single problem message, so a huge wrong value is not echoed in full.
const MAX_PROBLEM_CHARS: usize = 300;

/// n8n's zod message for the `json` type.
const JSON_TYPE_MESSAGE: &str = "Value must be a non-empty object or a non-empty array";

/// Keywords that describe and never constrain.
const ANNOTATIONS: [&str; 4] = ["description", "default", "title", "$schema"];

/// A schema compiled once, for validating many tool calls.
#[derive(Debug)]
pub struct ArgumentsValidator {
    arguments: Vec<Argument>,
    required: Vec<String>,
    /// `additionalProperties: false`.
    closed: bool,
    expected: String,
}

/// One argument's name and what its values must be.
#[derive(Debug)]
struct Argument {
    name: String,
    kind: Kind,
}

/// What an argument's value must be.
#[derive(Debug)]
enum Kind {
    /// A string; with `choices` (`enum`), one of them.
    String {
        choices: Option<Vec<Value>>,
    },
    Boolean,
    /// A number; `integer` also refuses a fraction.
    Number {
        integer: bool,
        minimum: Option<Number>,
        maximum: Option<Number>,
    },
    /// n8n's `json` type: a non-empty object or a non-empty array.
    Json,
    /// An array of at least `min_items` values, each an `items`.
    Array {
        min_items: u64,
        items: Box<Kind>,
    },
    /// Any value (a property schema of `{}` or annotations only).
    Any,
}

impl ArgumentsValidator {
    /// Compiles `schema`, an arguments schema as
    /// [`arguments_schema`](super::arguments_schema) writes it (JSON Schema
    /// draft 7, the dialect LangChain emits for n8n).
    pub fn new(schema: &Value) -> Result<Self, ArgumentsError> {
        let expected = expected_summary(schema);
        let (arguments, required, closed) = compile(schema).map_err(|why| ArgumentsError {
            problems: vec![ArgumentProblem {
                path: "/".into(),
                message: limit(&format!(
                    "the tool's schema itself is invalid ({why}); this is a tool configuration error, not an argument error"
                )),
            }],
            expected: expected.clone(),
        })?;
        Ok(Self {
            arguments,
            required,
            closed,
            expected,
        })
    }

    /// Checks `args`, listing every problem rather than stopping at the first.
    pub fn validate(&self, args: &Value) -> Result<(), ArgumentsError> {
        if exceeds_depth(args, MAX_ARGUMENT_DEPTH) {
            return Err(self.too_deep("/"));
        }
        let problems = self.problems(args);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ArgumentsError {
                problems,
                expected: self.expected.clone(),
            })
        }
    }

    /// Every problem of `args`: the values, in the order they were sent,
    /// then the unexpected arguments, then the missing ones.
    fn problems(&self, args: &Value) -> Vec<ArgumentProblem> {
        let Value::Object(args) = args else {
            return vec![ArgumentProblem {
                path: "/".into(),
                message: limit(&not_of_type(args, "object")),
            }];
        };
        let mut out = Vec::new();
        let mut unexpected = Vec::new();
        for (name, value) in args {
            match self.arguments.iter().find(|a| &a.name == name) {
                Some(argument) => argument.kind.check(value, &|| child(name), &mut out),
                None if self.closed => unexpected.push(ArgumentProblem {
                    path: child(name),
                    message: "unexpected argument; only the arguments listed below are accepted"
                        .into(),
                }),
                None => {}
            }
        }
        out.append(&mut unexpected);
        for name in self.required.iter().filter(|n| !args.contains_key(*n)) {
            out.push(ArgumentProblem {
                path: child(name),
                message: "required argument is missing".into(),
            });
        }
        out
    }

    /// The error for a value nested beyond `MAX_ARGUMENT_DEPTH` at `path`.
    pub(crate) fn too_deep(&self, path: &str) -> ArgumentsError {
        ArgumentsError {
            problems: vec![ArgumentProblem {
                path: path.to_owned(),
                message: format!(
                    "nested more than {MAX_ARGUMENT_DEPTH} levels deep; send a flatter value"
                ),
            }],
            expected: self.expected.clone(),
        }
    }

    /// Human-readable summary of the arguments the schema expects.
    pub fn expected(&self) -> &str {
        &self.expected
    }
}

impl Kind {
    /// Adds the problems of the `value` at `path` to `out` (the path is
    /// only written out for a problem: a call's valid arguments cost none).
    fn check(&self, value: &Value, path: &dyn Fn() -> String, out: &mut Vec<ArgumentProblem>) {
        let mut problem = |message: String| {
            out.push(ArgumentProblem {
                path: path(),
                message: limit(&message),
            })
        };
        match self {
            Kind::Any => {}
            Kind::String { choices } => {
                if !value.is_string() {
                    problem(not_of_type(value, "string"));
                }
                // Reported with a wrong type too, as JSON Schema validators
                // do: the choices are what the model needs to see.
                if let Some(choices) = choices
                    && !choices.contains(value)
                {
                    problem(format!("{value} is not one of {}", one_of(choices)));
                }
            }
            Kind::Boolean if !value.is_boolean() => problem(not_of_type(value, "boolean")),
            Kind::Boolean => {}
            Kind::Array { min_items, items } => {
                let Value::Array(values) = value else {
                    return problem(not_of_type(value, "array"));
                };
                if (values.len() as u64) < *min_items {
                    let s = if *min_items == 1 { "" } else { "s" };
                    problem(format!("{value} has less than {min_items} item{s}"));
                }
                for (i, item) in values.iter().enumerate() {
                    items.check(item, &|| format!("{}/{i}", path()), out);
                }
            }
            Kind::Json => {
                let fits = match value {
                    Value::Object(m) => !m.is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    _ => false,
                };
                if !fits {
                    problem(format!("{JSON_TYPE_MESSAGE}, got {value}"));
                }
            }
            Kind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let Value::Number(n) = value else {
                    let name = if *integer { "integer" } else { "number" };
                    return problem(not_of_type(value, name));
                };
                if *integer && !is_integer(n) {
                    problem(not_of_type(value, "integer"));
                }
                if let Some(min) = minimum
                    && below(n, min)
                {
                    problem(format!("{n} is less than the minimum of {min}"));
                }
                if let Some(max) = maximum
                    && below(max, n)
                {
                    problem(format!("{n} is greater than the maximum of {max}"));
                }
            }
        }
    }
}

/// `"a", "b" or "c"`: every choice, as a model needs them all to pick one.
fn one_of(choices: &[Value]) -> String {
    match choices {
        [] => "no value".into(),
        [one] => one.to_string(),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(Value::to_string).collect();
            format!("{} or {last}", rest.join(", "))
        }
    }
}

/// JSON Schema's wording for a value of the wrong type.
fn not_of_type(value: &Value, name: &str) -> String {
    format!("{value} is not of type \"{name}\"")
}

/// Whether `n` is an integer as JSON Schema counts them (`2.0` is one).
fn is_integer(n: &Number) -> bool {
    n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// `a < b`, exactly for two integers of one sign (as doubles otherwise,
/// which orders numbers of different signs exactly too).
fn below(a: &Number, b: &Number) -> bool {
    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
        return a < b;
    }
    if let (Some(a), Some(b)) = (a.as_u64(), b.as_u64()) {
        return a < b;
    }
    a.as_f64().unwrap_or(f64::NAN) < b.as_f64().unwrap_or(f64::NAN)
}

/// The arguments, the required names and whether others are refused, or
/// why `schema` is not an arguments schema.
fn compile(schema: &Value) -> Result<(Vec<Argument>, Vec<String>, bool), String> {
    let root = schema.as_object().ok_or("it is not an object")?;
    let mut arguments = Vec::new();
    let mut required = Vec::new();
    let mut closed = false;
    if root.get("type") != Some(&Value::from("object")) {
        return Err("it does not say `type: object`".into());
    }
    for (keyword, value) in root {
        match keyword.as_str() {
            "type" => {}
            "properties" => {
                let properties = value.as_object().ok_or("`properties` is not an object")?;
                for (name, property) in properties {
                    let kind = kind(property)
                        .map_err(|why| format!("argument `{}`: {why}", truncate_chars(name, 64)))?;
                    arguments.push(Argument {
                        name: name.clone(),
                        kind,
                    });
                }
            }
            "required" => {
                let names = value.as_array().ok_or("`required` is not an array")?;
                for name in names {
                    required.push(name.as_str().ok_or("`required` holds a non-string")?.into());
                }
            }
            "additionalProperties" => {
                closed = !value
                    .as_bool()
                    .ok_or("`additionalProperties` is not a boolean")?;
            }
            k if ANNOTATIONS.contains(&k) => {}
            k => return Err(unsupported(k, value)),
        }
    }
    Ok((arguments, required, closed))
}

/// What one argument's schema asks of its values.
fn kind(property: &Value) -> Result<Kind, String> {
    if is_json_type_schema(property) {
        return match only(property, &["anyOf"]) {
            Some(k) => Err(unsupported(k, &property[k])),
            None => Ok(Kind::Json),
        };
    }
    let map = property.as_object().ok_or("its schema is not an object")?;
    let bound = |keyword: &str| match map.get(keyword) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.clone())),
        Some(other) => Err(unsupported(keyword, other)),
    };
    let kind = match map.get("type") {
        None => Kind::Any,
        Some(t) if t == "string" => Kind::String {
            choices: match map.get("enum") {
                None => None,
                Some(Value::Array(choices)) if choices.iter().all(Value::is_string) => {
                    Some(choices.clone())
                }
                Some(other) => return Err(unsupported("enum", other)),
            },
        },
        Some(t) if t == "boolean" => Kind::Boolean,
        Some(t) if t == "number" || t == "integer" => Kind::Number {
            integer: t == "integer",
            minimum: bound("minimum")?,
            maximum: bound("maximum")?,
        },
        Some(t) if t == "array" => Kind::Array {
            min_items: match map.get("minItems") {
                None => 0,
                Some(n) => n.as_u64().ok_or_else(|| unsupported("minItems", n))?,
            },
            items: Box::new(match map.get("items") {
                None => Kind::Any,
                Some(items) => kind(items).map_err(|why| format!("its items: {why}"))?,
            }),
        },
        Some(other) => return Err(unsupported("type", other)),
    };
    let bounds: &[&str] = match kind {
        Kind::String { .. } => &["type", "enum"],
        Kind::Number { .. } => &["type", "minimum", "maximum"],
        Kind::Array { .. } => &["type", "minItems", "items"],
        _ => &["type"],
    };
    match only(property, bounds) {
        Some(k) => Err(unsupported(k, &property[k])),
        None => Ok(kind),
    }
}

/// The first keyword of `schema` that is neither in `allowed` nor an annotation.
fn only<'a>(schema: &'a Value, allowed: &[&str]) -> Option<&'a str> {
    schema
        .as_object()
        .into_iter()
        .flat_map(Map::keys)
        .map(String::as_str)
        .find(|k| !allowed.contains(k) && !ANNOTATIONS.contains(k))
}

fn unsupported(keyword: &str, value: &Value) -> String {
    format!(
        "`{}: {}` is not part of a `$fromAI` argument schema",
        truncate_chars(keyword, 64),
        truncate_chars(&value.to_string(), 64)
    )
}

pub(crate) fn validate_arguments(schema: &Value, args: &Value) -> Result<(), ArgumentsError> {
    ArgumentsValidator::new(schema)?.validate(args)
}

/// `/name`, escaped as RFC 6901 requires.
fn child(name: &str) -> String {
    format!("/{}", name.replace('~', "~0").replace('/', "~1"))
}

fn limit(message: &str) -> String {
    truncate_chars(message, MAX_PROBLEM_CHARS)
}

/// Renders what the schema asks for, one line per argument.
fn expected_summary(schema: &Value) -> String {
    let mut out = String::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        let _ = write!(
            out,
            "Expected arguments matching this JSON Schema: {schema}"
        );
        return limit_summary(out);
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if properties.is_empty() {
        out.push_str("Expected arguments: none (pass an empty object {}).");
        return out;
    }
    out.push_str("Expected arguments (one JSON object):");
    for (name, prop) in properties {
        let _ = write!(out, "\n- {name}: {}", type_label(prop));
        if required.contains(&name.as_str()) {
            out.push_str(", required");
        } else {
            out.push_str(", optional");
        }
        if let Some(default) = prop.get("default") {
            let _ = write!(
                out,
                " (default {})",
                truncate_chars(&default.to_string(), 100)
            );
        }
        if let Some(d) = prop.get("description").and_then(Value::as_str) {
            let _ = write!(out, ". {}", truncate_chars(d, 300));
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        out.push_str("\nNo other arguments are accepted.");
    }
    limit_summary(out)
}

fn limit_summary(summary: String) -> String {
    truncate_chars(&summary, 8_000)
}

/// ` from 1 to 50`, ` at least 1`, ` at most 50` or nothing.
fn range_label(prop: &Value) -> String {
    match (prop.get("minimum"), prop.get("maximum")) {
        (Some(min), Some(max)) => format!(" from {min} to {max}"),
        (Some(min), None) => format!(" at least {min}"),
        (None, Some(max)) => format!(" at most {max}"),
        (None, None) => String::new(),
    }
}

/// What a value must be: its type, range and choices.
fn type_label(prop: &Value) -> String {
    if is_json_type_schema(prop) {
        return "non-empty JSON object or array".into();
    }
    if let Some(Value::Array(choices)) = prop.get("enum") {
        let choices: Vec<String> = choices.iter().map(Value::to_string).collect();
        return format!("one of [{}]", choices.join(", "));
    }
    if prop.get("type").and_then(Value::as_str) == Some("array") {
        let size = match prop.get("minItems").and_then(Value::as_u64) {
            Some(0) | None => "array".to_owned(),
            Some(1) => "non-empty array".to_owned(),
            Some(n) => format!("array of at least {n} items"),
        };
        return match prop.get("items") {
            Some(items) if items.get("enum").is_some() => {
                format!("{size}, each {}", type_label(items))
            }
            Some(items) if items.get("type").is_some() => {
                format!("{size} of {}", type_label(items))
            }
            _ => size,
        };
    }
    let label = match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any JSON value".into(),
    };
    label + &range_label(prop)
}

//! Checks LLM arguments against the schema and explains failures in a form an
//! LLM can act on: every problem with its JSON pointer, then what was expected.

use std::fmt::Write as _;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::error::{ArgumentProblem, ArgumentsError, truncate_chars};
use super::js::exceeds_depth;
use super::schema::is_json_type_schema;

/// Deepest argument nesting accepted; matches serde_json's own parse limit so
/// anything parsed from text passes, while hand-built monsters cannot overflow
/// the validator's recursion.
pub(crate) const MAX_ARGUMENT_DEPTH: usize = 128;

/// Longest single problem message, so a huge wrong value is not echoed in full.
const MAX_PROBLEM_CHARS: usize = 300;

/// n8n's zod message for the `json` type.
const JSON_TYPE_MESSAGE: &str = "Value must be a non-empty object or a non-empty array";

/// A schema compiled once, for validating many tool calls.
#[derive(Debug)]
pub struct ArgumentsValidator {
    validator: jsonschema::Validator,
    schema: Value,
    expected: String,
}

impl ArgumentsValidator {
    /// Compiles `schema` (as JSON Schema draft 7, the dialect LangChain emits for n8n).
    pub fn new(schema: &Value) -> Result<Self, ArgumentsError> {
        let expected = expected_summary(schema);
        let validator = jsonschema::draft7::options()
            .build(schema)
            .map_err(|e| ArgumentsError {
                problems: vec![ArgumentProblem {
                    path: "/".into(),
                    message: limit(&format!(
                        "the tool's schema itself is invalid ({e}); this is a tool configuration error, not an argument error"
                    )),
                }],
                expected: expected.clone(),
            })?;
        Ok(Self {
            validator,
            schema: schema.clone(),
            expected,
        })
    }

    /// Checks `args`, listing every problem rather than stopping at the first.
    pub fn validate(&self, args: &Value) -> Result<(), ArgumentsError> {
        if exceeds_depth(args, MAX_ARGUMENT_DEPTH) {
            return Err(self.too_deep("/"));
        }
        let problems = {
            let mut problems = Vec::new();
            for error in self.validator.iter_errors(args) {
                describe(&error, &self.schema, &mut problems);
            }
            problems.dedup();
            problems
        };
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ArgumentsError {
                problems,
                expected: self.expected.clone(),
            })
        }
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

pub(crate) fn validate_arguments(schema: &Value, args: &Value) -> Result<(), ArgumentsError> {
    ArgumentsValidator::new(schema)?.validate(args)
}

fn describe(error: &ValidationError<'_>, schema: &Value, out: &mut Vec<ArgumentProblem>) {
    let base = error.instance_path().as_str();
    match error.kind() {
        ValidationErrorKind::Required { property } => out.push(ArgumentProblem {
            path: child(base, &property_name(property)),
            message: "required argument is missing".into(),
        }),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for name in unexpected {
                out.push(ArgumentProblem {
                    path: child(base, name),
                    message: "unexpected argument; only the arguments listed below are accepted"
                        .into(),
                });
            }
        }
        ValidationErrorKind::AnyOf { .. } if failed_keyword_is_json_type(error, schema) => {
            out.push(ArgumentProblem {
                path: display_path(base),
                message: limit(&format!("{JSON_TYPE_MESSAGE}, got {}", error.instance())),
            });
        }
        _ => out.push(ArgumentProblem {
            path: display_path(base),
            message: limit(&error.to_string()),
        }),
    }
}

fn failed_keyword_is_json_type(error: &ValidationError<'_>, schema: &Value) -> bool {
    let keyword_path = error.schema_path().as_str();
    let parent = keyword_path.strip_suffix("/anyOf").unwrap_or(keyword_path);
    schema.pointer(parent).is_some_and(is_json_type_schema)
}

fn property_name(property: &Value) -> String {
    match property {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Appends `name` to a JSON pointer, escaping as RFC 6901 requires.
fn child(base: &str, name: &str) -> String {
    format!("{base}/{}", name.replace('~', "~0").replace('/', "~1"))
}

fn display_path(pointer: &str) -> String {
    if pointer.is_empty() {
        "/".into()
    } else {
        pointer.to_owned()
    }
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
        let _ = write!(out, "\n- {name}: {}{}", type_label(prop), range_label(prop));
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

fn type_label(prop: &Value) -> String {
    if is_json_type_schema(prop) {
        return "non-empty JSON object or array".into();
    }
    match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any JSON value".into(),
    }
}

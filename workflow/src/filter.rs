//! n8n's filter parameter (`type: 'filter'`, version 2): conditions on
//! values, joined by `and` or `or`, as the If node and the Model Selector
//! hold them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The value of a filter parameter (a node reads it as JSON and converts
/// it). Its values are resolved before it is read (`={{ $json.chatInput }}`
/// is the item's text by then).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Filter {
    /// The conditions, in order.
    pub conditions: Vec<Condition>,
    /// `and` (every condition) or `or` (any); `and` when absent.
    pub combinator: Option<String>,
    /// How values are compared.
    pub options: FilterOptions,
}

/// How a filter compares values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FilterOptions {
    /// Whether text comparisons see case (default on).
    pub case_sensitive: bool,
    /// `strict`: a value of the wrong type is an error; `loose`: it is
    /// converted (`"3"` is 3, `"true"` is true).
    pub type_validation: String,
}

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions {
            case_sensitive: true,
            type_validation: "strict".into(),
        }
    }
}

/// One condition: `left_value` against `right_value` by `operator`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    /// The value tested.
    pub left_value: Value,
    /// What it is compared with (unused by one-sided operations).
    pub right_value: Value,
    /// The comparison.
    pub operator: Operator,
}

/// A comparison: the values' type and the operation, as n8n names them
/// (`{"type": "string", "operation": "contains"}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Operator {
    /// `string`, `number`, `boolean`, `array` or `object`.
    #[serde(rename = "type")]
    pub kind: String,
    /// E.g. `equals`, `contains`, `gt`, `exists`, `true`.
    pub operation: String,
}

/// A condition that cannot be evaluated: a value of the wrong type, an
/// operation nodekit does not know, an invalid regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("condition {}: {problem}", .condition + 1)]
pub struct FilterError {
    /// The condition's position, from 0.
    pub condition: usize,
    /// What is wrong.
    pub problem: String,
}

impl Filter {
    /// Whether the values pass the filter. An empty filter passes.
    pub fn matches(&self) -> Result<bool, FilterError> {
        let any = self.combinator.as_deref() == Some("or");
        for (i, condition) in self.conditions.iter().enumerate() {
            let met = condition
                .met(&self.options)
                .map_err(|problem| FilterError {
                    condition: i,
                    problem,
                })?;
            if met == any {
                return Ok(any);
            }
        }
        Ok(!any || self.conditions.is_empty())
    }
}

impl Condition {
    fn met(&self, options: &FilterOptions) -> Result<bool, String> {
        let (left, right) = (&self.left_value, &self.right_value);
        let operation = self.operator.operation.as_str();
        match operation {
            "exists" => return Ok(!left.is_null()),
            "notExists" => return Ok(left.is_null()),
            "empty" => return Ok(is_empty(left)),
            "notEmpty" => return Ok(!is_empty(left)),
            _ => {}
        }
        let loose = options.type_validation == "loose";
        match self.operator.kind.as_str() {
            "string" => {
                let text = |v: &Value, side: &str| as_text(v, loose, side, options.case_sensitive);
                let (l, r) = (text(left, "left")?, text(right, "right")?);
                Ok(match operation {
                    "equals" => l == r,
                    "notEquals" => l != r,
                    "contains" => l.contains(&r),
                    "notContains" => !l.contains(&r),
                    "startsWith" => l.starts_with(&r),
                    "notStartsWith" => !l.starts_with(&r),
                    "endsWith" => l.ends_with(&r),
                    "notEndsWith" => !l.ends_with(&r),
                    "regex" | "notRegex" => {
                        let pattern = as_text(right, loose, "right", true)?;
                        let pattern = regex_of(&pattern, options.case_sensitive)?;
                        pattern.is_match(&l) == (operation == "regex")
                    }
                    other => return Err(unknown("string", other)),
                })
            }
            "number" => {
                let (l, r) = (
                    as_number(left, loose, "left")?,
                    as_number(right, loose, "right")?,
                );
                Ok(match operation {
                    "equals" => l == r,
                    "notEquals" => l != r,
                    "gt" => l > r,
                    "lt" => l < r,
                    "gte" => l >= r,
                    "lte" => l <= r,
                    other => return Err(unknown("number", other)),
                })
            }
            "boolean" => {
                let l = as_bool(left, loose, "left")?;
                Ok(match operation {
                    "true" => l,
                    "false" => !l,
                    "equals" => l == as_bool(right, loose, "right")?,
                    "notEquals" => l != as_bool(right, loose, "right")?,
                    other => return Err(unknown("boolean", other)),
                })
            }
            "array" => {
                let Value::Array(items) = left else {
                    return Err(format!("the left value is not a list: {left}"));
                };
                let length = || as_number(right, true, "right");
                let n = items.len() as f64;
                Ok(match operation {
                    "contains" => items.contains(right),
                    "notContains" => !items.contains(right),
                    "lengthEquals" => n == length()?,
                    "lengthNotEquals" => n != length()?,
                    "lengthGt" => n > length()?,
                    "lengthLt" => n < length()?,
                    "lengthGte" => n >= length()?,
                    "lengthLte" => n <= length()?,
                    other => return Err(unknown("array", other)),
                })
            }
            "" => Err("the condition has no operator type".into()),
            other => Err(format!(
                "values of type `{other}` are not supported here (string, number, boolean and array are)"
            )),
        }
    }
}

fn unknown(kind: &str, operation: &str) -> String {
    format!("`{operation}` is not an operation on {kind} values")
}

/// n8n's "empty": null, `""`, `[]` or `{}`.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn as_text(v: &Value, loose: bool, side: &str, case_sensitive: bool) -> Result<String, String> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other if loose => other.to_string(),
        other => return Err(format!("the {side} value is not text: {other}")),
    };
    Ok(if case_sensitive {
        text
    } else {
        text.to_lowercase()
    })
}

fn as_number(v: &Value, loose: bool, side: &str) -> Result<f64, String> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| format!("the {side} value is out of range")),
        Value::String(s) if loose => s
            .trim()
            .parse()
            .map_err(|_| format!("the {side} value is not a number: {s:?}")),
        other => Err(format!("the {side} value is not a number: {other}")),
    }
}

fn as_bool(v: &Value, loose: bool, side: &str) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if loose && s.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if loose && s.eq_ignore_ascii_case("false") => Ok(false),
        Value::Number(n) if loose => Ok(n.as_f64() != Some(0.0)),
        other => Err(format!("the {side} value is not a boolean: {other}")),
    }
}

/// A regular expression as n8n writes it: `pattern`, or `/pattern/flags`.
fn regex_of(text: &str, case_sensitive: bool) -> Result<regex::Regex, String> {
    let (pattern, flags) = match text.strip_prefix('/').and_then(|t| t.rsplit_once('/')) {
        Some((pattern, flags)) => (pattern, flags),
        None => (text, ""),
    };
    regex::RegexBuilder::new(pattern)
        .case_insensitive(!case_sensitive || flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .build()
        .map_err(|e| format!("{text:?} is not a valid regular expression: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filter(conditions: Value, combinator: &str, options: Value) -> Filter {
        serde_json::from_value(
            json!({"conditions": conditions, "combinator": combinator, "options": options}),
        )
        .unwrap()
    }

    fn one(left: Value, kind: &str, operation: &str, right: Value) -> Value {
        json!([{"leftValue": left, "rightValue": right, "operator": {"type": kind, "operation": operation}}])
    }

    #[test]
    fn operations_on_each_type() {
        let yes = [
            one(json!("Write code"), "string", "contains", json!("code")),
            one(json!("abc"), "string", "startsWith", json!("ab")),
            one(json!("abc"), "string", "notEndsWith", json!("b")),
            one(json!("order-42"), "string", "regex", json!("/ORDER-\\d+/i")),
            one(json!(3), "number", "gt", json!(2)),
            one(json!(2), "number", "lte", json!(2)),
            one(json!(true), "boolean", "true", Value::Null),
            one(json!([1, 2]), "array", "contains", json!(2)),
            one(json!([1, 2]), "array", "lengthGte", json!(2)),
            one(json!(""), "string", "empty", Value::Null),
            one(json!({"a": 1}), "object", "notEmpty", Value::Null),
            one(Value::Null, "string", "notExists", Value::Null),
        ];
        for conditions in yes {
            assert!(
                filter(conditions.clone(), "and", json!({}))
                    .matches()
                    .unwrap(),
                "{conditions}"
            );
        }
        let no = one(json!("Write code"), "string", "equals", json!("write code"));
        assert!(!filter(no.clone(), "and", json!({})).matches().unwrap());
        assert!(
            filter(no, "and", json!({"caseSensitive": false}))
                .matches()
                .unwrap()
        );
    }

    #[test]
    fn and_or_and_the_empty_filter() {
        let both = json!([
            {"leftValue": 1, "rightValue": 1, "operator": {"type": "number", "operation": "equals"}},
            {"leftValue": 1, "rightValue": 2, "operator": {"type": "number", "operation": "equals"}}
        ]);
        assert!(!filter(both.clone(), "and", json!({})).matches().unwrap());
        assert!(filter(both, "or", json!({})).matches().unwrap());
        assert!(Filter::default().matches().unwrap());
        assert!(filter(json!([]), "or", json!({})).matches().unwrap());
    }

    #[test]
    fn strict_types_are_errors_and_loose_ones_converted() {
        let text_number = one(json!("5"), "number", "gt", json!(3));
        let e = filter(text_number.clone(), "and", json!({}))
            .matches()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "condition 1: the left value is not a number: \"5\""
        );
        assert!(
            filter(text_number, "and", json!({"typeValidation": "loose"}))
                .matches()
                .unwrap()
        );
        let e = filter(
            one(json!("a"), "string", "near", json!("b")),
            "and",
            json!({}),
        )
        .matches()
        .unwrap_err();
        assert!(
            e.problem
                .contains("`near` is not an operation on string values"),
            "{e}"
        );
        let e = filter(
            one(json!("a"), "string", "regex", json!("(")),
            "and",
            json!({}),
        )
        .matches()
        .unwrap_err();
        assert!(e.problem.contains("not a valid regular expression"), "{e}");
        let e = filter(
            one(
                json!("2026-01-01"),
                "dateTime",
                "after",
                json!("2025-01-01"),
            ),
            "and",
            json!({}),
        )
        .matches()
        .unwrap_err();
        assert!(e.problem.contains("`dateTime` are not supported"), "{e}");
    }
}

//! JSON Schema for the collected calls, equivalent to the zod object n8n hands to
//! LangChain, plus n8n's tool-name rule.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::js::js_trim;
use super::{FromAiCall, FromAiType};
use crate::description::{ArgumentBounds, number_to_json};

/// OpenAI's limit on function names, which n8n enforces.
const MAX_TOOL_NAME_LEN: usize = 64;

pub(crate) fn arguments_schema(calls: &[FromAiCall]) -> Value {
    let mut properties = Map::new();
    let mut optional = HashSet::new();
    for call in calls {
        // n8n's `reduce` into a JavaScript object runs the prototype's setter
        // for `__proto__`, so that key never reaches its schema.
        if call.key == "__proto__" {
            continue;
        }
        // Same as n8n's `reduce` into an object: a repeated key keeps its first
        // position and takes the later definition.
        properties.insert(call.key.clone(), property_schema(call));
        if call.default.as_ref().is_some_and(|d| fits(call.ty, d)) {
            optional.insert(call.key.as_str());
        } else {
            optional.remove(call.key.as_str());
        }
    }
    let required: Vec<Value> = properties
        .keys()
        .filter(|k| !optional.contains(k.as_str()))
        .map(|k| Value::String(k.clone()))
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(schema)
}

/// Narrows each argument that `bounds` names to what its field accepts: a
/// `number` to the field's integer type and range, a `string` to its
/// choices, a `json` list to an array of them. Each narrowing only refuses
/// values that n8n's type allows; other arguments keep n8n's schema.
pub(crate) fn apply_bounds(schema: &mut Value, bounds: &[&ArgumentBounds]) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for b in bounds {
        let Some(Value::Object(prop)) = properties.get_mut(&b.key) else {
            continue;
        };
        match prop.get("type").and_then(Value::as_str) {
            Some("number") => {
                if b.integer {
                    prop.insert("type".into(), "integer".into());
                }
                for (keyword, bound) in [("minimum", b.minimum), ("maximum", b.maximum)] {
                    if let Some(x) = bound {
                        prop.insert(keyword.into(), number_to_json(x));
                    }
                }
            }
            Some("string") if !b.choices.is_empty() && !b.list => {
                prop.insert("enum".into(), choices(b));
            }
            None if !b.choices.is_empty()
                && b.list
                && prop.get("anyOf") == type_schema(FromAiType::Json).get("anyOf") =>
            {
                // n8n's `json` is a non-empty object or array; a list of
                // choices is the non-empty array, item by item.
                let mut list = Map::new();
                list.insert("type".into(), "array".into());
                list.insert("minItems".into(), 1.into());
                list.insert(
                    "items".into(),
                    json!({"type": "string", "enum": choices(b)}),
                );
                for (keyword, value) in std::mem::take(prop) {
                    if keyword != "anyOf" {
                        list.insert(keyword, value);
                    }
                }
                *prop = list;
            }
            _ => {}
        }
    }
}

fn choices(b: &ArgumentBounds) -> Value {
    b.choices.iter().cloned().map(Value::String).collect()
}

/// Whether `default` is a value of `ty`: only then does it make the argument
/// optional. n8n shows a default that is not (a `number` defaulting to
/// `'lots'`) and keeps the argument required, since zod would check the
/// default against the type when the argument is left out.
fn fits(ty: FromAiType, default: &Value) -> bool {
    match ty {
        FromAiType::String => default.is_string(),
        // `Infinity` is a number to zod; JSON writes it as `null`.
        FromAiType::Number => default.is_number() || default.is_null(),
        FromAiType::Boolean => default.is_boolean(),
        FromAiType::Json => match default {
            Value::Object(m) => !m.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => false,
        },
    }
}

fn property_schema(call: &FromAiCall) -> Value {
    let mut prop = match type_schema(call.ty) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    // n8n describes with `${''} ${description}`.trim(), and an empty zod
    // description is left out of the JSON Schema.
    if let Some(d) = &call.description {
        let d = js_trim(d);
        if !d.is_empty() {
            prop.insert("description".into(), Value::String(d.to_owned()));
        }
    }
    if let Some(default) = &call.default {
        prop.insert("default".into(), default.clone());
    }
    Value::Object(prop)
}

/// Schema for one type. `json` is n8n's custom zod check "a non-empty object or
/// a non-empty array", written out as the `anyOf` n8n attaches as its JSON Schema.
pub(crate) fn type_schema(ty: FromAiType) -> Value {
    match ty {
        FromAiType::String => json!({"type": "string"}),
        FromAiType::Number => json!({"type": "number"}),
        FromAiType::Boolean => json!({"type": "boolean"}),
        FromAiType::Json => json!({
            "anyOf": [
                {"type": "object", "minProperties": 1, "additionalProperties": true},
                {"type": "array", "minItems": 1}
            ]
        }),
    }
}

/// Whether `schema` is the `json` type's `anyOf`, so messages can use n8n's wording.
pub(crate) fn is_json_type_schema(schema: &Value) -> bool {
    schema.get("anyOf") == type_schema(FromAiType::Json).get("anyOf")
}

pub(crate) fn tool_name(node_name: &str) -> String {
    let mut out = String::with_capacity(node_name.len());
    let mut in_run = false;
    for c in node_name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            // n8n replaces each run of other characters, not each character.
            out.push('_');
            in_run = true;
        }
    }
    if out.len() > MAX_TOOL_NAME_LEN {
        out.truncate(MAX_TOOL_NAME_LEN);
        let trimmed = out.trim_end_matches(['_', '-']).len();
        out.truncate(trimmed);
    }
    out
}

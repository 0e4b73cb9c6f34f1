//! n8n's `$fromAI(key, description?, type?, defaultValue?)` placeholders: parse
//! them out of node parameters, turn them into a tool's JSON Schema, validate an
//! LLM's arguments, and put the arguments back into the parameters.
//!
//! Behaviour follows n8n (`n8n-workflow` `from-ai-parse-utils`, `tool-helpers`,
//! `n8n-core` `create-node-as-tool`, and the `$fromAI` run-time resolver),
//! including its quirks, so a workflow behaves the same in nodekit and in n8n.
//! Where the schemas differ, on purpose:
//!
//! - A `json` argument's property is n8n's check written out as JSON Schema,
//!   `anyOf` a non-empty object or a non-empty array. n8n enforces the same
//!   rule when it parses the arguments but shows the model no `type` at all
//!   (its zod-to-JSON-Schema step cannot see inside a custom check): nodekit
//!   tells the model up front what n8n would refuse afterwards, and accepts
//!   exactly what n8n accepts.
//! - A key named `__proto__` is left out of the schema, as in n8n (where it
//!   is a JavaScript artifact: setting it on an object replaces the
//!   prototype). A tool whose parameters use it cannot be called in either;
//!   nodekit says so (`FromAiError::ReservedKey`) where n8n fails at run time.
//!
//! ```
//! use nodekit::from_ai;
//! use serde_json::json;
//!
//! let params = json!({
//!     "limit": "={{ $fromAI('limit', 'How many rows', 'number', 10) }}",
//!     "greeting": "=Hello {{ $fromAI('name', 'Who to greet') }}!"
//! });
//! let calls = from_ai::collect_calls(&params).unwrap();
//! let schema = from_ai::arguments_schema(&calls);
//! assert_eq!(schema["required"], json!(["name"]));
//!
//! let args = json!({"name": "Ada"});
//! let resolved = from_ai::substitute(&params, args.as_object().unwrap()).unwrap();
//! assert_eq!(resolved, json!({"limit": 10, "greeting": "Hello Ada!"}));
//! ```

mod collect;
mod error;
pub(crate) mod js;

pub(crate) use js::js_number_to_string;
mod parse;
mod schema;
mod substitute;
mod validate;

#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use error::{ArgumentProblem, ArgumentsError, FromAiError, ParseTypeError};
pub use substitute::Substitution;
pub use validate::ArgumentsValidator;

/// Deepest parameter nesting (objects and arrays) walked before giving up.
pub const MAX_DEPTH: usize = 64;

/// Longest string, in bytes, searched for `$fromAI` calls.
pub const MAX_TEXT_LEN: usize = 1024 * 1024;

/// Longest key n8n accepts.
pub const MAX_KEY_LEN: usize = nodekit_rules::MAX_FROM_AI_KEY_LEN;

/// How many times one string may be rescanned by nested `$fromAI(` calls,
/// which keeps parsing linear in the input length.
pub const MAX_RESCAN_FACTOR: usize = 16;

/// Comment n8n's editor puts before generated `$fromAI` calls; it is ignored.
pub const FROM_AI_AUTO_GENERATED_MARKER: &str = "/*n8n-auto-generated-fromAI-override*/";

/// The four argument types n8n allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FromAiType {
    /// Text; the default when no type is given.
    #[default]
    String,
    /// Any JSON number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A non-empty JSON object or a non-empty array.
    Json,
}

impl FromAiType {
    /// The lowercase name n8n uses (`"string"`, `"number"`, `"boolean"`, `"json"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Json => "json",
        }
    }
}

impl fmt::Display for FromAiType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FromAiType {
    type Err = ParseTypeError;

    /// Case-insensitive, like n8n (`'Number'` is `number`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::String, Self::Number, Self::Boolean, Self::Json]
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseTypeError(s.to_owned()))
    }
}

/// One parsed `$fromAI(key, description?, type?, defaultValue?)` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FromAiCall {
    /// Argument name the LLM fills in.
    pub key: String,
    /// Second argument; `Some("")` and `None` differ, as in n8n's duplicate check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Third argument, `string` when absent.
    #[serde(rename = "type")]
    pub ty: FromAiType,
    /// Fourth argument, converted per type; it makes the argument optional
    /// when it is a value of the type (n8n keeps `$fromAI('n', '', 'number',
    /// 'lots')` required, with the default shown).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub default: Option<Value>,
}

/// Keeps an explicit `null` default as `Some(Value::Null)`; serde would read it as `None`.
fn present_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Every `$fromAI` call inside one string (several calls allowed), n8n's rules and messages.
pub fn parse_calls(text: &str) -> Result<Vec<FromAiCall>, FromAiError> {
    let calls = parse::extract_calls(text, "")?;
    for call in &calls {
        parse::check_key(&call.key, "")?;
    }
    Ok(calls)
}

/// Walk arbitrary parameter JSON (objects, arrays, nested) and collect all calls, merging identical duplicates, erroring on conflicting ones (n8n's rule), deterministic order = first appearance.
pub fn collect_calls(params: &Value) -> Result<Vec<FromAiCall>, FromAiError> {
    collect::collect(params)
}

/// JSON Schema (`type: object`, properties in call order, `required` for calls without a default of their type, `additionalProperties: false`) usable as OpenAI function `parameters`.
pub fn arguments_schema(calls: &[FromAiCall]) -> Value {
    schema::arguments_schema(calls)
}

/// n8n's `nodeNameToToolName`: runs of characters outside `[a-zA-Z0-9_-]` become `_`, cut to 64.
///
/// The result can be empty (empty name, or only `_`/`-` past the cut); n8n then
/// uses the node type's name instead.
pub fn tool_name(node_name: &str) -> String {
    schema::tool_name(node_name)
}

/// Validates LLM arguments against `schema`, an arguments schema as
/// [`arguments_schema`] writes it (a schema with other keywords is refused);
/// the error's `Display` tells the LLM what to fix.
pub fn validate_arguments(schema: &Value, args: &Value) -> Result<(), ArgumentsError> {
    validate::validate_arguments(schema, args)
}

/// Validates `args` against the parameters' schema, then replaces every `$fromAI` expression with its typed argument value.
///
/// Validation is done here (a schema is built from `params`), so raw LLM
/// arguments can be passed straight in. Omitted optional arguments take their
/// default. A parameter that is exactly `={{ $fromAI(...) }}` receives the JSON
/// value itself; inside a larger template (`=Hi {{ $fromAI('name') }}`) the
/// value is rendered as JavaScript would (numbers as JS prints them, objects as
/// `[object Object]`, arrays comma-joined), exactly as n8n does. Strings not
/// starting with `=` are literals and stay untouched; other `=` strings lose
/// their `=` as n8n's evaluation would. Any `{{ }}` block other than one
/// `$fromAI` call with literal arguments is `FromAiError::UnsupportedExpression`.
pub fn substitute(params: &Value, args: &Map<String, Value>) -> Result<Value, FromAiError> {
    substitute::substitute(params, args)
}

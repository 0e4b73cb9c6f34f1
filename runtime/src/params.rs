//! Node parameters: the [`Params`] trait that `#[ai_node]` and
//! `#[derive(NodeParams)]` implement, the mapping from Rust types to n8n
//! property types (through `schemars`), and typed extraction from a node's
//! JSON parameter values.
//!
//! Type mapping (the field's `JsonSchema` decides):
//!
//! | Rust type | n8n property |
//! | --- | --- |
//! | `String`, `&str`-like | `string` (`dateTime` for date-time formats) |
//! | integers, floats | `number`, bounds from the type (`u32` → `minValue: 0`) and from `min`/`max` |
//! | `bool` | `boolean` |
//! | unit-variant enum (serde + schemars) | `options`; doc comments → option descriptions, `#[schemars(title)]` → option names |
//! | `Vec<enum>` | `multiOptions` |
//! | `Vec<String>`, `Vec<number>` | `string`/`number` with `multipleValues` |
//! | `Option<T>` | as `T`, not required; `None` when absent |
//! | `serde_json::Value`, maps, other objects | `json` |
//! | a `#[derive(NodeParams)]` struct with `#[param(collection)]` | `collection` |
//! | `Vec<S>` of such a struct with `#[param(fixed_collection)]` | `fixedCollection` |

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::description::{
    DisplayOptions, NodeDescription, NodeProperty, Number, OptionChoice, PropertyGroup,
    PropertyOption, PropertyType, TypeOptions, number_to_json,
};
use crate::error::{Error, Result, describe_value, shorten};

/// A set of node parameters; implemented by `#[ai_node]` structs and by
/// `#[derive(NodeParams)]` structs used as collections.
pub trait Params: Sized {
    /// The n8n properties, in declaration order.
    fn properties() -> Vec<NodeProperty>;

    /// Builds the value from a JSON object of parameter values, applying
    /// defaults; `at` locates the object for error messages.
    fn from_params_at(values: &Map<String, Value>, at: &Location<'_>) -> Result<Self>;

    /// Builds the value from a node's parameter JSON; `node` names it in errors.
    fn from_params(values: &Value, node: &str) -> Result<Self> {
        match values {
            Value::Object(map) => Self::from_params_at(map, &Location::root(node)),
            other => Err(Error::ParametersNotObject {
                node: node.to_owned(),
                found: describe_value(other),
            }),
        }
    }
}

/// A node type: its parameters plus its n8n description.
pub trait Node: Params {
    /// The node's internal name, e.g. `memoryRedis`.
    const NAME: &'static str;

    /// The node's description, built once and cached.
    fn description() -> &'static NodeDescription;
}

/// Where a parameter sits: the node and the path inside its parameters.
#[derive(Debug, Clone)]
pub struct Location<'a> {
    node: &'a str,
    path: Cow<'a, str>,
}

impl<'a> Location<'a> {
    /// The top of a node's parameters.
    pub fn root(node: &'a str) -> Self {
        Location {
            node,
            path: Cow::Borrowed(""),
        }
    }

    /// The location of the named child.
    pub fn field(&self, name: &str) -> Location<'a> {
        let path = if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        };
        Location {
            node: self.node,
            path: Cow::Owned(path),
        }
    }

    /// The location of the `i`-th element.
    pub fn index(&self, i: usize) -> Location<'a> {
        Location {
            node: self.node,
            path: Cow::Owned(format!("{}[{i}]", self.path)),
        }
    }

    /// The node this location belongs to.
    pub fn node(&self) -> &str {
        self.node
    }

    /// The dotted parameter path.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn missing(&self) -> Error {
        Error::MissingParameter {
            node: self.node.to_owned(),
            path: self.path.to_string(),
        }
    }
}

/// What a generated property needs besides its Rust type.
///
/// Generated code fills the fields it knows and takes the rest from
/// [`PropertySpec::new`]; the runtime adds what the type's schema says.
#[derive(Debug, Clone)]
pub struct PropertySpec {
    /// Parameter name in the node's JSON.
    pub name: &'static str,
    /// Label in the editor.
    pub display_name: &'static str,
    /// Help text (from the doc comment).
    pub description: Option<&'static str>,
    /// Default value, already as JSON.
    pub default: Option<Value>,
    /// Marked required in the editor.
    pub required: bool,
    /// Property type forced by the author instead of the one the type implies.
    pub kind: Option<PropertyType>,
    /// Inline choices for a string parameter.
    pub options: &'static [&'static str],
    /// Smallest number allowed.
    pub min: Option<f64>,
    /// Largest number allowed.
    pub max: Option<f64>,
    /// Digits after the decimal point.
    pub precision: Option<u32>,
    /// Hide the typed value.
    pub password: bool,
    /// Height of a text field.
    pub rows: Option<u32>,
    /// Placeholder text.
    pub placeholder: Option<&'static str>,
    /// Hint below the field.
    pub hint: Option<&'static str>,
    /// Disallow expressions.
    pub no_data_expression: bool,
    /// Method that loads options at edit time.
    pub load_options_method: Option<&'static str>,
    /// When the parameter is shown.
    pub display_options: Option<DisplayOptions>,
    /// The LLM fills this parameter through `$fromAI`.
    pub from_ai: Option<FromAiSpec>,
    /// Nested properties of a collection.
    pub nested: Nested,
}

/// How a `#[from_ai]` field's default expression is written.
#[derive(Debug, Clone)]
pub struct FromAiSpec {
    /// The argument key; the parameter name when not given.
    pub key: Option<&'static str>,
    /// What the LLM is told; the parameter's description when not given.
    pub description: Option<&'static str>,
    /// `string`, `number`, `boolean` or `json`; from the field type when not given.
    pub ty: Option<&'static str>,
    /// Value used when the LLM leaves the argument out.
    pub default: Option<Value>,
}

/// Nested properties of a parameter.
#[derive(Debug, Clone, Copy)]
pub enum Nested {
    /// A plain parameter.
    None,
    /// A `collection` whose options are these properties.
    Collection(fn() -> Vec<NodeProperty>),
    /// A repeatable `fixedCollection` group of these properties.
    FixedCollection(fn() -> Vec<NodeProperty>),
}

/// Name of the one group of a fixed collection generated from `Vec<S>`.
pub const FIXED_COLLECTION_GROUP: &str = "values";

impl PropertySpec {
    /// A spec with nothing set.
    pub const fn new(name: &'static str, display_name: &'static str) -> Self {
        PropertySpec {
            name,
            display_name,
            description: None,
            default: None,
            required: false,
            kind: None,
            options: &[],
            min: None,
            max: None,
            precision: None,
            password: false,
            rows: None,
            placeholder: None,
            hint: None,
            no_data_expression: false,
            load_options_method: None,
            display_options: None,
            from_ai: None,
            nested: Nested::None,
        }
    }
}

/// What a Rust type's JSON schema says about the property.
#[derive(Debug, Clone)]
struct Shape {
    kind: PropertyType,
    choices: Option<Vec<OptionChoice>>,
    min: Option<f64>,
    max: Option<f64>,
    multiple: bool,
}

impl Shape {
    fn of(kind: PropertyType) -> Self {
        Shape {
            kind,
            choices: None,
            min: None,
            max: None,
            multiple: false,
        }
    }

    fn zero(&self) -> Value {
        if self.multiple {
            return Value::Array(vec![]);
        }
        match self.kind {
            PropertyType::Number => Value::from(0),
            PropertyType::Boolean => Value::Bool(false),
            PropertyType::Options => self
                .choices
                .as_ref()
                .and_then(|c| c.first())
                .map_or(Value::from(""), |c| c.value.clone()),
            PropertyType::MultiOptions => Value::Array(vec![]),
            PropertyType::Json => Value::from("{}"),
            PropertyType::Collection | PropertyType::FixedCollection => Value::Object(Map::new()),
            _ => Value::from(""),
        }
    }
}

/// The JSON schema of `T`, with every subschema inlined.
pub fn schema_of<T: JsonSchema + ?Sized>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn shape_of(schema: &Value) -> Shape {
    let Some(obj) = schema.as_object() else {
        return Shape::of(PropertyType::Json);
    };
    // `Option<T>` and nullable types: drop the null alternative.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = obj.get(key) {
            let non_null: Vec<&Value> = alts.iter().filter(|a| !is_null_schema(a)).collect();
            if non_null.len() == 1 && non_null.len() < alts.len() {
                return shape_of(non_null[0]);
            }
        }
    }
    if let Some(choices) = choices_of(obj) {
        return Shape {
            choices: Some(choices),
            ..Shape::of(PropertyType::Options)
        };
    }
    let ty: &str = match obj.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(ts)) => {
            let mut non_null = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            match (non_null.next(), non_null.next()) {
                (Some(one), None) => one,
                _ => return Shape::of(PropertyType::Json),
            }
        }
        _ => return Shape::of(PropertyType::Json),
    };
    match ty {
        "string" => match obj.get("format").and_then(Value::as_str) {
            Some("date-time") => Shape::of(PropertyType::DateTime),
            _ => Shape::of(PropertyType::String),
        },
        "integer" | "number" => Shape {
            min: obj.get("minimum").and_then(Value::as_f64),
            max: obj.get("maximum").and_then(Value::as_f64),
            ..Shape::of(PropertyType::Number)
        },
        "boolean" => Shape::of(PropertyType::Boolean),
        "array" => {
            let items = shape_of(obj.get("items").unwrap_or(&Value::Bool(true)));
            match items.kind {
                PropertyType::Options => Shape {
                    kind: PropertyType::MultiOptions,
                    ..items
                },
                PropertyType::String | PropertyType::Number if !items.multiple => Shape {
                    multiple: true,
                    ..items
                },
                _ => Shape::of(PropertyType::Json),
            }
        }
        _ => Shape::of(PropertyType::Json),
    }
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
        || v.get("const").is_some_and(Value::is_null)
}

/// Choices of an enum schema: `enum: [...]` or `oneOf` of `const`s.
fn choices_of(obj: &Map<String, Value>) -> Option<Vec<OptionChoice>> {
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    if let Some(Value::Array(values)) = obj.get("enum")
        && values.iter().all(scalar)
        && !values.is_empty()
    {
        return Some(
            values
                .iter()
                .map(|v| choice(v.clone(), None, None))
                .collect(),
        );
    }
    let alts = obj.get("oneOf").or_else(|| obj.get("anyOf"))?.as_array()?;
    let mut out = Vec::with_capacity(alts.len());
    for alt in alts {
        let value = alt
            .get("const")
            .cloned()
            .or_else(|| match alt.get("enum") {
                Some(Value::Array(v)) if v.len() == 1 => Some(v[0].clone()),
                _ => None,
            })?;
        if !scalar(&value) {
            return None;
        }
        let text = |k: &str| alt.get(k).and_then(Value::as_str).map(str::to_owned);
        out.push(choice(value, text("title"), text("description")));
    }
    (!out.is_empty()).then_some(out)
}

fn choice(value: Value, name: Option<String>, description: Option<String>) -> OptionChoice {
    let name = name.unwrap_or_else(|| match &value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    OptionChoice {
        name,
        value,
        description,
        action: None,
    }
}

/// Builds the n8n property of a parameter of type `T` (the inner type for `Option<T>`).
pub fn property<T: JsonSchema + ?Sized>(spec: PropertySpec) -> NodeProperty {
    let mut shape = match spec.nested {
        Nested::None => shape_of(&schema_of::<T>()),
        Nested::Collection(_) => Shape::of(PropertyType::Collection),
        Nested::FixedCollection(_) => Shape::of(PropertyType::FixedCollection),
    };
    if !spec.options.is_empty() {
        shape.kind = PropertyType::Options;
        shape.choices = Some(
            spec.options
                .iter()
                .map(|o| choice(Value::from(*o), None, None))
                .collect(),
        );
    }
    if let Some(kind) = spec.kind {
        shape.kind = kind;
    }
    let options = match spec.nested {
        Nested::None => shape
            .choices
            .clone()
            .map(|cs| cs.into_iter().map(PropertyOption::Choice).collect()),
        Nested::Collection(props) => Some(
            props()
                .into_iter()
                .map(|p| PropertyOption::Property(Box::new(p)))
                .collect(),
        ),
        Nested::FixedCollection(props) => Some(vec![PropertyOption::Group(PropertyGroup {
            display_name: spec.display_name.to_owned(),
            name: FIXED_COLLECTION_GROUP.to_owned(),
            values: props(),
        })]),
    };
    let type_options = TypeOptions {
        min_value: spec.min.or(shape.min).map(Number),
        max_value: spec.max.or(shape.max).map(Number),
        number_precision: spec.precision,
        password: spec.password.then_some(true),
        rows: spec.rows,
        multiple_values: (shape.multiple || matches!(spec.nested, Nested::FixedCollection(_)))
            .then_some(true),
        load_options_method: spec.load_options_method.map(str::to_owned),
    };
    let implicit_default = spec.from_ai.is_none() && spec.default.is_none();
    let default = match &spec.from_ai {
        Some(ai) => Value::String(from_ai_expression(ai, &spec, &shape)),
        None => spec.default.clone().unwrap_or_else(|| shape.zero()),
    };
    NodeProperty {
        display_name: spec.display_name.to_owned(),
        name: spec.name.to_owned(),
        kind: shape.kind,
        type_options: type_options.non_empty(),
        default,
        required: spec.required,
        description: spec.description.map(str::to_owned),
        hint: spec.hint.map(str::to_owned),
        placeholder: spec.placeholder.map(str::to_owned),
        no_data_expression: spec.no_data_expression,
        display_options: spec.display_options,
        options,
        implicit_default,
    }
}

/// The `$fromAI` type an LLM argument of this property type has.
pub fn from_ai_type(kind: PropertyType) -> &'static str {
    match kind {
        PropertyType::Number => "number",
        PropertyType::Boolean => "boolean",
        PropertyType::Json
        | PropertyType::Collection
        | PropertyType::FixedCollection
        | PropertyType::MultiOptions => "json",
        _ => "string",
    }
}

/// Writes `={{ $fromAI('key', 'description', 'type', default) }}`.
fn from_ai_expression(ai: &FromAiSpec, spec: &PropertySpec, shape: &Shape) -> String {
    let key = ai.key.unwrap_or(spec.name);
    let description = ai.description.or(spec.description).unwrap_or("");
    // A list is one JSON argument, whatever its items are.
    let ty = ai.ty.unwrap_or_else(|| {
        if shape.multiple {
            "json"
        } else {
            from_ai_type(shape.kind)
        }
    });
    let mut call = format!(
        "$fromAI({}, {}, {}",
        quote_js(key),
        quote_js(description),
        quote_js(ty)
    );
    if let Some(default) = &ai.default {
        call.push_str(", ");
        match default {
            Value::String(s) => call.push_str(&quote_js(s)),
            other => call.push_str(&other.to_string()),
        }
    }
    format!("={{{{ {call}) }}}}")
}

/// A single-quoted JavaScript string literal.
fn quote_js(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

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
/// an error, because something should have resolved it.
pub fn lookup<'v>(
    values: &'v Map<String, Value>,
    name: &str,
    at: &Location<'_>,
) -> Result<Option<Cow<'v, Value>>> {
    match values.get(name) {
        None => Ok(None),
        Some(Value::String(s)) if s.starts_with('=') => match plain_template(s) {
            Some(text) => Ok(Some(Cow::Owned(Value::String(text.to_owned())))),
            None => Err(unresolved(s, at, name)),
        },
        Some(v) => Ok(Some(Cow::Borrowed(v))),
    }
}

fn unresolved(expression: &str, parent: &Location<'_>, name: &str) -> Error {
    Error::UnresolvedExpression {
        node: parent.node.to_owned(),
        path: parent.field(name).path.into_owned(),
        expression: shorten(expression, 80),
    }
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
            parsed = serde_json::from_str::<Value>(text).map_err(|e| Error::WrongType {
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
            return Err(Error::OutOfRange {
                node: parent.node.to_owned(),
                path: at().path.into_owned(),
                value: n.to_string(),
                range: describe_range(checks.min, checks.max),
            });
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
    Error::UnresolvedExpression {
        node: parent.node.to_owned(),
        path: parent.field(name).path.into_owned(),
        expression: "$fromAI(...) (the LLM fills it: run the node as a tool with arguments)".into(),
    }
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

/// Converts a fixed-collection value `{ "values": [ {..}, .. ] }`.
pub fn convert_fixed<T: Params>(value: &Value, at: &Location<'_>) -> Result<Vec<T>> {
    let expected = || format!("an object with a `{FIXED_COLLECTION_GROUP}` list of entries");
    let Value::Object(map) = value else {
        return Err(wrong_type(value, at, expected));
    };
    match map.get(FIXED_COLLECTION_GROUP) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            let group = at.field(FIXED_COLLECTION_GROUP);
            items
                .iter()
                .enumerate()
                .map(|(i, item)| convert_nested(item, &group.index(i)))
                .collect()
        }
        Some(other) => Err(wrong_type(other, at, expected)),
    }
}

/// The error for a required parameter without value.
pub fn missing(name: &str, at: &Location<'_>) -> Error {
    at.field(name).missing()
}

fn wrong_type(value: &Value, at: &Location<'_>, expected: impl FnOnce() -> String) -> Error {
    Error::WrongType {
        node: at.node.to_owned(),
        path: at.path.to_string(),
        expected: expected(),
        found: describe_value(value),
    }
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

/// Fills missing parameters with the defaults their authors declared and
/// drops those that `displayOptions` hide, as n8n does before a node runs.
///
/// Display conditions see every sibling's value, its default when absent.
pub fn with_defaults(
    properties: &[NodeProperty],
    values: &Map<String, Value>,
    version: f64,
) -> Map<String, Value> {
    let current = |name: &str| -> Option<Value> {
        values.get(name).cloned().or_else(|| {
            properties
                .iter()
                .find(|p| p.name == name)
                .map(|p| p.default.clone())
        })
    };
    properties
        .iter()
        .filter(|p| p.kind != PropertyType::Notice)
        .filter(|p| {
            p.display_options
                .as_ref()
                .is_none_or(|d| d.is_shown(current, version))
        })
        .filter_map(|p| {
            let value = match values.get(&p.name) {
                Some(v) => v.clone(),
                None if p.implicit_default => return None,
                None => p.default.clone(),
            };
            Some((p.name.clone(), value))
        })
        .collect()
}

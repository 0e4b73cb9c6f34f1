//! The n8n property of a parameter, built from its Rust type's JSON schema
//! and what the macro read from the field's attributes.

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::description::{
    ArgumentBounds, DisplayOptions, NodeProperty, Number, OptionChoice, PropertyGroup,
    PropertyOption, PropertyType, TypeOptions,
};

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
    FixedCollection(fn() -> Vec<NodeProperty>, &'static str),
}

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
pub(super) struct Shape {
    pub(super) kind: PropertyType,
    pub(super) choices: Option<Vec<OptionChoice>>,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    /// The schema's `integer` (a Rust integer type).
    pub(super) integer: bool,
    pub(super) multiple: bool,
}

impl Shape {
    fn of(kind: PropertyType) -> Self {
        Shape {
            kind,
            choices: None,
            min: None,
            max: None,
            integer: false,
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

pub(super) fn shape_of(schema: &Value) -> Shape {
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
            integer: ty == "integer",
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
        Nested::FixedCollection(..) => Shape::of(PropertyType::FixedCollection),
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
        Nested::FixedCollection(props, group) => Some(vec![PropertyOption::Group(PropertyGroup {
            display_name: spec.display_name.to_owned(),
            name: group.to_owned(),
            values: props(),
        })]),
    };
    let type_options = TypeOptions {
        min_value: spec.min.or(shape.min).map(Number),
        max_value: spec.max.or(shape.max).map(Number),
        number_precision: spec.precision,
        password: spec.password.then_some(true),
        rows: spec.rows,
        multiple_values: (shape.multiple || matches!(spec.nested, Nested::FixedCollection(..)))
            .then_some(true),
        load_options_method: spec.load_options_method.map(str::to_owned),
    };
    let implicit_default = spec.from_ai.is_none() && spec.default.is_none();
    let default = match &spec.from_ai {
        Some(ai) => Value::String(from_ai_expression(ai, &spec, &shape)),
        None => spec.default.clone().unwrap_or_else(|| shape.zero()),
    };
    let argument_bounds = spec
        .from_ai
        .as_ref()
        .and_then(|ai| argument_bounds(ai, &spec, &shape));
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
        argument_bounds,
    }
}

/// What a `$fromAI` argument of this field carries into the tool's schema
/// beyond its n8n type, when there is anything: a number's integer type and
/// bounds, an options or multiOptions field's choices.
fn argument_bounds(ai: &FromAiSpec, spec: &PropertySpec, shape: &Shape) -> Option<ArgumentBounds> {
    let key = ai.key.unwrap_or(spec.name).to_owned();
    // A `type` written in `#[from_ai]` that differs from the field's own
    // makes another argument, which the field's schema does not describe.
    let typed_as = |ty: &str| ai.ty.is_none_or(|t| t == ty);
    match shape.kind {
        PropertyType::Number if !shape.multiple && typed_as("number") => {
            let bounds = ArgumentBounds {
                key,
                integer: shape.integer,
                minimum: spec.min.or(shape.min),
                maximum: spec.max.or(shape.max),
                ..ArgumentBounds::default()
            };
            (bounds.integer || bounds.minimum.is_some() || bounds.maximum.is_some())
                .then_some(bounds)
        }
        PropertyType::Options if !shape.multiple && typed_as("string") => Some(ArgumentBounds {
            key,
            choices: string_choices(shape)?,
            ..ArgumentBounds::default()
        }),
        PropertyType::MultiOptions if typed_as("json") => Some(ArgumentBounds {
            key,
            choices: string_choices(shape)?,
            list: true,
            ..ArgumentBounds::default()
        }),
        _ => None,
    }
}

/// The choices' values when every one is a string: the model sends a
/// `string` (or a list of them), which another value could never equal.
fn string_choices(shape: &Shape) -> Option<Vec<String>> {
    let choices = shape.choices.as_ref().filter(|c| !c.is_empty())?;
    choices
        .iter()
        .map(|c| c.value.as_str().map(str::to_owned))
        .collect()
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

//! The node-description model: Rust types that serialise to exactly n8n's
//! `INodeTypeDescription` JSON (the objects in n8n's `types/nodes.json`).
//!
//! Optional keys are omitted when unset, and keys come out in the order the
//! fields are declared here, so the JSON is deterministic and diffable.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod kind;

pub use kind::{NodeKind, NodeSpec};

/// A JSON number that prints integral values without a fraction (`1`, not
/// `1.0`), as n8n's TypeScript descriptions do.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Number(pub f64);

impl Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        number_to_json(self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(Number)
    }
}

impl From<f64> for Number {
    fn from(v: f64) -> Self {
        Number(v)
    }
}

/// Converts a float to JSON, as an integer when it has no fraction.
pub fn number_to_json(v: f64) -> Value {
    // 2^53: beyond it an f64 no longer holds every integer exactly.
    if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// The description of one node type, as n8n's `INodeTypeDescription`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NodeDescription {
    /// Name shown in the editor, e.g. `Redis Memory`.
    pub display_name: String,
    /// Internal name, unique within its package, e.g. `memoryRedis`.
    pub name: String,
    /// Icon reference such as `fa:database` or `file:redis.svg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// Editor groups, usually `["transform"]`.
    pub group: Vec<String>,
    /// One version, or every version this description serves (`[1, 1.1]`).
    pub version: NodeVersion,
    /// The version new nodes get when several are listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_version: Option<Number>,
    /// What the node does, shown in the node panel.
    pub description: String,
    /// Subtitle expression shown under the node on the canvas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// Defaults for new nodes of this type.
    pub defaults: NodeDefaults,
    /// Where the node appears in the node panel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex: Option<Codex>,
    /// Input connections.
    pub inputs: Connections,
    /// Output connections.
    pub outputs: Connections,
    /// Labels of the outputs, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_names: Vec<String>,
    /// Credential types the node uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credentials: Vec<CredentialDescription>,
    /// Whether n8n may wrap this (main) node as a tool for AI agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_as_tool: Option<bool>,
    /// The node's parameters.
    pub properties: Vec<NodeProperty>,
}

impl NodeDescription {
    /// The version a newly added node gets: `defaultVersion`, else the newest.
    pub fn version_for_new_nodes(&self) -> f64 {
        self.default_version
            .map_or_else(|| self.version.latest(), |v| v.0)
    }
}

/// n8n's `version`: a single number or a list of versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NodeVersion {
    /// `version: 1`
    One(Number),
    /// `version: [1, 1.1]`
    Many(Vec<Number>),
}

impl NodeVersion {
    /// Every version, in order.
    pub fn all(&self) -> Vec<f64> {
        match self {
            NodeVersion::One(v) => vec![v.0],
            NodeVersion::Many(vs) => vs.iter().map(|v| v.0).collect(),
        }
    }

    /// The newest version.
    pub fn latest(&self) -> f64 {
        self.all().into_iter().fold(f64::NAN, f64::max)
    }
}

/// n8n's `defaults`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDefaults {
    /// Name a new node of this type gets.
    pub name: String,
}

/// n8n's `codex`: categories and subcategories in the node panel.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Codex {
    /// Top-level categories, e.g. `["AI"]`.
    pub categories: Vec<String>,
    /// Subcategories per category, e.g. `{"AI": ["Memory"]}`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub subcategories: IndexMap<String, Vec<String>>,
    /// Documentation links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<CodexResources>,
}

/// n8n's `codex.resources`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexResources {
    /// Links to the node's primary documentation.
    pub primary_documentation: Vec<DocumentationLink>,
}

/// One documentation link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentationLink {
    /// The address of the page.
    pub url: String,
}

/// A node's inputs or outputs: a fixed list, or (as n8n's vector store
/// and loader nodes have) an expression n8n evaluates with the node's
/// parameters, which picks some of `possible`.
#[derive(Debug, Clone, PartialEq)]
pub enum Connections {
    /// The same connections whatever the parameters.
    Fixed(Vec<ConnectionType>),
    /// `={{ ... }}` over `$parameter`.
    ByParameters {
        /// The expression, as n8n's description holds it.
        expression: String,
        /// Every connection type the expression can give.
        possible: Vec<ConnectionType>,
    },
}

impl Connections {
    /// Every connection type the node can have here.
    pub fn types(&self) -> &[ConnectionType] {
        match self {
            Connections::Fixed(list) => list,
            Connections::ByParameters { possible, .. } => possible,
        }
    }
}

impl From<Vec<ConnectionType>> for Connections {
    fn from(list: Vec<ConnectionType>) -> Self {
        Connections::Fixed(list)
    }
}

impl Serialize for Connections {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Connections::Fixed(list) => list.serialize(s),
            Connections::ByParameters { expression, .. } => expression.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Connections {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Fixed(Vec<ConnectionType>),
            Expression(String),
        }
        Ok(match Form::deserialize(d)? {
            Form::Fixed(list) => Connections::Fixed(list),
            // Which types an expression read from JSON gives is not known.
            Form::Expression(expression) => Connections::ByParameters {
                expression,
                possible: Vec::new(),
            },
        })
    }
}

/// n8n's connection types (`NodeConnectionTypes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ConnectionType {
    /// Ordinary item flow.
    #[serde(rename = "main")]
    Main,
    /// A chat model supplied to an agent or chain.
    #[serde(rename = "ai_languageModel")]
    LanguageModel,
    /// Conversation memory.
    #[serde(rename = "ai_memory")]
    Memory,
    /// A tool an agent may call.
    #[serde(rename = "ai_tool")]
    Tool,
    /// An embeddings model.
    #[serde(rename = "ai_embedding")]
    Embedding,
    /// A vector store.
    #[serde(rename = "ai_vectorStore")]
    VectorStore,
    /// Documents for a vector store.
    #[serde(rename = "ai_document")]
    Document,
    /// A text splitter.
    #[serde(rename = "ai_textSplitter")]
    TextSplitter,
    /// An output parser.
    #[serde(rename = "ai_outputParser")]
    OutputParser,
    /// A retriever.
    #[serde(rename = "ai_retriever")]
    Retriever,
    /// A reranker.
    #[serde(rename = "ai_reranker")]
    Reranker,
    /// An agent.
    #[serde(rename = "ai_agent")]
    Agent,
    /// A chain.
    #[serde(rename = "ai_chain")]
    Chain,
}

impl std::fmt::Display for ConnectionType {
    /// The name n8n uses, e.g. `ai_embedding`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(name)) => f.write_str(&name),
            _ => write!(f, "{self:?}"),
        }
    }
}

/// A credential a node uses, as n8n's `INodeCredentialDescription`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialDescription {
    /// Credential type name, e.g. `redis`.
    pub name: String,
    /// Whether the node cannot run without it.
    #[serde(default)]
    pub required: bool,
    /// When the credential applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_options: Option<DisplayOptions>,
}

/// n8n's property types (`NodePropertyTypes`) that nodekit generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PropertyType {
    /// Text.
    String,
    /// A number; bounds and precision in `typeOptions`.
    Number,
    /// A switch.
    Boolean,
    /// One value from `options`.
    Options,
    /// Several values from `options`.
    MultiOptions,
    /// Optional nested properties, added one by one.
    Collection,
    /// Groups of nested properties, possibly repeated.
    FixedCollection,
    /// JSON text.
    Json,
    /// A notice shown in the editor; holds no value.
    Notice,
    /// A value not shown in the editor.
    Hidden,
    /// A date and time.
    DateTime,
    /// A colour.
    Color,
    /// A resource picked from a list, by id or by URL.
    ResourceLocator,
    /// Conditions on values (n8n's If node and Model Selector).
    Filter,
}

impl PropertyType {
    /// The name n8n uses for this type.
    pub fn as_str(self) -> &'static str {
        match self {
            PropertyType::String => "string",
            PropertyType::Number => "number",
            PropertyType::Boolean => "boolean",
            PropertyType::Options => "options",
            PropertyType::MultiOptions => "multiOptions",
            PropertyType::Collection => "collection",
            PropertyType::FixedCollection => "fixedCollection",
            PropertyType::Json => "json",
            PropertyType::Notice => "notice",
            PropertyType::Hidden => "hidden",
            PropertyType::DateTime => "dateTime",
            PropertyType::Color => "color",
            PropertyType::ResourceLocator => "resourceLocator",
            PropertyType::Filter => "filter",
        }
    }
}

impl std::fmt::Display for PropertyType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One node parameter, as n8n's `INodeProperties`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeProperty {
    /// Label shown in the editor.
    pub display_name: String,
    /// Parameter name in the node's JSON.
    pub name: String,
    /// The editor widget and value type.
    #[serde(rename = "type")]
    pub kind: PropertyType,
    /// Widget options: bounds, precision, password, rows, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_options: Option<TypeOptions>,
    /// Value a new node gets.
    pub default: Value,
    /// Whether the editor insists on a value.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Hint shown below the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Placeholder shown in an empty field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Whether expressions are disallowed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_data_expression: bool,
    /// When the parameter is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_options: Option<DisplayOptions>,
    /// Choices (options types) or nested properties (collections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<PropertyOption>>,
    /// `default` is only the empty value n8n requires for the type, not one
    /// the author chose: an absent parameter stays absent when nodekit fills
    /// defaults (so `Option` fields stay `None` and required ones are missing).
    /// Not part of n8n's JSON.
    #[serde(skip)]
    pub implicit_default: bool,
    /// For a parameter the LLM fills through its default `$fromAI`
    /// expression: what the argument's schema says beyond n8n's `number`,
    /// `string` or `json`. Not part of n8n's JSON.
    #[serde(skip)]
    pub argument_bounds: Option<ArgumentBounds>,
}

/// What a `$fromAI` argument that fills a declared field may be: a number
/// field's integer type and bounds, an options field's choices. A tool's
/// argument schema carries them (`"type": "integer"`, `minimum`, `maximum`;
/// `enum`, or for a multiOptions field an array whose `items` have the
/// `enum`) while the parameter holds the default expression its field
/// declared, so a value out of range or not among the choices comes back to
/// the model as an argument error naming the key, with the other problems
/// of the same call. A `$fromAI` call written in the workflow instead keeps
/// n8n's schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArgumentBounds {
    /// The argument's key.
    pub key: String,
    /// Whether the field holds whole numbers only.
    pub integer: bool,
    /// Smallest value allowed.
    pub minimum: Option<f64>,
    /// Largest value allowed.
    pub maximum: Option<f64>,
    /// The values an options field accepts (serialized, as the model sends
    /// them); empty for a field without choices.
    pub choices: Vec<String>,
    /// The field is a list (multiOptions): the argument is a non-empty
    /// array, and each of its items is one of `choices`.
    pub list: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// n8n's `typeOptions`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeOptions {
    /// Smallest number allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_value: Option<Number>,
    /// Largest number allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_value: Option<Number>,
    /// Digits after the decimal point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_precision: Option<u32>,
    /// Hide the typed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<bool>,
    /// Height of a text field in rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u32>,
    /// The parameter holds a list of values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_values: Option<bool>,
    /// Method that loads the options at edit time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_options_method: Option<String>,
}

impl TypeOptions {
    /// `None` when nothing is set, so that an empty `typeOptions` is not printed.
    pub fn non_empty(self) -> Option<Self> {
        (self != TypeOptions::default()).then_some(self)
    }
}

/// n8n's `displayOptions`: show or hide a parameter depending on others.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DisplayOptions {
    /// Shown only when every named parameter has one of the listed values.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub show: IndexMap<String, Vec<Value>>,
    /// Hidden when any named parameter has one of the listed values.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub hide: IndexMap<String, Vec<Value>>,
}

impl DisplayOptions {
    /// Whether the parameter is shown, given the sibling values and the node version.
    ///
    /// A sibling that is absent takes `defaults`' value, as in n8n.
    pub fn is_shown(&self, value_of: impl Fn(&str) -> Option<Value>, version: f64) -> bool {
        let current = |key: &str| -> Option<Value> {
            if key == "@version" {
                Some(number_to_json(version))
            } else {
                value_of(key)
            }
        };
        let matches = |key: &str, values: &[Value]| {
            current(key).is_some_and(|v| values.iter().any(|w| json_eq(w, &v)))
        };
        self.show.iter().all(|(k, vs)| matches(k, vs))
            && !self.hide.iter().any(|(k, vs)| matches(k, vs))
    }
}

/// Equality of JSON values where `1` and `1.0` are the same number.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// An entry of a property's `options`: a choice, a nested property, or a
/// fixed-collection group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PropertyOption {
    /// A nested property of a collection.
    Property(Box<NodeProperty>),
    /// A group of a fixed collection.
    Group(PropertyGroup),
    /// A choice of an options or multiOptions property.
    Choice(OptionChoice),
}

/// n8n's `INodePropertyOptions`: one choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionChoice {
    /// Label shown in the editor.
    pub name: String,
    /// Value stored in the parameter.
    pub value: Value,
    /// Help text for this choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Action label (for resource/operation choices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// n8n's `INodePropertyCollection`: one group of a fixed collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertyGroup {
    /// Label shown in the editor.
    pub display_name: String,
    /// Key of the group inside the parameter value.
    pub name: String,
    /// The group's properties.
    pub values: Vec<NodeProperty>,
}

//! Nodes as tools: the definition an LLM sees (name, description, argument
//! schema from the node's `$fromAI` calls) and the path from the LLM's
//! arguments back to a node's parameters.
//!
//! The steps match what n8n does when a node becomes a tool: defaults fill
//! missing parameters and hidden ones are dropped; every `$fromAI` call in
//! the remaining values becomes one argument; the arguments that come back
//! are validated against the schema and substituted as typed JSON.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::description::{ArgumentBounds, NodeDescription, NodeProperty, PropertyOption};
use crate::error::{Error, Result};
use crate::from_ai::{self, Substitution};
use crate::params::{Params, with_defaults};

/// A tool as an LLM sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Tool name: the node's name with characters outside `[A-Za-z0-9_-]` replaced (n8n's rule).
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

impl ToolDefinition {
    /// The definition in OpenAI's function-calling form.
    pub fn to_openai(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// A node configured by a workflow, ready to run as a tool: its definition
/// (name, description, JSON schema of the `$fromAI` arguments) and the
/// typed node built from an LLM's arguments.
///
/// ```
/// use nodekit::prelude::*;
/// use nodekit::serde_json::json;
/// use nodekit::tool::NodeTool;
///
/// /// Get the weather forecast for a city.
/// #[ai_node(name = "forecastTool", output = tool)]
/// pub struct Forecast {
///     /// The city, e.g. "Berlin".
///     #[from_ai]
///     pub city: String,
///     /// How many days ahead.
///     #[param(default = 3, min = 1, max = 7)]
///     pub days: u32,
/// }
///
/// // The workflow fixed `days`; the model fills `city`.
/// let tool = NodeTool::new(Forecast::description(), "Forecast", &json!({"days": 2}))?;
/// assert_eq!(tool.definition().name, "Forecast");
/// assert_eq!(tool.definition().parameters["required"], json!(["city"]));
/// let node: Forecast = tool.instantiate(&json!({"city": "Berlin"}))?;
/// assert_eq!((node.city.as_str(), node.days), ("Berlin", 2));
/// // Wrong arguments get one message the model can correct itself from.
/// assert!(tool.instantiate::<Forecast>(&json!({"city": 7})).is_err());
/// # Ok::<(), nodekit::Error>(())
/// ```
#[derive(Debug)]
pub struct NodeTool {
    node_name: String,
    definition: ToolDefinition,
    substitution: Substitution,
}

impl NodeTool {
    /// Prepares node `node_name` of type `description` with the workflow's
    /// parameter values `params`, at the version a new node gets.
    pub fn new(description: &NodeDescription, node_name: &str, params: &Value) -> Result<Self> {
        Self::with_version(
            description,
            node_name,
            params,
            description.version_for_new_nodes(),
        )
    }

    /// Like [`NodeTool::new`] for a node of the given `typeVersion`, which
    /// decides `@version` display conditions.
    pub fn with_version(
        description: &NodeDescription,
        node_name: &str,
        params: &Value,
        version: f64,
    ) -> Result<Self> {
        let values = crate::params::parameter_object(params, node_name)?;
        // The tool's description may come from a value the node does not
        // declare (n8n's `toolDescription`), which preparing drops.
        let text = tool_description(description, &values);
        let parameters = Value::Object(with_defaults(&description.properties, &values, version));
        Self::build(description, node_name, parameters, text)
    }

    /// A tool of parameters whose defaults are already applied at the node's
    /// version (what a node's run-time entry points receive).
    pub fn prepared(
        description: &NodeDescription,
        node_name: &str,
        parameters: Value,
    ) -> Result<Self> {
        let text = match &parameters {
            Value::Object(values) => tool_description(description, values),
            _ => description.description.clone(),
        };
        Self::build(description, node_name, parameters, text)
    }

    fn build(
        description: &NodeDescription,
        node_name: &str,
        parameters: Value,
        text: String,
    ) -> Result<Self> {
        let from_ai_error = |source| Error::FromAi {
            node: node_name.to_owned(),
            source,
        };
        let mut bounds = Vec::new();
        declared_bounds(&description.properties, &parameters, &mut bounds);
        let substitution = Substitution::with_bounds(parameters, &bounds).map_err(from_ai_error)?;
        // As n8n's `createTool`: a name with nothing left after the cleanup
        // falls back to the node type's.
        let tool_name = match from_ai::tool_name(node_name) {
            name if name.is_empty() => description.name.clone(),
            name => name,
        };
        let definition = ToolDefinition {
            name: tool_name,
            description: text,
            parameters: substitution.schema().clone(),
        };
        Ok(NodeTool {
            node_name: node_name.to_owned(),
            definition,
            substitution,
        })
    }

    /// What the LLM is shown.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The node's parameters with defaults applied, before substitution.
    pub fn parameters(&self) -> &Value {
        self.substitution.params()
    }

    /// Validates the LLM's arguments and returns the parameters with every
    /// `$fromAI` call replaced by its argument.
    pub fn parameters_for(&self, args: &Value) -> Result<Value> {
        self.substitution
            .apply(args)
            .map_err(|source| match source {
                // The LLM's mistake, not the node's: the message is written for it.
                from_ai::FromAiError::InvalidArguments(e) => Error::InvalidArguments(e),
                source => Error::FromAi {
                    node: self.node_name.clone(),
                    source,
                },
            })
    }

    /// Validates, substitutes and builds the node's typed parameters.
    pub fn instantiate<T: Params>(&self, args: &Value) -> Result<T> {
        T::from_params(&self.parameters_for(args)?, &self.node_name)
    }
}

/// The bounds of every declared field whose value in `values` is still the
/// `$fromAI` expression it declared, in collections and their groups too.
fn declared_bounds<'a>(
    properties: &'a [NodeProperty],
    values: &Value,
    out: &mut Vec<&'a ArgumentBounds>,
) {
    for property in properties {
        let Some(value) = values.get(&property.name) else {
            continue;
        };
        match &property.argument_bounds {
            Some(bounds) if *value == property.default => out.push(bounds),
            _ => {}
        }
        for option in property.options.iter().flatten() {
            match option {
                PropertyOption::Property(nested) => {
                    declared_bounds(std::slice::from_ref(&**nested), value, out)
                }
                PropertyOption::Group(group) => {
                    // A group holds one set of values, or a list of them when repeatable.
                    let sets = match value.get(&group.name) {
                        Some(Value::Array(sets)) => sets.iter().collect(),
                        Some(set) => vec![set],
                        None => vec![],
                    };
                    for set in sets {
                        declared_bounds(&group.values, set, out);
                    }
                }
                PropertyOption::Choice(_) => {}
            }
        }
    }
}

/// n8n's choice: the `toolDescription` parameter unless it is empty or
/// `descriptionType` is `auto`; otherwise the node type's description.
fn tool_description(description: &NodeDescription, values: &Map<String, Value>) -> String {
    let manual = values
        .get("toolDescription")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    let auto = values.get("descriptionType").and_then(Value::as_str) == Some("auto");
    match manual {
        Some(text) if !auto => text.to_owned(),
        _ => description.description.clone(),
    }
}

/// A tool an agent can call. Object-safe: agents hold `Arc<dyn Tool>`.
pub trait Tool: Send + Sync + std::fmt::Debug {
    /// Name, description and argument schema.
    fn definition(&self) -> &ToolDefinition;

    /// Runs the tool; a string result is sent to the model as it is, anything else as JSON.
    fn call<'a>(&'a self, args: Value) -> futures::future::BoxFuture<'a, Result<Value>>;
}

type ToolFn = dyn Fn(Value) -> futures::future::BoxFuture<'static, Result<Value>> + Send + Sync;

/// A tool made of a definition and an async function.
pub struct FnTool {
    definition: ToolDefinition,
    function: Box<ToolFn>,
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.definition.name)
            .finish()
    }
}

impl FnTool {
    /// A tool called `definition.name` that runs `function` on the arguments.
    pub fn new<F, Fut>(definition: ToolDefinition, function: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value>> + Send + 'static,
    {
        FnTool {
            definition,
            function: Box::new(move |args| Box::pin(function(args))),
        }
    }
}

impl Tool for FnTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, args: Value) -> futures::future::BoxFuture<'a, Result<Value>> {
        (self.function)(args)
    }
}

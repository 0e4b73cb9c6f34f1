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

// What generated code calls: reached through `nodekit::__private` only.
pub(crate) mod extract;
pub(crate) mod property_spec;

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::description::{NodeProperty, PropertyType};
use crate::error::{Error, ParamError, Result, describe_value};

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
            other => Err(ParamError::NotObject {
                node: node.to_owned(),
                found: describe_value(other),
            }
            .into()),
        }
    }
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

    pub(crate) fn missing(&self) -> Error {
        ParamError::Missing {
            node: self.node.to_owned(),
            path: self.path.to_string(),
        }
        .into()
    }
}

/// A node's parameter values as an object (`null`: no values), or the
/// error naming the node.
pub(crate) fn parameter_object<'v>(
    values: &'v Value,
    node: &str,
) -> Result<Cow<'v, Map<String, Value>>> {
    match values {
        Value::Object(m) => Ok(Cow::Borrowed(m)),
        Value::Null => Ok(Cow::Owned(Map::new())),
        other => Err(ParamError::NotObject {
            node: node.to_owned(),
            found: describe_value(other),
        }
        .into()),
    }
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

//! Why a workflow export cannot be read or run: [`WorkflowError`].

use super::{Error, quoted};

/// A workflow export cannot be read or run as it is. Node names are shown
/// shortened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkflowError {
    /// The text is not a workflow export (invalid JSON, or missing fields).
    #[error("workflow: not a workflow export ({reason})")]
    NotAnExport {
        /// The parser's message, with its place.
        reason: String,
    },
    /// Two nodes have the same name.
    #[error("workflow: two nodes are both named `{}`", quoted(.name))]
    DuplicateNode {
        /// The name.
        name: String,
    },
    /// A connection names a node that is not in the workflow.
    #[error("workflow: a connection names node `{}`, which is not in the workflow", quoted(.name))]
    UnknownNode {
        /// The name.
        name: String,
    },
    /// A node's connections are not an object of connection types.
    #[error("workflow: connections of `{}` must be an object, not {found}", quoted(.node))]
    Connections {
        /// The node the connections start at.
        node: String,
        /// What was found instead, shortened.
        found: String,
    },
    /// A connection has no target node.
    #[error("workflow: a `{}` connection of `{}` has no target node", quoted(.kind), quoted(.node))]
    NoTarget {
        /// The connection type, e.g. `ai_tool`.
        kind: String,
        /// The node the connection starts at.
        node: String,
    },
    /// A node's type cannot be used: not in the catalog, or its name is
    /// ambiguous there. The catalog's error is the source.
    #[error("workflow: node `{}`: {source}", quoted(.node))]
    NodeType {
        /// The node.
        node: String,
        /// The catalog's error.
        #[source]
        source: Box<Error>,
    },
    /// No node would run: the workflow has no root node.
    #[error("workflow: no node to run: add a root node such as the AI Agent")]
    NothingToRun,
    /// A node's type is described in the catalog but neither runs nor supplies.
    #[error("workflow: node `{}` ({}) has a description but nothing to run", quoted(.node), quoted(.node_type))]
    NotRunnable {
        /// The node.
        node: String,
        /// Its type.
        node_type: String,
    },
    /// A node is connected as a sub-node but supplies nothing.
    #[error("workflow: node `{}` is connected as `{}` but supplies nothing", quoted(.node), quoted(.kind))]
    SuppliesNothing {
        /// The node.
        node: String,
        /// The connection type it is connected on.
        kind: String,
    },
    /// Sub-nodes nest deeper than the limit (a loop of connections).
    #[error("workflow: sub-nodes nest more than {limit} deep under `{}`: do their connections form a loop?", quoted(.node))]
    TooDeep {
        /// The nesting limit.
        limit: usize,
        /// The node the nesting was found under.
        node: String,
    },
    /// A trigger's setting that nodekit cannot serve.
    #[error("workflow: node `{}`: {setting} `{}` is not supported here: {supported}", quoted(.node), quoted(.value))]
    UnsupportedSetting {
        /// The trigger node.
        node: String,
        /// The parameter.
        setting: String,
        /// Its value.
        value: String,
        /// What is supported instead.
        supported: String,
    },
}

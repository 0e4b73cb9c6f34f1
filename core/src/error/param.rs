//! A node's parameters that do not fit its declaration: [`ParamError`].

use super::quoted;

/// A node's parameters do not fit its declaration: a value missing, of the
/// wrong type, out of bounds, or an expression nothing resolved. Each names
/// the node and the parameter's path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A required parameter has no value and no default.
    #[error(
        "node `{}`: parameter `{}` is required but has no value; set it in the node's parameters",
        quoted(.node),
        quoted(.path)
    )]
    Missing {
        /// Node type or node name.
        node: String,
        /// Parameter path, e.g. `options.temperature`.
        path: String,
    },
    /// A parameter value has the wrong JSON type.
    #[error(
        "node `{}`: parameter `{}` must be {expected}, but it is {found}",
        quoted(.node),
        quoted(.path)
    )]
    WrongType {
        /// Node type or node name.
        node: String,
        /// Parameter path.
        path: String,
        /// What the parameter accepts.
        expected: String,
        /// The value found, shortened.
        found: String,
    },
    /// A number parameter is outside its bounds.
    #[error(
        "node `{}`: parameter `{}` is {value}, but it must be {range}",
        quoted(.node),
        quoted(.path)
    )]
    OutOfRange {
        /// Node type or node name.
        node: String,
        /// Parameter path.
        path: String,
        /// The value found.
        value: String,
        /// The allowed range, e.g. `from 1 to 100` or `at least 1`.
        range: String,
    },
    /// A parameter holds an expression that nothing resolved.
    #[error(
        "node `{}`: parameter `{}` holds the expression {expression}, which was not resolved before the node ran",
        quoted(.node),
        quoted(.path)
    )]
    UnresolvedExpression {
        /// Node type or node name.
        node: String,
        /// Parameter path.
        path: String,
        /// The expression, shortened.
        expression: String,
    },
    /// The parameters of a node are not a JSON object.
    #[error("node `{}`: parameters must be a JSON object, but they are {found}", quoted(.node))]
    NotObject {
        /// Node type or node name.
        node: String,
        /// The value found, shortened.
        found: String,
    },
}

//! A catalog lookup or registration that failed: [`CatalogError`].

use super::quoted;

/// No registered node has the name asked for, or two share one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No registered node has this name.
    #[error("unknown node `{}`{hint}", quoted(.name))]
    UnknownNode {
        /// The name asked for.
        name: String,
        /// ` (did you mean ...?)`, or a list of candidates, or empty.
        hint: String,
    },
    /// Two registered nodes share one catalog name.
    #[error(
        "two registered nodes are both named `{name}`; node names must be unique within a package"
    )]
    DuplicateNode {
        /// The full catalog name.
        name: String,
    },
}

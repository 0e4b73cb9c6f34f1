use nodekit::prelude::*;

/// An enum cannot be a node.
#[ai_node]
pub enum NotAStruct {
    A,
}

/// Tuple structs have no parameter names.
#[ai_node]
pub struct Tuple(String);

/// Generic nodes are not supported.
#[ai_node]
pub struct Generic<T> {
    /// A value.
    value: T,
}

/// A fixed collection that is not a Vec.
#[ai_node]
pub struct Fixed {
    /// Entries.
    #[param(fixed_collection)]
    entries: String,
}

fn main() {}

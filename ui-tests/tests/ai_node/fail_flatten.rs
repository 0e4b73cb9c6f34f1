use nodekit::prelude::*;

/// A group.
#[derive(NodeParams)]
pub struct Group {
    /// A value.
    #[param(default = 1)]
    pub value: u32,
}

/// Flattened fields take no parameter settings of their own.
#[ai_node(output = tool)]
pub struct Flattened {
    /// With a default.
    #[param(flatten, default = 3)]
    pub a: Group,
    /// Filled by the model.
    #[param(flatten)]
    #[from_ai]
    pub b: Group,
    /// Optional.
    #[param(flatten)]
    pub c: Option<Group>,
}

fn main() {}

use nodekit::prelude::*;

/// Versioned.
#[ai_node(version = [1, 1.1, 1], default_version = 2, usable_as_tool, output = memory)]
pub struct Versioned {
    /// A parameter.
    #[param(default = "")]
    value: String,
}

fn main() {}

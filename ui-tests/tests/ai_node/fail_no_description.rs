use nodekit::prelude::*;

#[ai_node(name = "silent")]
pub struct Silent {
    /// A parameter.
    value: String,
}

fn main() {}

use nodekit::prelude::*;

/// Sorts.
#[ai_node]
pub struct Sort {
    /// Direction.
    #[param(options = ["asc", "desc"], default = "up")]
    direction: String,
    /// Not a string.
    #[param(options = ["a"])]
    count: u32,
}

fn main() {}

use nodekit::prelude::*;

/// Looks up.
#[ai_node(output = tool)]
pub struct Lookup {
    /// A lower bound in `#[from_ai]`.
    #[from_ai(min = 0)]
    offset: u32,
    /// An upper bound next to a key that belongs there.
    #[from_ai(default = 3, max = 7)]
    days: u32,
    /// Choices in `#[from_ai]`.
    #[from_ai(options = ["asc", "desc"])]
    order: String,
    /// A label in `#[from_ai]`.
    #[from_ai(display_name = "Search Term")]
    term: String,
}

fn main() {}

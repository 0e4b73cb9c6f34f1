use nodekit::prelude::*;

/// Looks up.
#[ai_node(output = tool)]
pub struct Lookup {
    /// Key with a space.
    #[from_ai(key = "user name")]
    user: String,
    /// Unknown type.
    #[from_ai(type = "strng")]
    query: String,
    /// A default next to from_ai.
    #[from_ai]
    #[param(default = 5)]
    limit: u32,
    /// Reuses a key.
    #[from_ai(key = "query")]
    other: String,
}

fn main() {}

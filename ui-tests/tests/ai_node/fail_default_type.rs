use nodekit::prelude::*;

/// Searches.
#[ai_node]
pub struct Search {
    /// Max results.
    #[param(default = "ten")]
    limit: u32,
    /// Strict matching.
    #[param(default = 1)]
    strict: bool,
    /// Offset.
    #[param(default = -1)]
    offset: u64,
    /// Query.
    #[param(default = 3)]
    query: String,
}

fn main() {}

use nodekit::prelude::*;

/// Limits.
#[ai_node]
pub struct Limits {
    /// Backwards bounds.
    #[param(default = 5, min = 10, max = 1)]
    size: u32,
    /// Bounds on a string.
    #[param(min = 1)]
    name: String,
    /// Password on a number.
    #[param(password)]
    pin: u32,
}

fn main() {}

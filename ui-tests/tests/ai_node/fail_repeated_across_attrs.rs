use nodekit::prelude::*;

/// Keys given twice on one field, in two attributes.
#[ai_node(output = tool)]
pub struct Repeated {
    /// The default is given twice: the second is an error, not an override.
    #[param(default = 1, min = 0)]
    #[param(default = 2)]
    count: u32,
    /// Two `#[from_ai]` attributes.
    #[from_ai]
    #[from_ai(key = "other")]
    query: String,
}

fn main() {}

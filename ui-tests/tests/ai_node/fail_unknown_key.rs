use nodekit::prelude::*;

/// Typos.
#[ai_node(displayname = "Typos", output = memroy)]
pub struct Typos {
    /// A typo in a param key.
    #[param(defualt = 1)]
    count: u32,
    /// A key that is nothing like any other.
    #[param(zzzzzz)]
    other: u32,
    /// A repeated key.
    #[param(min = 1, min = 2)]
    third: u32,
    /// A typo in a from_ai key.
    #[from_ai(descripton = "x")]
    fourth: String,
    /// A typo in a kind.
    #[param(kind = "dateTim")]
    when: String,
}

fn main() {}

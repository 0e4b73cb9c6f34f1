use nodekit::prelude::*;

#[derive(NodeParams)]
pub enum Choice {
    A,
}

#[derive(NodeParams)]
pub struct Dup {
    /// First.
    #[param(name = "x")]
    a: String,
    /// Second.
    #[param(name = "x")]
    b: String,
}

fn main() {}

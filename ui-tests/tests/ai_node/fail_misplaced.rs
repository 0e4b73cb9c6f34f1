use nodekit::prelude::*;

/// A settings group.
#[derive(NodeParams)]
pub struct Settings {
    /// Depth.
    #[param(default = 1)]
    depth: u32,
}

/// Options where they cannot go.
#[ai_node(notice = "Read me.")]
pub struct Misplaced {
    /// Several choices need an enum.
    #[param(options = ["a", "b"])]
    letters: Vec<String>,
    /// A collection has no default of its own.
    #[param(collection, default = 3)]
    settings: Settings,
    /// Clashes with the notice.
    #[param(default = "")]
    notice: String,
}

fn main() {}

use nodekit::prelude::*;

#[derive(NodeParams)]
pub struct Group {
    /// Only in some version.
    #[param(default = "", display_options(show("@version" = ["two"])))]
    value: String,
}

fn main() {}

use nodekit::prelude::*;

/// Queries.
#[ai_node]
pub struct Query {
    /// Mode.
    #[param(options = ["simple", "advanced"], default = "simple")]
    mode: String,
    /// Verbose.
    #[param(default = false)]
    verbose: bool,
    /// Refers to a parameter that does not exist.
    #[param(default = "", display_options(show(mod = ["advanced"])))]
    a: String,
    /// Refers to a value the parameter cannot have.
    #[param(default = "", display_options(show(mode = ["expert"])))]
    b: String,
    /// A string for a boolean.
    #[param(default = "", display_options(hide(verbose = ["yes"])))]
    c: String,
    /// A version the node does not have.
    #[param(default = "", display_options(show("@version" = [2])))]
    d: String,
}

fn main() {}

/// A parameter that may be hidden needs a value when it is.
#[ai_node]
pub struct MaybeHidden {
    /// Switch.
    #[param(default = false)]
    on: bool,
    /// Hidden when off, and no plain default.
    #[param(default = "={{ $json.x }}", display_options(show(on = [true])))]
    x: String,
}

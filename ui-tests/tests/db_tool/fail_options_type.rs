use nodekit::prelude::*;

/// `options` is the tool's settings, of type `ToolOptions`.
#[db_tool(query = "SELECT 1")]
pub struct WrongOptions {
    /// Not the settings.
    options: String,
}

fn main() {}

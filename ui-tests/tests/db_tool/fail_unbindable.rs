use nodekit::prelude::*;

/// Something of the author's.
#[derive(Debug, Clone, schemars::JsonSchema, serde::Deserialize, serde::Serialize)]
pub struct Point {
    /// x.
    x: i32,
}

/// Fields that cannot be bound.
#[db_tool(query = "SELECT id FROM users WHERE tags = $1 AND at = $2")]
pub struct Unbindable {
    /// A list.
    #[param(json)]
    tags: Vec<String>,
    /// A struct.
    #[param(json)]
    at: Point,
}

fn main() {}

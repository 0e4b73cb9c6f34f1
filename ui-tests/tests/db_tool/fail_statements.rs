use nodekit::prelude::*;

/// Two statements.
#[db_tool(query = "SELECT * FROM users WHERE id = $1; DELETE FROM users")]
pub struct TwoStatements {
    /// Which user.
    id: i64,
}

fn main() {}

use nodekit::prelude::*;

/// An upsert without its conflict columns.
#[db_tool(operation = upsert)]
pub struct Upsert {
    /// The table.
    table_name: String,
    /// The rows.
    rows: serde_json::Value,
}

/// A describe tool takes the table alone.
#[db_tool(operation = describe)]
pub struct Describe {
    /// The table.
    table_name: String,
    /// Not an argument of describe.
    where_conditions: String,
}

/// A misspelt operation.
#[db_tool(operation = upsrt)]
pub struct Misspelt {
    /// The table.
    table_name: String,
}

/// Conflict columns are text.
#[db_tool(operation = upsert)]
pub struct Typed {
    /// The table.
    table_name: String,
    /// The rows.
    rows: serde_json::Value,
    /// The key, as a list.
    conflict_columns: Vec<String>,
}

/// A transaction tool needs its action.
#[db_tool(operation = transaction)]
pub struct Transaction {
    /// Seconds.
    time_limit: u32,
}

fn main() {}

use nodekit::prelude::*;

/// A typo and a stray field.
#[db_tool(operation = select)]
pub struct Select {
    /// The table.
    tabel: String,
    /// Not an argument of select.
    rows: serde_json::Value,
}

/// Missing arguments.
#[db_tool(operation = update)]
pub struct Update {
    /// The table.
    table: String,
}

/// The filter is required, and a skipped field does not count.
#[db_tool(operation = delete)]
pub struct Delete {
    /// The table.
    table: String,
    /// Skipped.
    #[param(skip)]
    filter: String,
}

/// A field type that does not fit its argument.
#[db_tool(operation = execute)]
pub struct Execute {
    /// The statement.
    sql: Vec<String>,
}

fn main() {}

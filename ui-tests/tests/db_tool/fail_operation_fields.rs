use nodekit::prelude::*;

/// A typo and a stray field.
#[db_tool(operation = select)]
pub struct Select {
    /// The table.
    tabel_name: String,
    /// Not an argument of select.
    rows: serde_json::Value,
}

/// Missing arguments.
#[db_tool(operation = update)]
pub struct Update {
    /// The table.
    table_name: String,
}

/// The filter is required, and a skipped field does not count.
#[db_tool(operation = delete)]
pub struct Delete {
    /// The table.
    table_name: String,
    /// Skipped.
    #[param(skip)]
    where_conditions: String,
}

/// A field type that does not fit its argument.
#[db_tool(operation = execute)]
pub struct Execute {
    /// The statement.
    query: Vec<String>,
}

fn main() {}

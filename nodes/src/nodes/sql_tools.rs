//! The SQL tool nodes: one focused tool per operation (describe, select,
//! insert, upsert, update, delete, execute, and transactions across
//! calls), for PostgreSQL (and Neon)
//! through the `postgres` credential and SQLite files through the `sqlite`
//! credential.
//!
//! The model fills the `$fromAI` parameters; the workflow author may fix any
//! of them instead (a fixed table, say) and sets the limits in Options. What
//! the model sends is checked by `nodekit::sql` before any SQL is written.

use nodekit::prelude::*;
use nodekit::sql::{Request, RequestArgs, ToolOptions};

/// The table a select, insert, update or delete tool works on.
#[derive(NodeParams, Debug, Clone, PartialEq)]
pub struct TableParams {
    /// The name of the database table to use
    #[param(display_name = "Table Name")]
    #[from_ai]
    pub table_name: String,
}

impl RequestArgs for TableParams {
    fn fill(&self, request: &mut Request) {
        request.set_table(&self.table_name);
    }
}

/// The rows an update or delete tool changes.
#[derive(NodeParams, Debug, Clone, PartialEq)]
pub struct RowFilterParams {
    /// Which rows: SQL WHERE clause conditions without the WHERE keyword (required; a filter matching every row is refused). Example: id = 42
    #[param(display_name = "Filter Conditions")]
    #[from_ai]
    pub where_conditions: String,
}

impl RequestArgs for RowFilterParams {
    fn fill(&self, request: &mut Request) {
        request.set_filter(&self.where_conditions);
    }
}

/// Lists the database tables this tool can use, or describes one: give no table name for the list; give a table name for its columns (type, nullability, default, primary key), its unique keys, its foreign keys and about how many rows it holds.
#[db_tool(
    operation = describe,
    name = "describeDatabaseTool",
    display_name = "Describe Database Tool",
    icon = "fa:sitemap"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeDatabaseTool {
    /// The table to describe; empty to list the tables
    #[param(display_name = "Table Name")]
    #[from_ai(default = "")]
    pub table_name: String,
    /// Limits and the tables the tool may use.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Reads rows from one database table. Give the table name; optionally the columns, filter conditions (a SQL boolean expression such as `age > 18 AND status = 'active'`), sort order and a row limit. Returns the rows as JSON.
#[db_tool(
    operation = select,
    name = "selectQueryTool",
    display_name = "Select Query Tool",
    icon = "fa:table"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct SelectQueryTool {
    /// The table.
    #[param(flatten)]
    pub table: TableParams,
    /// Comma-separated column names, or * for all columns. Example: id,name,email
    #[param(display_name = "Columns to Select")]
    #[from_ai(default = "*")]
    pub columns: String,
    /// SQL WHERE clause conditions without the WHERE keyword; empty for all rows. Example: age > 18 AND status = 'active'
    #[param(display_name = "Filter Conditions")]
    #[from_ai(default = "")]
    pub where_conditions: String,
    /// Columns to sort by, each optionally followed by ASC or DESC; empty for no order. Example: created_at DESC, id
    #[param(display_name = "Order By")]
    #[from_ai(default = "")]
    pub order_by: String,
    /// The most rows to return, from 1 to 10000
    #[from_ai(default = 10000)]
    pub limit: i64,
    /// Rows to skip before the first one returned, for paging
    #[from_ai(default = 0)]
    pub offset: i64,
    /// Limits and the tables the tool may use.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Inserts one or more rows into a database table. Give the table name and the rows as JSON: one object (`{"name": "Ada"}`) or an array of objects. Returns the inserted rows with their generated values (ids, defaults).
#[db_tool(
    operation = insert,
    name = "insertDataTool",
    display_name = "Insert Data Tool",
    icon = "fa:plus-square"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct InsertDataTool {
    /// The table.
    #[param(flatten)]
    pub table: TableParams,
    /// The rows to insert: a JSON object of column names and values, or an array of such objects. Example: {"name": "Ada", "email": "ada@example.com"}
    #[param(display_name = "Rows to Insert")]
    #[from_ai]
    pub rows: serde_json::Value,
    /// Limits and the tables the tool may use.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Inserts rows into a database table, or updates the row already there when the conflict columns (a primary key or unique constraint, e.g. id or email) match. Give the table name, the conflict columns and the rows as JSON: one object or an array of objects, each with a value for every conflict column. Returns the inserted or updated rows.
#[db_tool(
    operation = upsert,
    name = "upsertDataTool",
    display_name = "Upsert Data Tool",
    icon = "fa:sync"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct UpsertDataTool {
    /// The table.
    #[param(flatten)]
    pub table: TableParams,
    /// Comma-separated columns of the table's primary key or of one of its unique constraints: a row whose values there match a stored row updates it. Example: email
    #[param(display_name = "Conflict Columns")]
    #[from_ai]
    pub conflict_columns: String,
    /// The rows to insert or update: a JSON object of column names and values, or an array of such objects. Example: {"email": "ada@example.com", "name": "Ada"}
    #[param(display_name = "Rows to Upsert")]
    #[from_ai]
    pub rows: serde_json::Value,
    /// Limits and the tables the tool may use.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Changes rows of a database table. Give the table name, the new values as a JSON object of column names and values, and filter conditions that pick the rows (required; a filter matching every row is refused). Returns the changed rows.
#[db_tool(
    operation = update,
    name = "updateDataTool",
    display_name = "Update Data Tool",
    icon = "fa:edit"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateDataTool {
    /// The table.
    #[param(flatten)]
    pub table: TableParams,
    /// The new values: a JSON object of column names and values. Example: {"status": "shipped"}
    #[param(display_name = "Values to Set")]
    #[from_ai]
    pub values: serde_json::Value,
    /// Which rows.
    #[param(flatten)]
    pub rows_filter: RowFilterParams,
    /// Limits and the tables the tool may use.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Deletes rows from a database table. Give the table name and filter conditions that pick the rows (required; a filter matching every row is refused). Returns the deleted rows.
#[db_tool(
    operation = delete,
    name = "deleteDataTool",
    display_name = "Delete Data Tool",
    icon = "fa:trash"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteDataTool {
    /// The table.
    #[param(flatten)]
    pub table: TableParams,
    /// Which rows.
    #[param(flatten)]
    pub rows_filter: RowFilterParams,
    /// Limits and the tables the tool may use.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Runs one SQL query (SELECT, WITH ... SELECT) and returns its rows; joins, grouping and aggregates over the allowed tables work. Only a short list of plain functions is accepted. Writes (INSERT, UPDATE, DELETE) work only when the workflow author allowed them; schema changes never do.
#[db_tool(
    operation = execute,
    name = "executeSqlTool",
    display_name = "Execute SQL Tool",
    icon = "fa:database"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct ExecuteSqlTool {
    /// Exactly one SQL statement, e.g. SELECT status, count(*) FROM orders GROUP BY status
    #[param(display_name = "SQL Query", rows = 4)]
    #[from_ai]
    pub query: String,
    /// Limits, the tables the tool may use, and whether it may write.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

/// Begins, commits or rolls back a database transaction, so that several changes made with the other SQL tools are kept together or not at all. Call it with action "begin" first: the SQL tools on the same database then run inside the transaction and see its changes. Finish with "commit" to keep the changes or "rollback" to undo them. A transaction not committed by the end of the run, or within its time limit, is rolled back.
#[db_tool(
    operation = transaction,
    name = "sqlTransactionTool",
    display_name = "SQL Transaction Tool",
    icon = "fa:exchange-alt"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct SqlTransactionTool {
    /// What to do: begin, commit or rollback
    #[param(display_name = "Action")]
    #[from_ai]
    pub action: String,
    /// Seconds a transaction may stay open before it is rolled back (1 to 3600).
    #[param(display_name = "Time Limit", default = 60, min = 1, max = 3600)]
    pub time_limit: u32,
    /// The database schema, and the statement time limit.
    #[param(collection, placeholder = "Add Option")]
    pub options: ToolOptions,
}

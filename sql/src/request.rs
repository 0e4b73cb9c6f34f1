//! What one call of a SQL tool asks of the database, and the settings the
//! workflow author fixes. `#[db_tool]` builds a [`Request`] from the node's
//! fields; the runtime checks it and writes the SQL.

use nodekit_macros::NodeParams;

use super::writer::Bind;

/// What a call asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A fixed SQL template of a `#[db_tool(query = "...")]`, checked when
    /// the node was compiled; its placeholders are bound in order.
    Template(TemplateRequest),
    /// Read rows of one table.
    Select(SelectRequest),
    /// Add rows to one table.
    Insert(InsertRequest),
    /// Change rows of one table that match a filter.
    Update(UpdateRequest),
    /// Remove rows of one table that match a filter.
    Delete(DeleteRequest),
    /// Run one SQL statement the model wrote.
    Execute(ExecuteRequest),
    /// List the tables the tool may use, or describe one of them.
    Describe(DescribeRequest),
    /// Insert rows, or update those whose conflict columns match a row
    /// already there.
    Upsert(UpsertRequest),
    /// Begin, commit or roll back the agent run's transaction.
    Transaction(TransactionRequest),
}

impl Request {
    /// The operation's name in responses: `select`, `insert`, ...
    pub fn operation(&self) -> &'static str {
        match self {
            Request::Template(t) if t.read_only => "select",
            Request::Template(_) => "execute",
            Request::Select(_) => "select",
            Request::Insert(_) => "insert",
            Request::Update(_) => "update",
            Request::Delete(_) => "delete",
            Request::Execute(_) => "execute",
            Request::Describe(_) => "describe",
            Request::Upsert(_) => "upsert",
            Request::Transaction(_) => "transaction",
        }
    }

    /// Sets the table (`tableName`) of a select, insert, update, delete,
    /// describe or upsert.
    pub fn set_table(&mut self, table: &str) {
        match self {
            Request::Select(r) => r.table = table.to_owned(),
            Request::Insert(r) => r.table = table.to_owned(),
            Request::Update(r) => r.table = table.to_owned(),
            Request::Delete(r) => r.table = table.to_owned(),
            Request::Describe(r) => r.table = table.to_owned(),
            Request::Upsert(r) => r.table = table.to_owned(),
            Request::Template(_) | Request::Execute(_) | Request::Transaction(_) => {}
        }
    }

    /// Sets the filter (`whereConditions`) of a select, update or delete.
    pub fn set_filter(&mut self, filter: &str) {
        match self {
            Request::Select(r) => r.filter = filter.to_owned(),
            Request::Update(r) => r.filter = filter.to_owned(),
            Request::Delete(r) => r.filter = filter.to_owned(),
            Request::Template(_)
            | Request::Insert(_)
            | Request::Execute(_)
            | Request::Describe(_)
            | Request::Upsert(_)
            | Request::Transaction(_) => {}
        }
    }
}

/// A `#[param(flatten)]` group of a `#[db_tool(operation = ...)]` tool that
/// fills some of the request's arguments: parameters several tools share
/// are declared once. The tool's own fields fill the rest; an argument no
/// one fills keeps its default (an empty table or filter is refused when
/// the tool runs).
pub trait RequestArgs {
    /// Sets the arguments this group holds on `request`.
    fn fill(&self, request: &mut Request);
}

/// A fixed template with its values.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateRequest {
    /// The template, with `$1`, `$2`, ... placeholders.
    pub sql: &'static str,
    /// Whether the template only reads (it is a query).
    pub read_only: bool,
    /// The placeholders' values, in order.
    pub binds: Vec<Bind>,
}

/// Arguments of the select tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectRequest {
    /// The table to read.
    pub table: String,
    /// Comma-separated columns; empty or `*` for all.
    pub columns: String,
    /// Filter conditions (a SQL boolean expression); empty for all rows.
    pub filter: String,
    /// `column [ASC|DESC], ...`; empty for the table's order.
    pub order_by: String,
    /// Most rows to return; `None` for the tool's maximum.
    pub limit: Option<i64>,
    /// Rows to skip first.
    pub offset: Option<i64>,
}

/// Arguments of the insert tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InsertRequest {
    /// The table to add rows to.
    pub table: String,
    /// One row object or an array of them.
    pub rows: serde_json::Value,
}

/// Arguments of the update tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateRequest {
    /// The table to change.
    pub table: String,
    /// Column → new value.
    pub values: serde_json::Value,
    /// Which rows; required, and never always true.
    pub filter: String,
}

/// Arguments of the delete tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeleteRequest {
    /// The table to remove rows from.
    pub table: String,
    /// Which rows; required, and never always true.
    pub filter: String,
}

/// Arguments of the describe tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DescribeRequest {
    /// The table to describe; empty lists the tables the tool may use.
    pub table: String,
}

/// Arguments of the upsert tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpsertRequest {
    /// The table to add rows to or change rows of.
    pub table: String,
    /// One row object or an array of them; each holds the conflict columns.
    pub rows: serde_json::Value,
    /// Comma-separated columns of a primary key or unique constraint: a
    /// row whose values there match a stored row updates it.
    pub conflict_columns: String,
}

/// Arguments of the transaction tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TransactionRequest {
    /// `begin`, `commit` or `rollback`.
    pub action: String,
    /// Seconds the transaction may stay open (`begin` only); `None` for
    /// the default, 60.
    pub time_limit: Option<i64>,
}

/// Arguments of the execute tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecuteRequest {
    /// Exactly one SQL statement.
    pub sql: String,
}

/// Default most rows a call returns.
pub const DEFAULT_MAX_ROWS: u32 = 1000;
/// Most rows any call may return, whatever the settings say.
pub const HARD_MAX_ROWS: u32 = 10_000;
/// Default time limit of a statement, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u32 = 30;

/// Settings the workflow author fixes for a SQL tool (never the model).
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct ToolOptions {
    /// Comma-separated tables the tool may use; empty allows every table of the schema.
    #[param(default = "", placeholder = "customers, orders")]
    pub allowed_tables: String,
    /// Comma-separated tables the tool may never use, even when allowed above.
    #[param(default = "")]
    pub denied_tables: String,
    /// Most rows a call returns (at most 10,000); more are cut with a warning.
    #[param(default = 1000, min = 1, max = 10000)]
    pub max_rows: u32,
    /// Seconds a statement may run before it is cancelled.
    #[param(default = 30, min = 1, max = 3600)]
    pub timeout: u32,
    /// The schema whose tables the tool uses: `public` on PostgreSQL, `main` on SQLite when empty.
    #[param(default = "")]
    pub schema: String,
    /// Let the execute tool run INSERT, UPDATE and DELETE statements (never DDL).
    #[param(default = false)]
    pub allow_writes: bool,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            allowed_tables: String::new(),
            denied_tables: String::new(),
            max_rows: DEFAULT_MAX_ROWS,
            timeout: DEFAULT_TIMEOUT_SECS,
            schema: String::new(),
            allow_writes: false,
        }
    }
}

/// A Rust value that can be bound to a placeholder of a `#[db_tool]` template.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be bound to a SQL placeholder",
    label = "this field is bound to a placeholder of the query",
    note = "bindable types: integers, floats, bool, String, &str, Vec<u8>, serde_json::Value, and Option of any of them"
)]
pub trait ToBind {
    /// The value to bind.
    fn to_bind(&self) -> Bind;
}

macro_rules! bind_int {
    ($($t:ty),*) => {$(
        impl ToBind for $t {
            fn to_bind(&self) -> Bind {
                Bind::Int(i64::from(*self))
            }
        }
    )*};
}
bind_int!(i8, i16, i32, i64, u8, u16, u32);

impl ToBind for f32 {
    fn to_bind(&self) -> Bind {
        Bind::Float(f64::from(*self))
    }
}
impl ToBind for f64 {
    fn to_bind(&self) -> Bind {
        Bind::Float(*self)
    }
}
impl ToBind for bool {
    fn to_bind(&self) -> Bind {
        Bind::Bool(*self)
    }
}
impl ToBind for String {
    fn to_bind(&self) -> Bind {
        Bind::Text(self.clone())
    }
}
impl ToBind for &str {
    fn to_bind(&self) -> Bind {
        Bind::Text((*self).to_owned())
    }
}
impl ToBind for Vec<u8> {
    fn to_bind(&self) -> Bind {
        Bind::Bytes(self.clone())
    }
}
impl ToBind for serde_json::Value {
    fn to_bind(&self) -> Bind {
        match self {
            serde_json::Value::Null => Bind::Null,
            serde_json::Value::String(s) => Bind::Text(s.clone()),
            other => Bind::Text(other.to_string()),
        }
    }
}
impl<T: ToBind> ToBind for Option<T> {
    fn to_bind(&self) -> Bind {
        self.as_ref().map_or(Bind::Null, ToBind::to_bind)
    }
}

/// A node whose calls run SQL: what `#[db_tool]` implements.
pub trait DbTool: nodekit_core::node::Node + Send + 'static {
    /// The operation's name in responses (`select`, ...); used when a call's
    /// arguments are refused before a request exists.
    const OPERATION: &'static str = "query";

    /// The request of one call, built from the node's fields (the LLM's arguments included).
    fn request(&self) -> Request;

    /// The workflow author's settings.
    fn options(&self) -> ToolOptions {
        ToolOptions::default()
    }
}

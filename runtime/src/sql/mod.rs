//! SQL tools for agents: the machinery behind `#[db_tool]` and the select,
//! insert, update, delete and execute tool nodes.
//!
//! Safety is enforced here, not asked of the model: identifiers are checked
//! against the live schema and quoted by us, filters are parsed into a tree
//! that is checked against an allow-list and written back as SQL by us with
//! every literal bound, the execute tool accepts one checked query, reads run
//! in read-only transactions with time limits, and errors are sanitized.

pub mod database;
pub mod error;
pub mod filter;
pub mod names;
pub mod operation;
pub mod request;
pub mod response;
pub mod schema;
pub mod statement;
pub mod tool;
pub mod value;
pub mod writer;

pub use request::{
    DbTool, DeleteRequest, ExecuteRequest, InsertRequest, Request, SelectRequest, TemplateRequest,
    ToBind, ToolOptions, UpdateRequest,
};
pub use response::{ErrorType, ToolError};
pub use schema::{Column, ColumnKind, Dialect, Table};
pub use writer::{Bind, SqlWriter};

//! SQL tools for agents: the machinery behind `#[db_tool]` and the
//! describe, select, insert, upsert, update, delete and execute tool nodes.
//!
//! # One call, end to end
//!
//! ```text
//! LLM arguments ──$fromAI──▶ node struct ──DbTool::request──▶ Request
//!   ──operation::run──▶ checks (names, filter, statement) ──SqlWriter──▶ SQL + binds
//!   ──database::Session (read-only tx, time limit)──▶ rows ──value──▶ JSON response
//! ```
//!
//! A refused request is an answer (`success: false`, an `errorType` of
//! eight categories, a `reason` where the category is broad, a
//! suggestion), never an `Err`: the model reads it and retries.
//!
//! # Safety is enforced here, not asked of the model
//!
//! - Every argument is size-checked; NUL and other control characters are refused.
//! - Table names are resolved in the live catalog (`pg_catalog` /
//!   `sqlite_schema`, `pragma_table_info`) on every call, filtered through
//!   the workflow author's allowed and denied lists, and quoted by us. A
//!   missing table and a forbidden one get the same answer, whose
//!   suggestion lists only the tables the tool may use.
//! - Columns (`columns`, `orderBy`, `values`, `rows` keys,
//!   `conflictColumns`) must be columns of that table.
//! - The describe tool answers from the catalog, in a read-only session:
//!   the tables the tool may use, or one of them with its columns
//!   (type, nullability, default), primary and unique keys, the foreign
//!   keys to tables the tool may use in its schema, and an approximate row
//!   count. A table the lists leave out appears in no answer, suggestion or
//!   error.
//! - An upsert's conflict columns must be, as a set, the primary key or a
//!   unique constraint of the table (non-partial, on plain columns), read
//!   from the live catalog; each row must give them a value, and no two
//!   rows the same values. nodekit writes `INSERT ... ON CONFLICT (...) DO
//!   UPDATE SET ... RETURNING *`, the same on PostgreSQL and SQLite.
//! - Transactions across calls ([`transaction`]) exist only when the
//!   author connects the transaction tool, belong to one agent run, and are
//!   rolled back at the run's end or their time limit if not committed.
//! - Filters are parsed as one expression, checked against an allow-list and
//!   rewritten by us with every literal bound and typed from its column.
//!   Update and delete need a filter, and one that matches
//!   every row (`1=1`, `id = id`, `x OR TRUE`, ...) is refused. Behind the
//!   static check, the database decides: an update or delete (the execute
//!   tool's too) that touched every row of a table of more than one row is
//!   rolled back and refused.
//! - The execute tool accepts exactly one statement. It must be a query
//!   unless the author set `allowWrites` (then INSERT, UPDATE and DELETE
//!   with a WHERE too; never DDL). Every relation and function in every
//!   position is checked against allow-lists, and the SQL sent is our
//!   rendering of the checked tree.
//! - Statements go through the extended protocol on PostgreSQL (one
//!   statement per message). Reads run in `BEGIN READ ONLY` with
//!   `statement_timeout` and `lock_timeout` set for the transaction, and
//!   `search_path` set to the tool's schema only. On SQLite, reads use a
//!   connection opened read-only, and a progress handler interrupts any
//!   statement at the deadline.
//! - Rows are streamed and cut at the row limit or at 2 MiB of answer
//!   with `truncated: true` and a warning. A `limit` argument over 10,000
//!   is lowered to 10,000, with a warning.
//! - SQLite connections refuse values over 4 MiB and `LIKE` patterns over
//!   100 characters, and read double-quoted unknown names as errors, not
//!   strings (`sqlite_guard`): one step of SQLite's VM stays short, so the
//!   deadline holds.
//! - Errors are sanitized and sorted into the categories of [`ErrorType`].
//!
//! # Defaults and limits
//!
//! | setting | default | bounds |
//! | --- | --- | --- |
//! | `maxRows` | 1,000 | 1 to 10,000 |
//! | `timeout` | 30 s | 1 s to 1 h |
//! | `schema` | `public` (PostgreSQL), `main` (SQLite) | |
//! | `allowedTables` | every table of the schema | |
//! | `allowWrites` | off | execute tool only |
//! | rows per insert | | 1,000 |
//! | filter | | 4,096 characters, 256 nodes, `LIKE` patterns of 100 characters |
//! | executed statement | | 16 KiB, 2,000 tokens |
//! | one value the model sends | | 1 MiB |
//! | one answer | | 2 MiB of rows |
//!
//! # Credentials
//!
//! `postgres` is n8n's credential (host, port, database, user, password,
//! ssl); hosts under `neon.tech` always connect with at least
//! `sslmode=require`. `sqlite` is `{"databasePath": "..."}` for an existing
//! file; a tool never creates one. Each tool instance keeps its own small
//! pool, which connects on the first call.
//!
//! # Values
//!
//! Results are typed JSON: numbers, booleans and null as such,
//! `numeric` as exact strings, timestamps in ISO 8601, `bytea`/BLOB as
//! base64, `json` as JSON. Values the model sends for a PostgreSQL column
//! are bound as text and cast to the column's type, so the server's own
//! parser types them and `numeric` keeps its precision. On SQLite they must
//! fit the column's declared type.

// Without a database feature (`sqlite`, `postgres`) the crate is empty.
#![cfg(any(feature = "sqlite", feature = "postgres"))]

// The parameter derive's expansions name `::nodekit`: the core has what they name.
extern crate nodekit_core as nodekit;

mod catalog;
mod database;
mod error;
mod filter;
mod lexical;
mod names;
mod operation;
mod request;
mod response;
mod schema;
#[cfg(feature = "sqlite")]
mod sqlite_guard;
mod statement;
pub(crate) mod tool;
pub mod transaction;
mod value;
mod writer;

/// What the engine's unit tests share.
#[cfg(all(test, feature = "sqlite", feature = "postgres"))]
mod testing {
    use sqlx::{Connection, PgConnection};

    /// A connection to the PostgreSQL of `scripts/services.sh`; outside CI a
    /// missing or unreachable server skips the test with a reason, under
    /// `CI=true` it fails it.
    pub(crate) async fn pg() -> Option<PgConnection> {
        let url = nodekit_test_support::server("DATABASE_URL")?;
        match PgConnection::connect(&url).await {
            Ok(conn) => Some(conn),
            Err(e) if nodekit_test_support::in_ci() => panic!("PostgreSQL is not reachable: {e}"),
            Err(e) => {
                eprintln!("skipping: PostgreSQL is not reachable: {e}");
                None
            }
        }
    }
}

pub use database::SqliteConfig;
#[cfg(feature = "postgres")]
pub use database::settle;
pub use request::{
    DbTool, DeleteRequest, DescribeRequest, ExecuteRequest, InsertRequest, Request, RequestArgs,
    SelectRequest, TemplateRequest, ToBind, ToolOptions, TransactionRequest, UpdateRequest,
    UpsertRequest,
};
pub use response::{ErrorType, Reason, ToolError};
pub use tool::SqlToolError;
#[doc(hidden)]
pub use tool::supply_db_tool;
pub use writer::Bind;

/// The engine's internals, for nodekit's own benchmarks (through
/// `nodekit::__bench`). Not public API.
#[doc(hidden)]
pub mod bench {
    pub use super::database::Database;
    pub use super::filter::Filter;
    pub use super::operation::run;
    pub use super::schema::{Column, ColumnKind, Dialect, Table};
    pub use super::writer::SqlWriter;
}

// n8n has no SQLite credential type: the SQL tools define theirs.
nodekit_core::credential_type!(SqliteConfig, name = "sqlite", display_name = "SQLite");

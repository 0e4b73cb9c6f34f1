//! A [`DbTool`] as an agent tool: one database per tool instance (pools that
//! connect on first use), and one checked request per call.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::database::Database;
#[cfg(feature = "sqlite")]
use super::database::SqliteConfig;
#[cfg(feature = "postgres")]
use super::database::connection_error;
use super::operation::{error_response, run};
use super::request::DbTool;
use super::response::{Reason, ToolError};
use nodekit_core::error::{Error, Result};
use nodekit_core::node::Supply;
use nodekit_core::node::SupplyContext;
use nodekit_core::tool::{NodeTool, Tool, ToolDefinition};
#[cfg(feature = "postgres")]
use nodekit_db::postgres::PostgresConfig;

/// A SQL tool node could not reach its database or was refused: the
/// node, and the tool's error (category, reason, SQLSTATE) as the source.
#[derive(Debug, thiserror::Error)]
#[error("node `{}`: {source}", nodekit_core::error::quoted(.node))]
pub struct SqlToolError {
    /// The node.
    pub node: String,
    /// The tool's error.
    #[source]
    pub source: ToolError,
}

impl From<SqlToolError> for Error {
    fn from(e: SqlToolError) -> Self {
        Error::other(e)
    }
}

/// The database of a tool node, from whichever credential it was given:
/// `postgres` (n8n's PostgreSQL credential; Neon hosts get SSL) or `sqlite`
/// (`{"databasePath": "..."}`). A credential for a database this build has
/// no SQL tools for (features `sql-tools-postgres`, `sql-tools-sqlite`) is
/// refused with a connection error that names the feature.
pub fn database_from_credentials(ctx: &SupplyContext) -> Result<Database> {
    // serde's message would quote the offending value, which may be a password.
    let invalid = |kind: &str, fields: &str| Error::InvalidCredentials {
        credential: kind.to_owned(),
        problem: format!("is invalid; it needs {fields}"),
    };
    let refused = |source: ToolError| {
        Error::from(SqlToolError {
            node: ctx.node_name().to_owned(),
            source,
        })
    };
    if let Ok(value) = ctx.credentials("postgres") {
        #[cfg(not(feature = "postgres"))]
        return Err(refused(not_built(
            "PostgreSQL",
            "sql-tools-postgres",
            value,
        )));
        #[cfg(feature = "postgres")]
        {
            let config: PostgresConfig = serde_json::from_value(value.clone()).map_err(|_| {
                invalid(
                    "postgres",
                    "host, database and user (text), and optionally port (a number), password and ssl (text)",
                )
            })?;
            // The context's shared pool: a new item or session does not connect again.
            let pg = nodekit_db::postgres::Postgres::shared(ctx.pools(), &config)
                .map_err(|e| refused(connection_error(e)))?;
            return Ok(Database::postgres(&pg));
        }
    }
    if let Ok(value) = ctx.credentials("sqlite") {
        #[cfg(not(feature = "sqlite"))]
        return Err(refused(not_built("SQLite", "sql-tools-sqlite", value)));
        #[cfg(feature = "sqlite")]
        {
            let config: SqliteConfig = serde_json::from_value(value.clone())
                .map_err(|_| invalid("sqlite", "databasePath (text)"))?;
            return Database::sqlite(&config).map_err(refused);
        }
    }
    Err(Error::MissingCredentials {
        node: ctx.node_name().to_owned(),
        credential: "postgres or sqlite".into(),
    })
}

/// The answer to a credential for a database this build has no SQL tools for.
#[cfg(not(all(feature = "postgres", feature = "sqlite")))]
fn not_built(database: &str, feature: &str, _credential: &Value) -> ToolError {
    ToolError::new(
        super::response::ErrorType::ConnectionError,
        format!("this build of nodekit has no {database} SQL tools (cargo feature `{feature}`)"),
    )
}

/// Builds the tool a [`DbTool`] node supplies.
pub fn supply_db_tool<T: DbTool>(
    params: Value,
    ctx: SupplyContext,
) -> BoxFuture<'static, Result<Supply>> {
    Box::pin(async move {
        let tool = NodeTool::prepared(T::description(), ctx.node_name(), params)?;
        let db = database_from_credentials(&ctx)?;
        let runner: Arc<dyn Tool> = Arc::new(DbToolRunner::<T> {
            tool,
            db,
            node: PhantomData,
        });
        Ok(Supply::Tool(runner))
    })
}

/// Runs each call of a [`DbTool`] node on the node's database.
struct DbToolRunner<T> {
    tool: NodeTool,
    db: Database,
    node: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for DbToolRunner<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbToolRunner")
            .field("tool", &self.tool.definition().name)
            .field("dialect", &self.db.dialect())
            .finish()
    }
}

impl<T: DbTool> Tool for DbToolRunner<T> {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    fn call<'a>(&'a self, args: Value) -> BoxFuture<'a, Result<Value>> {
        Box::pin(async move {
            // Arguments that do not fit the schema are answered like any
            // other refused request, so the model sees one response shape.
            let node: T = match self.tool.instantiate(&args) {
                Ok(node) => node,
                Err(e) => {
                    return Ok(error_response(
                        T::OPERATION,
                        &ToolError::malformed(Reason::Malformed, e.to_string()),
                    ));
                }
            };
            Ok(run(&self.db, &node.request(), &node.options()).await)
        })
    }
}

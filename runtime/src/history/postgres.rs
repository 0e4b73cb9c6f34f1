//! Chat history in PostgreSQL, in n8n's and LangChain's `n8n_chat_histories` layout (sqlx).

use futures::future::BoxFuture;
use sqlx::Row;
use sqlx::postgres::PgPool;

use super::store::{check_session, decode, quoted_table, refused, sql_history_common};
use crate::error::{Backend, StoreError};
use crate::error::{Error, Result};
use crate::history::ChatHistory;
use crate::message::Message;

const STORE: &str = "PostgreSQL";

/// A failure of this store's database, with the driver's error kept.
fn db_error(e: sqlx::Error) -> Error {
    StoreError::new(Backend::Postgres, e).into()
}

/// No connection to this store's database.
fn cannot_connect(e: sqlx::Error) -> Error {
    StoreError::new(Backend::Postgres, e)
        .during("cannot connect")
        .into()
}

/// n8n's default table.
pub const DEFAULT_TABLE: &str = "n8n_chat_histories";

/// One session's messages in a PostgreSQL table.
#[derive(Debug, Clone)]
pub struct PostgresChatHistory {
    pool: PgPool,
    table: String,
    session: String,
}

/// Where a PostgreSQL server is (n8n's `postgres` credential).
#[derive(Clone, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostgresConfig {
    /// Host name or address.
    pub host: String,
    /// Port (default 5432).
    #[serde(default = "default_port")]
    pub port: u16,
    /// Database name.
    pub database: String,
    /// User name.
    pub user: String,
    /// Password.
    #[serde(default)]
    pub password: String,
    /// `disable`, `allow`, `prefer` (default), `require`, `verify-ca` or `verify-full`.
    #[serde(default = "default_ssl")]
    pub ssl: String,
}

fn default_port() -> u16 {
    5432
}
fn default_ssl() -> String {
    "prefer".into()
}

impl std::fmt::Debug for PostgresConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("database", &self.database)
            .field("user", &self.user)
            .field("password", &"***")
            .field("ssl", &self.ssl)
            .finish()
    }
}

impl PostgresConfig {
    /// Whether the host is a Neon endpoint.
    pub fn is_neon(&self) -> bool {
        let host = self.host.trim_end_matches('.').to_ascii_lowercase();
        host == "neon.tech" || host.ends_with(".neon.tech")
    }

    /// Connection options. Neon hosts (`*.neon.tech`) always get at least
    /// `require`: Neon refuses unencrypted connections, and a weaker mode
    /// would only fail later with a less helpful message.
    pub(crate) fn options(&self) -> Result<sqlx::postgres::PgConnectOptions> {
        use sqlx::postgres::PgSslMode;
        let mut ssl = self.ssl.parse::<PgSslMode>().map_err(|_| {
            let shown = crate::error::quoted(&self.ssl);
            refused(STORE, format!("unknown ssl mode {shown:?}"))
        })?;
        if self.is_neon()
            && matches!(
                ssl,
                PgSslMode::Disable | PgSslMode::Allow | PgSslMode::Prefer
            )
        {
            ssl = PgSslMode::Require;
        }
        Ok(sqlx::postgres::PgConnectOptions::new()
            .host(&self.host)
            .port(self.port)
            .database(&self.database)
            .username(&self.user)
            .password(&self.password)
            .ssl_mode(ssl))
    }
}

/// A pool for one history. There is no process-wide cache on purpose: a
/// pool belongs to the Tokio runtime that made it. Share a pool with
/// [`PostgresChatHistory::with_pool`], e.g. one from
/// [`SharedPools`](crate::node::SharedPools).
async fn pool(options: sqlx::postgres::PgConnectOptions) -> Result<PgPool> {
    let pool = crate::node::postgres_pool_options(8).connect_lazy_with(options);
    // Connect now, so that a wrong server or login is reported here.
    drop(
        crate::node::refused_at_once(&pool, pool.acquire())
            .await
            .map_err(cannot_connect)?,
    );
    Ok(pool)
}

impl PostgresChatHistory {
    /// Connects to `url` (`postgres://user:password@host:port/db`); the error never shows the password.
    pub async fn connect(url: &str, table: &str, session: &str) -> Result<Self> {
        let options = url
            .parse::<sqlx::postgres::PgConnectOptions>()
            .map_err(|_| refused(STORE, "the connection URL cannot be read"))?;
        let pool = pool(options).await?;
        Self::with_pool(pool, table, session).await
    }

    /// Connects with n8n's credential fields.
    pub async fn connect_config(
        config: &PostgresConfig,
        table: &str,
        session: &str,
    ) -> Result<Self> {
        let pool = pool(config.options()?).await?;
        Self::with_pool(pool, table, session).await
    }

    /// Uses an existing pool; creates the table and its index if missing.
    pub async fn with_pool(pool: PgPool, table: &str, session: &str) -> Result<Self> {
        check_session(session, STORE)?;
        let name = table;
        let table = quoted_table(table, STORE)?;
        // The DDL runs once per table and database in this process: under many
        // concurrent connects it would otherwise queue every one on its lock.
        static ENSURED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<String>>> =
            std::sync::OnceLock::new();
        let opts = pool.connect_options();
        let key = format!(
            "{}:{}/{}/{name}",
            opts.get_host(),
            opts.get_port(),
            opts.get_database().unwrap_or("")
        );
        let ensured = ENSURED.get_or_init(Default::default);
        if ensured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&key)
        {
            return Ok(PostgresChatHistory {
                pool,
                table,
                session: session.to_owned(),
            });
        }
        // Concurrent `CREATE ... IF NOT EXISTS` can still collide in PostgreSQL: serialise it.
        let ddl = format!(
            "SELECT pg_advisory_xact_lock(7428573);
             CREATE TABLE IF NOT EXISTS {table} (id SERIAL PRIMARY KEY, session_id VARCHAR(255) NOT NULL, message JSONB NOT NULL);
             CREATE INDEX IF NOT EXISTS \"{name}_session_id_id_idx\" ON {table} (session_id, id);"
        );
        let mut tx = crate::node::refused_at_once(&pool, pool.begin())
            .await
            .map_err(cannot_connect)?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
            .execute(&mut *tx)
            .await
            .map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
        ensured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key);
        Ok(PostgresChatHistory {
            pool,
            table,
            session: session.to_owned(),
        })
    }
}

impl ChatHistory for PostgresChatHistory {
    sql_history_common!();

    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let stored: Vec<serde_json::Value> =
                messages.iter().map(Message::to_stored_flat).collect();
            if stored.iter().any(|v| v.to_string().contains("\\u0000")) {
                return Err(Error::Store {
                    store: STORE,
                    message: "PostgreSQL's jsonb cannot hold the NUL character (U+0000); the messages were not saved".into(),
                });
            }
            // One statement, so one round trip and its own transaction: the CTE
            // takes a per-session lock first, so a batch stays together and in
            // order (`ORDER BY n` makes the serial ids follow the batch).
            let sql = format!(
                "WITH lock AS (SELECT pg_advisory_xact_lock(hashtext($1)))
                 INSERT INTO {} (session_id, message)
                 SELECT $1, m FROM lock, unnest($2::jsonb[]) WITH ORDINALITY AS u(m, n) ORDER BY n",
                self.table
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(&self.session)
                .bind(&stored)
                .execute(&self.pool)
                .await
                .map(|_| ())
                .map_err(db_error)
        })
    }
}

fn read_row(row: &sqlx::postgres::PgRow) -> Option<Message> {
    let id: i32 = row.try_get("id").ok()?;
    let value: serde_json::Value = row.try_get("message").ok()?;
    decode(STORE, id, &value)
}

#[cfg(test)]
mod tests {
    use sqlx::postgres::PgSslMode;

    use super::PostgresConfig;

    fn config(host: &str, ssl: &str) -> PostgresConfig {
        serde_json::from_value(serde_json::json!({
            "host": host, "database": "db", "user": "u", "password": "p", "ssl": ssl
        }))
        .unwrap()
    }

    /// Neon refuses plain connections, so its hosts never get a weaker mode than `require`.
    #[test]
    fn neon_hosts_always_use_ssl() {
        let mode = |host: &str, ssl: &str| config(host, ssl).options().unwrap().get_ssl_mode();
        for ssl in ["disable", "allow", "prefer", "require"] {
            assert!(matches!(
                mode("ep-cool-night-123.eu-central-1.aws.neon.tech", ssl),
                PgSslMode::Require
            ));
        }
        assert!(matches!(
            mode("ep-x.neon.tech.", "verify-full"),
            PgSslMode::VerifyFull
        ));
        assert!(matches!(mode("127.0.0.1", "disable"), PgSslMode::Disable));
        assert!(!config("neon.tech.example.com", "disable").is_neon());
        assert!(!config("notneon.tech", "disable").is_neon());
    }
}

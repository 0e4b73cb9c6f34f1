//! PostgreSQL, reached one way by every store.
//!
//! [`PostgresConfig`] says where a server is: n8n's `postgres` credential,
//! or a `postgres://` URL. [`Postgres`] is a connection pool to it with
//! nodekit's pool policy. Chat histories, agent memory, vector stores and
//! the SQL tools all take a [`Postgres`]; a node gets the one its process
//! shares ([`Postgres::shared`], from its context's
//! [`SharedPools`]), so every node with the same
//! login uses the same connections.
//!
//! ```no_run
//! # async fn f() -> nodekit::Result<()> {
//! use nodekit::history::postgres::PostgresChatHistory;
//! use nodekit::postgres::{Postgres, PostgresConfig};
//!
//! let config: PostgresConfig = "postgres://app:secret@127.0.0.1:5432/shop".parse()?;
//! let pg = Postgres::new(&config)?;
//! let history = PostgresChatHistory::open(&pg, "n8n_chat_histories", "session-1").await?;
//! # Ok(()) }
//! ```

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgSslMode};

use nodekit_core::error::{Backend, Error, Result, StoreError};
use nodekit_core::node::SharedPools;

/// Most connections a pool nodekit makes opens: as many as an n8n worker
/// runs executions at once by default.
pub const POOL_SIZE: u32 = 10;

/// How long a call waits for one of the pool's connections.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection idle for longer is pinged before a query gets it, and
/// replaced if the server has closed it (a restart, an idle-session
/// timeout): a restart takes longer than this, so a connection that
/// outlived one is always checked. One in steady use is not pinged, which
/// saves a round trip per query under load (sqlx's default pings each).
pub const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Where a PostgreSQL server is, and the login (n8n's `postgres`
/// credential). A `postgres://user:password@host:port/database?sslmode=…`
/// URL parses into one too.
#[derive(Clone, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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

/// A setting PostgreSQL cannot be reached with.
fn refused(message: impl Into<String>) -> Error {
    Error::Store {
        store: Backend::Postgres.name(),
        message: message.into(),
    }
}

impl PostgresConfig {
    /// The server at `host:port`, database `database`, as `user` with
    /// `password`, TLS if the server offers it (`prefer`).
    pub fn new(
        host: impl Into<String>,
        port: u16,
        database: impl Into<String>,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> PostgresConfig {
        PostgresConfig {
            host: host.into(),
            port,
            database: database.into(),
            user: user.into(),
            password: password.into(),
            ssl: default_ssl(),
        }
    }

    /// The same with the TLS mode `ssl` (see [`PostgresConfig::ssl`]).
    pub fn with_ssl(mut self, ssl: impl Into<String>) -> PostgresConfig {
        self.ssl = ssl.into();
        self
    }

    /// Whether the host is a Neon endpoint.
    pub fn is_neon(&self) -> bool {
        let host = self.host.trim_end_matches('.').to_ascii_lowercase();
        host == "neon.tech" || host.ends_with(".neon.tech")
    }

    /// Connection options. Neon hosts (`*.neon.tech`) always get at least
    /// `require`: Neon refuses unencrypted connections, and a weaker mode
    /// would only fail later with a less helpful message.
    pub fn options(&self) -> Result<PgConnectOptions> {
        let mut ssl = self.ssl.parse::<PgSslMode>().map_err(|_| {
            let shown = nodekit_core::error::quoted(&self.ssl);
            refused(format!("unknown ssl mode {shown:?}"))
        })?;
        if self.is_neon()
            && matches!(
                ssl,
                PgSslMode::Disable | PgSslMode::Allow | PgSslMode::Prefer
            )
        {
            ssl = PgSslMode::Require;
        }
        Ok(PgConnectOptions::new()
            .host(&self.host)
            .port(self.port)
            .database(&self.database)
            .username(&self.user)
            .password(&self.password)
            .ssl_mode(ssl))
    }
}

/// `postgres://user:password@host:port/database`, with an optional
/// `?sslmode=…`. The error never shows the URL, which may hold a password.
impl FromStr for PostgresConfig {
    type Err = Error;

    fn from_str(text: &str) -> Result<PostgresConfig> {
        let expected = "the connection URL cannot be read: expected postgres://user:password@host:port/database";
        let url = url::Url::parse(text).map_err(|_| refused(expected))?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            return Err(refused(expected));
        }
        let decoded = |part: &str| {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| refused(expected))
        };
        let host = url.host_str().ok_or_else(|| refused(expected))?;
        let mut config = PostgresConfig::new(
            host.trim_start_matches('[').trim_end_matches(']'),
            url.port().unwrap_or_else(default_port),
            decoded(url.path().trim_start_matches('/'))?,
            decoded(url.username())?,
            decoded(url.password().unwrap_or(""))?,
        );
        for (key, value) in url.query_pairs() {
            match &*key {
                "sslmode" => config.ssl = value.into_owned(),
                other => {
                    return Err(refused(format!(
                        "the connection URL's parameter {:?} is not supported (only sslmode is)",
                        nodekit_core::error::shorten(other, 40)
                    )));
                }
            }
        }
        Ok(config)
    }
}

/// nodekit's pool policy, for a pool of one's own: `max_connections`, 10
/// seconds to wait for one, and a connection pinged only when it has been
/// idle for more than a second (sqlx pings each one it hands out, a round
/// trip per query).
pub fn pool_options(max_connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for <= PING_AFTER_IDLE {
                    return Ok(true);
                }
                // A broken connection is closed, and another one given.
                Ok(sqlx::Connection::ping(conn).await.is_ok())
            })
        })
}

/// `connect`, the pool's acquire or begin, except that a pool with no
/// connection open fails at once, as a refused connection, when nothing
/// listens on its server's port. sqlx takes a refusal for a server starting
/// up and tries again until the acquire timeout, so a stopped or wrong
/// server would otherwise be reported 10 seconds later, as a timeout.
pub async fn refused_at_once<T>(
    pool: &PgPool,
    connect: impl std::future::Future<Output = std::result::Result<T, sqlx::Error>>,
) -> std::result::Result<T, sqlx::Error> {
    let options = pool.connect_options();
    if pool.size() > 0 || options.get_socket().is_some() {
        return connect.await;
    }
    let probe = tokio::net::TcpStream::connect((options.get_host(), options.get_port()));
    tokio::pin!(connect);
    tokio::select! {
        biased;
        connected = &mut connect => connected,
        probe = probe => match probe {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Err(sqlx::Error::Io(e)),
            // Listening (or not known yet): the pool decides.
            _ => connect.await,
        },
    }
}

/// A PostgreSQL server reached through a pool: what every store nodekit
/// has on PostgreSQL is opened with. Cloning shares the pool.
#[derive(Clone)]
pub struct Postgres {
    pool: PgPool,
}

impl Postgres {
    /// A pool to `config`'s server with nodekit's policy: up to
    /// [`POOL_SIZE`] connections, opened when first needed, 10 seconds to
    /// wait for one, and a connection idle for over a second checked before
    /// use. A node should take the pool its process shares instead:
    /// [`Postgres::shared`].
    pub fn new(config: &PostgresConfig) -> Result<Postgres> {
        Ok(Postgres::from_options(config.options()?))
    }

    /// The same for sqlx's connection options, such as a `search_path`
    /// that puts the tables in a schema of their own.
    pub fn from_options(options: PgConnectOptions) -> Postgres {
        Postgres {
            pool: pool_options(POOL_SIZE).connect_lazy_with(options),
        }
    }

    /// The pool `pools` keeps for `config`'s server and login (a node's
    /// context hands out its owner's set: `ctx.pools()`), made on first
    /// use with nodekit's policy ([`Postgres::new`]); it connects when a
    /// connection is first needed. A closed pool is replaced.
    pub fn shared(pools: &SharedPools, config: &PostgresConfig) -> Result<Postgres> {
        Postgres::shared_with(pools, config, "", |options| options)
    }

    /// The same for a pool whose connections start with the session
    /// settings `settings` adds (named `name`, which tells it apart from
    /// the plain pool and other settings).
    pub fn shared_with(
        pools: &SharedPools,
        config: &PostgresConfig,
        name: &'static str,
        settings: impl FnOnce(PgConnectOptions) -> PgConnectOptions,
    ) -> Result<Postgres> {
        pools.get_or_make(
            (config.clone(), name),
            |pg: &Postgres| !pg.is_closed(),
            || Ok(Postgres::from_options(settings(config.options()?))),
        )
    }

    /// A pool of one's own (sqlx's), as it is: its size, timeouts and
    /// session settings are the caller's.
    pub fn from_pool(pool: PgPool) -> Postgres {
        Postgres { pool }
    }

    /// The pool, for queries of one's own.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Opens a connection now, so that a stopped server or a wrong login
    /// is reported here rather than at first use. A port nobody listens on
    /// is reported at once.
    pub async fn check(&self) -> std::result::Result<(), StoreError> {
        let connection = refused_at_once(&self.pool, self.pool.acquire()).await;
        drop(connection.map_err(|e| {
            crate::store_error(Some(Backend::Postgres), e).during("cannot connect")
        })?);
        Ok(())
    }

    /// Server, port, database and user, without the password: who this
    /// is, for messages and for telling databases apart.
    pub fn target(&self) -> String {
        let options = self.pool.connect_options();
        format!(
            "postgres://{}@{}:{}/{}",
            options.get_username(),
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or_default()
        )
    }

    /// Whether the pool is closed ([`Postgres::close`]).
    pub fn is_closed(&self) -> bool {
        self.pool.is_closed()
    }

    /// Closes the pool: every clone's too. Calls in flight finish first.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Postgres").field(&self.target()).finish()
    }
}

#[cfg(test)]
mod tests {
    use sqlx::Connection;

    use super::*;

    fn config(host: &str, ssl: &str) -> PostgresConfig {
        PostgresConfig::new(host, 5432, "db", "u", "p").with_ssl(ssl)
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
        assert!(config("db.example.com", "sometimes").options().is_err());
    }

    #[test]
    fn a_url_gives_the_same_config_as_the_credential() {
        let url: PostgresConfig =
            "postgres://app%40shop:p%2Fw@db.example.com:6543/orders?sslmode=require"
                .parse()
                .unwrap();
        assert_eq!(
            url,
            PostgresConfig::new("db.example.com", 6543, "orders", "app@shop", "p/w")
                .with_ssl("require")
        );
        let ipv6: PostgresConfig = "postgresql://u@[::1]/db".parse().unwrap();
        assert_eq!(
            (ipv6.host.as_str(), ipv6.port, ipv6.ssl.as_str()),
            ("::1", 5432, "prefer")
        );
        for bad in [
            "mysql://u:pw-secret@h/db",
            "postgres://u:pw-secret@h/db?options=-c",
            "not a url pw-secret",
        ] {
            let e = bad.parse::<PostgresConfig>().unwrap_err().to_string();
            assert!(!e.contains("pw-secret"), "{e}");
        }
    }

    fn named(database: &str) -> PostgresConfig {
        serde_json::from_value(serde_json::json!({
            "host": "127.0.0.1", "database": database, "user": "u", "password": "p"
        }))
        .unwrap()
    }

    // Lazy pools open nothing, so no server is needed: closing one handle
    // shows which others share its pool.
    #[tokio::test]
    async fn one_pool_per_server_and_login_shared_by_clones() {
        let pools = SharedPools::default();
        let first = Postgres::shared(&pools, &named("a")).unwrap();
        let same = Postgres::shared(&pools.clone(), &named("a")).unwrap();
        let other = Postgres::shared(&pools, &named("b")).unwrap();
        let unshared = Postgres::shared(&SharedPools::default(), &named("a")).unwrap();
        first.close().await;
        assert!(same.is_closed());
        assert!(!other.is_closed() && !unshared.is_closed());
        // A closed pool is replaced, not handed out.
        assert!(!Postgres::shared(&pools, &named("a")).unwrap().is_closed());
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_replaced() {
        let Some(url) = nodekit_test_support::server("DATABASE_URL") else {
            return;
        };
        let config: PostgresConfig =
            serde_json::from_value(nodekit_test_support::postgres_credential(&url)).unwrap();
        let pg = Postgres::shared(&SharedPools::default(), &config).unwrap();
        let backend =
            || sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()").fetch_one(pg.pool());
        let first = backend().await.unwrap();
        let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
        let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(first)
            .fetch_one(&mut other)
            .await
            .unwrap();
        assert!(killed);
        tokio::time::sleep(PING_AFTER_IDLE + std::time::Duration::from_millis(200)).await;
        // The pool's only connection is dead: the ping finds it, a new one answers.
        assert_ne!(backend().await.unwrap(), first);
    }

    #[test]
    fn a_bad_ssl_mode_is_refused_without_a_pool() {
        let mut bad = named("a");
        bad.ssl = "sometimes".into();
        let e = Postgres::shared(&SharedPools::default(), &bad).unwrap_err();
        assert!(e.to_string().contains("unknown ssl mode"), "{e}");
    }
}

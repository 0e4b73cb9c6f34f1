//! The SQL tool nodes on SQLite and PostgreSQL: legitimate requests
//! return the right rows, and a corpus of attacks through every argument is
//! refused with a sensible `errorType` while the database stays unchanged.
//!
//! PostgreSQL comes from `DATABASE_URL` (started by `scripts/services.sh`);
//! each run works in a schema of its own. Under `CI=true` a missing server
//! fails the test; elsewhere the PostgreSQL half is skipped with a reason.

use std::str::FromStr;
use std::sync::Arc;

use nodekit::Catalog;
use nodekit::db_tool;
use nodekit::node::Supply;
use nodekit::node::SupplyContext;
use nodekit::run_log::RunLog;
use nodekit::sql::ToolOptions;
use nodekit::tool::Tool;
use serde_json::{Map, Value, json};
use sqlx::Row;

/// Rows every run starts from. `secrets` is denied to every tool.
const SETUP: &[&str] = &[
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE, status TEXT, age INTEGER, balance NUMERIC(12,2), created_at TIMESTAMP, active BOOLEAN)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total NUMERIC(12,2), status TEXT)",
    "CREATE TABLE secrets (id INTEGER PRIMARY KEY, api_key TEXT)",
    "CREATE TABLE numbers (n INTEGER PRIMARY KEY)",
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, meta JSON)",
    "CREATE TABLE tags (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), vault_id INTEGER REFERENCES secrets(id), label TEXT NOT NULL DEFAULT 'new', UNIQUE (customer_id, label))",
    "INSERT INTO customers VALUES (1, 'Ada Lovelace', 'ada@example.com', 'active', 36, 1200.50, '2024-01-02 10:00:00', TRUE)",
    "INSERT INTO customers VALUES (2, 'Alan Turing', 'alan@example.com', 'active', 41, 80.00, '2024-02-03 11:30:00', TRUE)",
    "INSERT INTO customers VALUES (3, 'Grace Hopper', 'grace@example.com', 'inactive', 85, 0.10, '2024-03-04 12:45:00', FALSE)",
    "INSERT INTO customers VALUES (4, 'Edsger O''Brien', NULL, 'active', 29, NULL, NULL, NULL)",
    "INSERT INTO orders VALUES (1, 1, 99.90, 'shipped'), (2, 1, 10.00, 'open'), (3, 2, 5.25, 'open')",
    "INSERT INTO secrets VALUES (1, 'sk-top-secret-value')",
];

/// Names of the customers with a status, older than an age. The template
/// uses `$2` before `$1`, which SQLite would number by first appearance.
#[db_tool(
    query = "SELECT name FROM customers WHERE age > $2 AND status = $1 ORDER BY id",
    name = "customersByStatus",
    display_name = "Customers By Status"
)]
pub struct CustomersByStatus {
    /// Which status.
    #[from_ai(description = "The status: active or inactive")]
    status: String,
    /// Only customers older than this.
    #[from_ai(description = "Minimum age", default = 0)]
    min_age: i64,
    /// The workflow author's settings.
    options: ToolOptions,
}

/// Renames a customer.
#[db_tool(
    query = "UPDATE customers SET name = $1 WHERE id = $2",
    name = "renameCustomer"
)]
pub struct RenameCustomer {
    /// The new name.
    #[from_ai(description = "The new name")]
    name: String,
    /// Which customer.
    #[from_ai(description = "The customer's id")]
    id: i64,
    /// The workflow author's settings.
    options: ToolOptions,
}

/// Which database a case runs on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Db {
    Sqlite,
    Postgres,
}

/// A database set up with [`SETUP`], and how to reach it.
struct Fixture {
    db: Db,
    credentials: Value,
    schema: String,
    pg: Option<sqlx::PgPool>,
    sqlite: Option<sqlx::SqlitePool>,
    _dir: Option<TempDir>,
}

struct TempDir(std::path::PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Fixture {
    async fn sqlite() -> Fixture {
        let dir = nodekit_test_support::scratch_dir().join(format!(
            "nodekit-sql-tools-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shop.db");
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .connect_with(options)
            .await
            .unwrap();
        for sql in SETUP {
            sqlx::raw_sql(sqlx::AssertSqlSafe(*sql))
                .execute(&pool)
                .await
                .unwrap();
        }
        sqlx::raw_sql("WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 3000) INSERT INTO numbers SELECT n FROM s")
            .execute(&pool)
            .await
            .unwrap();
        Fixture {
            db: Db::Sqlite,
            credentials: json!({"sqlite": {"databasePath": path.to_str().unwrap()}}),
            schema: String::new(),
            pg: None,
            sqlite: Some(pool),
            _dir: Some(TempDir(dir)),
        }
    }

    async fn postgres() -> Option<Fixture> {
        let url = nodekit_test_support::server("DATABASE_URL")?;
        let options = sqlx::postgres::PgConnectOptions::from_str(&url).unwrap();
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(2)
            .connect_with(options.clone())
            .await
            .unwrap();
        let schema = format!("nk_sql_{}_{}", std::process::id(), rand_suffix());
        let mut setup = format!("CREATE SCHEMA {schema}; SET search_path TO {schema};");
        for sql in SETUP {
            setup.push_str(sql);
            setup.push(';');
        }
        setup.push_str("INSERT INTO numbers SELECT generate_series(1, 3000);");
        let mut conn = pool.acquire().await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(setup))
            .execute(&mut *conn)
            .await
            .unwrap();
        drop(conn);
        Some(Fixture {
            db: Db::Postgres,
            credentials: json!({"postgres": {
                "host": options.get_host(),
                "port": options.get_port(),
                "database": options.get_database().unwrap_or("postgres"),
                "user": options.get_username(),
                "password": "",
                "ssl": "disable",
            }}),
            schema,
            pg: Some(pool),
            sqlite: None,
            _dir: None,
        })
    }

    /// The tool node `node` with options `extra` (allowed tables set, `secrets` denied).
    async fn tool(&self, node: &str, extra: Value) -> Arc<dyn Tool> {
        self.tool_with(node, extra, json!({})).await
    }

    /// [`Fixture::tool`] with other parameters of the node set too.
    async fn tool_with(&self, node: &str, extra: Value, params: Value) -> Arc<dyn Tool> {
        let mut options = json!({
            "allowedTables": "customers, orders, numbers, notes, tags",
            "deniedTables": "secrets",
            "timeout": 2,
        });
        if !self.schema.is_empty() {
            options["schema"] = self.schema.clone().into();
        }
        for (k, v) in extra.as_object().unwrap() {
            options[k] = v.clone();
        }
        nodekit_nodes::link();
        let entry = Catalog::global().find(node).unwrap();
        let supply = entry.runtime.supply.unwrap();
        let credentials: Map<String, Value> =
            serde_json::from_value(self.credentials.clone()).unwrap();
        // Parameters as n8n stores them: the description's `$fromAI` defaults
        // fill the rest, as every runner prepares them.
        let mut params = params;
        params["options"] = options;
        let (params, version) = entry.parameters_at(node, &params, None).unwrap();
        let ctx = SupplyContext::new(node, Arc::new(credentials), Value::Null, RunLog::new())
            .with_type_version(version);
        match ctx.supply(supply, params).await.unwrap() {
            Supply::Tool(tool) => tool,
            _ => panic!("{node} is not a tool"),
        }
    }

    async fn call(&self, node: &str, args: Value) -> Value {
        self.tool(node, json!({})).await.call(args).await.unwrap()
    }

    /// Every table's name and rows, to prove an attack changed nothing.
    async fn snapshot(&self) -> String {
        match self.db {
            Db::Postgres => {
                let pool = self.pg.as_ref().unwrap();
                let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "SELECT (SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = '{s}'),
                            (SELECT json_agg(c ORDER BY c.id)::text FROM {s}.customers c),
                            (SELECT json_agg(o ORDER BY o.id)::text FROM {s}.orders o),
                            (SELECT json_agg(x ORDER BY x.id)::text FROM {s}.secrets x),
                            (SELECT count(*)::text FROM {s}.numbers)",
                    s = self.schema
                )))
                .fetch_one(pool)
                .await
                .unwrap();
                (0..5)
                    .map(|i| row.get::<Option<String>, _>(i).unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            Db::Sqlite => {
                let pool = self.sqlite.as_ref().unwrap();
                let row = sqlx::query(
                    "SELECT (SELECT group_concat(name) FROM (SELECT name FROM sqlite_schema ORDER BY name)),
                            (SELECT json_group_array(json_array(id, name, email, status, age, balance, created_at, active)) FROM (SELECT * FROM customers ORDER BY id)),
                            (SELECT json_group_array(json_array(id, customer_id, total, status)) FROM (SELECT * FROM orders ORDER BY id)),
                            (SELECT json_group_array(json_array(id, api_key)) FROM secrets),
                            (SELECT count(*) FROM numbers)",
                )
                .fetch_one(pool)
                .await
                .unwrap();
                (0..4)
                    .map(|i| row.get::<Option<String>, _>(i).unwrap_or_default())
                    .chain([row.get::<i64, _>(4).to_string()])
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
    }

    async fn drop_schema(&self) {
        if let Some(pool) = &self.pg {
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP SCHEMA {} CASCADE",
                self.schema
            )))
            .execute(pool)
            .await
            .unwrap();
        }
    }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish() % 1_000_000_000
}

/// Attacks: (tool, arguments, acceptable error types).
fn attacks() -> Vec<(&'static str, Value, &'static [&'static str])> {
    const SEL: &str = "selectQueryTool";
    const INS: &str = "insertDataTool";
    const UPD: &str = "updateDataTool";
    const DEL: &str = "deleteDataTool";
    const EXE: &str = "executeSqlTool";
    const DSC: &str = "describeDatabaseTool";
    const UPS: &str = "upsertDataTool";
    const TXN: &str = "sqlTransactionTool";
    // The execute tool with `allowWrites` on.
    const EXW: &str = "executeSqlTool+writes";
    const SYNTAX: &[&str] = &["syntax_error", "permission_denied"];
    const DENIED: &[&str] = &["permission_denied", "syntax_error"];
    const TABLE: &[&str] = &["invalid_table", "syntax_error"];
    const COLUMN: &[&str] = &["invalid_column", "syntax_error"];
    // Malformed arguments: empty, too long, control characters, out of range.
    const INPUT: &[&str] = &["syntax_error"];
    // A value that does not fit its column.
    const VALUE: &[&str] = &["constraint_violation"];
    const EVERY_ROW: &[&str] = &["permission_denied"];
    let sel = |filter: &str| json!({"tableName": "customers", "whereConditions": filter});
    let long = "id = 1 OR ".repeat(600) + "id = 2";
    let deep = format!("{}id = 1{}", "(".repeat(300), ")".repeat(300));
    let ups = |conflict: &str, rows: Value| json!({"tableName": "customers", "conflictColumns": conflict, "rows": rows});
    let ada = json!({"id": 1, "name": "Mallory"});
    vec![
        // Transactions: none outside an agent run, no SQL in the action.
        (TXN, json!({"action": "begin"}), DENIED),
        (TXN, json!({"action": "commit"}), DENIED),
        (
            TXN,
            json!({"action": "begin; DROP TABLE customers"}),
            DENIED,
        ),
        // Discovery of tables the tool may not use, by any spelling.
        (DSC, json!({"tableName": "secrets"}), TABLE),
        (DSC, json!({"tableName": "SECRETS"}), TABLE),
        (DSC, json!({"tableName": "\"secrets\""}), TABLE),
        (DSC, json!({"tableName": "main.secrets"}), TABLE),
        (DSC, json!({"tableName": "public.secrets"}), TABLE),
        (
            DSC,
            json!({"tableName": "customers; DROP TABLE customers"}),
            TABLE,
        ),
        (DSC, json!({"tableName": "sqlite_schema"}), TABLE),
        (DSC, json!({"tableName": "pg_catalog.pg_authid"}), TABLE),
        (
            DSC,
            json!({"tableName": "information_schema.tables"}),
            TABLE,
        ),
        (DSC, json!({"tableName": "customers\u{0}"}), INPUT),
        // Upserts: injection through the conflict target, off-list tables,
        // targets that are not unique (which would update many rows).
        (
            UPS,
            ups(
                "id) DO UPDATE SET name = (SELECT api_key FROM secrets) --",
                ada.clone(),
            ),
            COLUMN,
        ),
        (
            UPS,
            ups("id); DROP TABLE customers; --", ada.clone()),
            COLUMN,
        ),
        (UPS, ups("id, (SELECT 1)", ada.clone()), COLUMN),
        (UPS, ups("\"id\" DESC", ada.clone()), COLUMN),
        (
            UPS,
            ups("name", json!({"id": 1, "name": "Ada Lovelace"})),
            COLUMN,
        ),
        (
            UPS,
            ups("status", json!({"id": 9, "name": "x", "status": "active"})),
            COLUMN,
        ),
        (UPS, ups("id, name", ada.clone()), COLUMN),
        (UPS, ups("", ada.clone()), INPUT),
        (UPS, ups("*", ada.clone()), INPUT),
        (UPS, ups("id", json!({"name": "no key"})), INPUT),
        (
            UPS,
            ups("id", json!({"id": null, "name": "null key"})),
            INPUT,
        ),
        (
            UPS,
            ups(
                "id",
                json!([{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]),
            ),
            INPUT,
        ),
        (UPS, ups("id", json!("{\"id\": 1}")), INPUT),
        (UPS, ups("id", json!({"id": 1, "api_key": "x"})), COLUMN),
        (
            UPS,
            json!({"tableName": "secrets", "conflictColumns": "id", "rows": {"id": 1, "api_key": "x"}}),
            TABLE,
        ),
        // Filters: stacked statements, comments, subqueries, functions, quoting tricks.
        (SEL, sel("1=1; DROP TABLE customers"), SYNTAX),
        (SEL, sel("id = 1; DELETE FROM customers"), SYNTAX),
        (SEL, sel("id = 1 -- and the rest"), SYNTAX),
        (SEL, sel("id = 1 /* hidden */"), SYNTAX),
        (SEL, sel("id IN (SELECT id FROM secrets)"), DENIED),
        (SEL, sel("id = (SELECT max(id) FROM secrets)"), DENIED),
        (SEL, sel("EXISTS (SELECT 1 FROM secrets)"), DENIED),
        (SEL, sel("pg_sleep(5) IS NULL"), DENIED),
        (SEL, sel("name = $$x$$"), SYNTAX),
        (SEL, sel("name = E'\\x27 OR 1=1'"), SYNTAX),
        (SEL, sel("name = $1"), SYNTAX),
        (SEL, sel("name = ?"), SYNTAX),
        (
            SEL,
            sel("id = 1 UNION SELECT id, api_key FROM secrets"),
            SYNTAX,
        ),
        (
            SEL,
            sel("secrets.api_key IS NOT NULL"),
            &["invalid_column", "permission_denied", "invalid_table"],
        ),
        (SEL, sel("CAST(id AS text) = '1'"), DENIED),
        (SEL, sel("id::text = '1'"), DENIED),
        (
            SEL,
            sel("name = 'a' || (SELECT api_key FROM secrets)"),
            DENIED,
        ),
        (SEL, sel("name = chr(39)"), DENIED),
        (
            SEL,
            sel("lower(name) = lower((SELECT api_key FROM secrets))"),
            DENIED,
        ),
        (SEL, sel("pg_read_file('/etc/passwd') = ''"), DENIED),
        (SEL, sel("current_setting('server_version') = '1'"), DENIED),
        (SEL, sel("randomblob(1000000000) IS NULL"), DENIED),
        (SEL, sel("id = 1\u{0}"), INPUT),
        (SEL, sel(&long), INPUT),
        (SEL, sel(&deep), SYNTAX),
        (SEL, sel("name = U&'\\0027'"), SYNTAX),
        (SEL, sel("id = 1 OR 1=1 LIMIT 1"), SYNTAX),
        (SEL, sel("\"; DROP TABLE customers; --"), SYNTAX),
        (SEL, sel("name = 'x' \u{2019} OR 1=1"), SYNTAX),
        (SEL, sel("name = 'x' COLLATE \"C\""), DENIED),
        // Table names.
        (
            SEL,
            json!({"tableName": "customers; DROP TABLE customers"}),
            TABLE,
        ),
        (SEL, json!({"tableName": "secrets"}), TABLE),
        (SEL, json!({"tableName": "pg_catalog.pg_shadow"}), TABLE),
        (SEL, json!({"tableName": "sqlite_master"}), TABLE),
        (
            SEL,
            json!({"tableName": "sqlite_schema", "columns": "name, sql"}),
            TABLE,
        ),
        (SEL, json!({"tableName": "SQLITE_MASTER"}), TABLE),
        (SEL, json!({"tableName": "pg_class"}), TABLE),
        (SEL, json!({"tableName": "customers_pkey"}), TABLE),
        (
            SEL,
            json!({"tableName": "information_schema.tables"}),
            TABLE,
        ),
        (
            SEL,
            json!({"tableName": "customers\" WHERE 1=1; --"}),
            TABLE,
        ),
        (SEL, json!({"tableName": ""}), TABLE),
        (SEL, json!({"tableName": "customers\u{0}"}), INPUT),
        (SEL, json!({"tableName": "c".repeat(10_000)}), INPUT),
        // Columns and order by.
        (
            SEL,
            json!({"tableName": "customers", "columns": "id, (SELECT api_key FROM secrets)"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "columns": "*, pg_sleep(5)"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "columns": "id; DROP TABLE customers"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "columns": "count(*)"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "columns": "api_key"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "columns": "id\" FROM secrets --"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "orderBy": "name; DROP TABLE customers"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "orderBy": "(SELECT 1)"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "orderBy": "name DESC, pg_sleep(1)"}),
            COLUMN,
        ),
        (
            SEL,
            json!({"tableName": "customers", "orderBy": "name DESCENDING"}),
            COLUMN,
        ),
        // Limits.
        (SEL, json!({"tableName": "customers", "limit": -1}), INPUT),
        (SEL, json!({"tableName": "customers", "limit": 0}), INPUT),
        (
            SEL,
            json!({"tableName": "customers", "limit": "10; DROP TABLE customers"}),
            INPUT,
        ),
        (SEL, json!({"tableName": "customers", "offset": -5}), INPUT),
        // Inserts.
        (
            INS,
            json!({"tableName": "customers", "rows": {"id": 10, "name": "x", "api_key": "k"}}),
            COLUMN,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": {"name\", \"email": "x"}}),
            COLUMN,
        ),
        (
            INS,
            json!({"tableName": "secrets", "rows": {"id": 2, "api_key": "mine"}}),
            TABLE,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": "INSERT INTO customers VALUES (9)"}),
            INPUT,
        ),
        (INS, json!({"tableName": "customers", "rows": []}), INPUT),
        (
            INS,
            json!({"tableName": "customers", "rows": {"id": 12, "name": {"first": "Ada"}}}),
            VALUE,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": {"id": 12, "name": "n", "age": [36]}}),
            VALUE,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": ["active"]}, "whereConditions": "id = 1"}),
            VALUE,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": (0..1001).map(|i| json!({"id": 100 + i, "name": "n"})).collect::<Vec<_>>()}),
            INPUT,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": {"id": 11, "name": "a\u{0}b"}}),
            INPUT,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": {"id": "12; DROP TABLE customers", "name": "x"}}),
            VALUE,
        ),
        (
            INS,
            json!({"tableName": "customers", "rows": [{"id": 13, "name": "ok"}, {"id": 14, "name": "dup", "email": "ada@example.com"}]}),
            &["constraint_violation"],
        ),
        (
            INS,
            json!({"tableName": "orders", "rows": {"id": 20, "customer_id": 999, "total": 1}}),
            &["constraint_violation"],
        ),
        // Updates.
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": ""}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "1=1"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "id = id"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "id > 0 OR TRUE"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "name IS NULL OR name IS NOT NULL"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"id; DROP TABLE customers": 1}, "whereConditions": "id = 1"}),
            COLUMN,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"api_key": "x"}, "whereConditions": "id = 1"}),
            COLUMN,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": "status = 'x'", "whereConditions": "id = 1"}),
            INPUT,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "id = 1; DROP TABLE customers"}),
            SYNTAX,
        ),
        (
            UPD,
            json!({"tableName": "secrets", "values": {"api_key": "x"}, "whereConditions": "id = 1"}),
            TABLE,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"age": "old"}, "whereConditions": "id = 1"}),
            VALUE,
        ),
        // Deletes.
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": ""}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "   "}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "1=1"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "TRUE"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "NOT FALSE"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "name LIKE '%'"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "id = 1 OR 1=1"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "'a' = 'a'"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "id IN (SELECT id FROM customers)"}),
            DENIED,
        ),
        (
            DEL,
            json!({"tableName": "secrets", "whereConditions": "id = 1"}),
            TABLE,
        ),
        (
            DEL,
            json!({"tableName": "customers", "whereConditions": "id = 1"}),
            &["constraint_violation"],
        ),
        // Execute SQL.
        (
            EXE,
            json!({"query": "SELECT 1; DROP TABLE customers"}),
            DENIED,
        ),
        (EXE, json!({"query": "DROP TABLE customers"}), DENIED),
        (
            EXE,
            json!({"query": "DELETE FROM customers WHERE id = 1"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "WITH d AS (DELETE FROM customers RETURNING *) SELECT * FROM d"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT * INTO stolen FROM customers"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM customers FOR UPDATE"}),
            DENIED,
        ),
        (EXE, json!({"query": "SELECT * FROM secrets"}), TABLE),
        (
            EXE,
            json!({"query": "SELECT id, name FROM customers UNION SELECT id, api_key FROM secrets"}),
            TABLE,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM customers c JOIN secrets s ON true"}),
            TABLE,
        ),
        (
            EXE,
            json!({"query": "SELECT (SELECT api_key FROM secrets LIMIT 1)"}),
            TABLE,
        ),
        (EXE, json!({"query": "SELECT * FROM \"secrets\""}), TABLE),
        (EXE, json!({"query": "SELECT * FROM main.secrets"}), TABLE),
        (EXE, json!({"query": "SELECT * FROM public.secrets"}), TABLE),
        (EXE, json!({"query": "SELECT pg_sleep(10)"}), DENIED),
        (
            EXE,
            json!({"query": "SELECT pg_read_file('/etc/passwd')"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT lo_import('/etc/passwd')"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM pg_catalog.pg_shadow"}),
            TABLE,
        ),
        (EXE, json!({"query": "SELECT * FROM pg_user"}), TABLE),
        (EXE, json!({"query": "SELECT * FROM sqlite_master"}), TABLE),
        (
            EXE,
            json!({"query": "SELECT * FROM information_schema.tables"}),
            TABLE,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM generate_series(1, 10)"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "COPY customers TO '/tmp/nodekit-stolen'"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "ATTACH DATABASE '/tmp/nodekit-x.db' AS x"}),
            DENIED,
        ),
        (EXE, json!({"query": "PRAGMA writable_schema = 1"}), DENIED),
        (EXE, json!({"query": "SET statement_timeout = 0"}), DENIED),
        (
            EXE,
            json!({"query": "BEGIN; DELETE FROM customers; COMMIT"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM customers -- trailing"}),
            DENIED,
        ),
        (EXE, json!({"query": "SELECT version()"}), DENIED),
        (
            EXE,
            json!({"query": "SELECT load_extension('/tmp/x')"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT current_setting('data_directory')"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM customers WHERE id = $1"}),
            DENIED,
        ),
        (EXE, json!({"query": "SELECT $$a$$"}), DENIED),
        (EXE, json!({"query": "CREATE TABLE x (id int)"}), DENIED),
        (EXE, json!({"query": "VACUUM"}), DENIED),
        (EXE, json!({"query": "SELECT 1\u{0}"}), INPUT),
        (
            EXE,
            json!({"query": format!("SELECT {} 1", "1 + ".repeat(5000))}),
            INPUT,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM customers LIMIT -1"}),
            INPUT,
        ),
        (
            EXE,
            json!({"query": "SELECT pg_catalog.lower(name) FROM customers"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT * FROM customers WHERE name = E'\\''"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT set_config('search_path', 'pg_catalog', true)"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT replace(replace(name, 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa') FROM customers"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT CAST(name AS CHAR(10485760)) FROM customers"}),
            DENIED,
        ),
        (
            EXE,
            json!({"query": "SELECT c.to_json FROM customers c"}),
            &["invalid_column", "permission_denied"],
        ),
        (
            EXE,
            json!({"query": "SELECT c FROM customers c"}),
            &["invalid_column", "permission_denied"],
        ),
        // Filters that match every row although no static rule says so: the
        // database counts, and the call is rolled back.
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "id IS NOT NULL"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "id > -1"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "name LIKE '_%'"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "length(name) >= 0"}),
            EVERY_ROW,
        ),
        (
            UPD,
            json!({"tableName": "customers", "values": {"status": "x"}, "whereConditions": "id BETWEEN -9999 AND 99999999"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "orders", "whereConditions": "id IS NOT NULL"}),
            EVERY_ROW,
        ),
        (
            DEL,
            json!({"tableName": "orders", "whereConditions": "NOT (id IS NULL)"}),
            EVERY_ROW,
        ),
        (
            SEL,
            sel(&format!("name LIKE '%{}b'", "a".repeat(200))),
            INPUT,
        ),
        // With writes allowed: still one checked statement, never every row.
        (
            EXW,
            json!({"query": "UPDATE customers SET status = 'x' WHERE id = id"}),
            EVERY_ROW,
        ),
        (
            EXW,
            json!({"query": "UPDATE customers SET status = 'x' WHERE id IS NOT NULL"}),
            EVERY_ROW,
        ),
        (
            EXW,
            json!({"query": "DELETE FROM orders WHERE \"nosuchcol\" = \"nosuchcol\""}),
            &["invalid_column", "permission_denied", "syntax_error"],
        ),
        (
            EXW,
            json!({"query": "DELETE FROM orders WHERE total > -1"}),
            EVERY_ROW,
        ),
        (
            EXW,
            json!({"query": "UPDATE OR REPLACE customers SET id = 4 WHERE id = 3"}),
            DENIED,
        ),
        (
            EXW,
            json!({"query": "INSERT OR REPLACE INTO customers (id, name) VALUES (1, 'x')"}),
            DENIED,
        ),
        (EXW, json!({"query": "DROP TABLE customers"}), DENIED),
        (
            EXW,
            json!({"query": "DELETE FROM secrets WHERE id = 1"}),
            TABLE,
        ),
        (
            EXW,
            json!({"query": "UPDATE customers SET name = (SELECT api_key FROM secrets) WHERE id = 1"}),
            TABLE,
        ),
        (
            EXE,
            json!({"query": "WITH RECURSIVE r(n, s) AS (SELECT 1, name FROM customers WHERE id = 1 UNION ALL SELECT n + 1, s || s FROM r WHERE n < 40) SELECT length(s) FROM r"}),
            DENIED,
        ),
    ]
}

async fn run_attacks(f: &Fixture) {
    let before = f.snapshot().await;
    let list = attacks();
    assert!(list.len() >= 60, "the corpus has {} attacks", list.len());
    let mut failures = Vec::new();
    for (node, args, expected) in list {
        let answer = match node.strip_suffix("+writes") {
            Some(node) => {
                let tool = f.tool(node, json!({"allowWrites": true})).await;
                tool.call(args.clone()).await.unwrap()
            }
            None => f.call(node, args.clone()).await,
        };
        let shown = answer.to_string();
        let kind = answer["errorType"].as_str().unwrap_or("");
        if answer["success"] != false || !expected.contains(&kind) {
            failures.push(format!("{node} {args:.200} → {shown:.300}"));
        }
        if shown.contains("sk-top-secret-value") {
            failures.push(format!(
                "{node} {args:.200} leaked the secret: {shown:.300}"
            ));
        }
        let after = f.snapshot().await;
        if after != before {
            failures.push(format!("{node} {args:.200} changed the database"));
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{:?}: {} attacks not refused as expected:\n{}",
        f.db,
        failures.len(),
        failures.join("\n")
    );
    for (node, args, error_type, reason) in refusals() {
        let answer = f.call(node, args.clone()).await;
        assert_eq!(
            (answer["errorType"].as_str(), answer["reason"].as_str()),
            (Some(error_type), Some(reason)),
            "{:?} {node} {args:.200} → {answer:.300}",
            f.db
        );
    }
    assert_eq!(f.snapshot().await, before, "a refusal changed the database");
}

/// Refusals with the category and reason each must get, the same on both
/// databases: (tool, arguments, errorType, reason).
fn refusals() -> Vec<(&'static str, Value, &'static str, &'static str)> {
    let sel = |more: Value| {
        let mut args = json!({"tableName": "customers"});
        args.as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        args
    };
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"id": 100 + i, "name": "n"}))
        .collect();
    vec![
        (
            "selectQueryTool",
            sel(json!({"whereConditions": "id = 1\u{0}"})),
            "syntax_error",
            "control_character",
        ),
        (
            "selectQueryTool",
            sel(json!({"whereConditions": "id = 1 OR ".repeat(600) + "id = 2"})),
            "syntax_error",
            "too_long",
        ),
        (
            "selectQueryTool",
            sel(
                json!({"whereConditions": format!("{}id = 1{}", "(".repeat(300), ")".repeat(300))}),
            ),
            "syntax_error",
            "too_complex",
        ),
        (
            "selectQueryTool",
            json!({"tableName": ""}),
            "syntax_error",
            "empty",
        ),
        (
            "selectQueryTool",
            json!({"tableName": "c".repeat(10_000)}),
            "syntax_error",
            "too_long",
        ),
        (
            "selectQueryTool",
            sel(json!({"limit": -1})),
            "syntax_error",
            "out_of_range",
        ),
        (
            "selectQueryTool",
            sel(json!({"offset": -5})),
            "syntax_error",
            "out_of_range",
        ),
        (
            "selectQueryTool",
            sel(json!({"limit": "10; DROP TABLE customers"})),
            "syntax_error",
            "malformed",
        ),
        (
            "selectQueryTool",
            sel(json!({"orderBy": "name NULLS FIRST"})),
            "syntax_error",
            "malformed",
        ),
        // Refused by the arguments' schema (a `json` argument is never empty).
        (
            "insertDataTool",
            sel(json!({"rows": []})),
            "syntax_error",
            "malformed",
        ),
        (
            "insertDataTool",
            sel(json!({"rows": many})),
            "syntax_error",
            "too_complex",
        ),
        (
            "insertDataTool",
            sel(json!({"rows": {"id": 12, "name": "a\u{0}b"}})),
            "syntax_error",
            "control_character",
        ),
        (
            "insertDataTool",
            sel(json!({"rows": {"id": 12, "name": ["Ada"]}})),
            "constraint_violation",
            "wrong_type",
        ),
        (
            "updateDataTool",
            sel(json!({"values": {"status": "x"}, "whereConditions": ""})),
            "permission_denied",
            "no_filter",
        ),
        (
            "deleteDataTool",
            sel(json!({"whereConditions": "  "})),
            "permission_denied",
            "no_filter",
        ),
        (
            "executeSqlTool",
            json!({"query": ""}),
            "syntax_error",
            "empty",
        ),
        (
            "executeSqlTool",
            json!({"query": "SELECT 1\u{0}"}),
            "syntax_error",
            "control_character",
        ),
        (
            "executeSqlTool",
            json!({"query": "SELECT * FROM customers LIMIT -1"}),
            "syntax_error",
            "out_of_range",
        ),
    ]
}

/// Requests that must succeed, with the rows they must return.
async fn run_legitimate(f: &Fixture) {
    let ok = |v: &Value| {
        assert_eq!(v["success"], true, "{v}");
        v.clone()
    };
    let ids = |v: &Value| -> Vec<i64> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    let sel = |args: Value| f.call("selectQueryTool", args);

    let all = ok(&sel(json!({"tableName": "customers"})).await);
    assert_eq!(all["operation"], "select");
    assert_eq!(all["table"], "customers");
    assert_eq!(all["rowCount"], 4);
    assert!(all["executionTime"].as_str().unwrap().ends_with("ms"));
    let ada = &all["data"][0];
    assert_eq!(ada["name"], "Ada Lovelace");
    assert_eq!(ada["age"], 36);
    if f.db == Db::Postgres {
        assert_eq!(ada["balance"], "1200.50", "numeric as exact text");
        assert_eq!(ada["active"], true);
        assert_eq!(ada["created_at"], "2024-01-02T10:00:00");
    }

    let v = ok(&sel(json!({"tableName": "customers", "whereConditions": "age > 30 AND status = 'active'", "orderBy": "age DESC"})).await);
    assert_eq!(ids(&v), [2, 1]);
    let v = ok(&sel(
        json!({"tableName": "customers", "whereConditions": "name = 'Edsger O''Brien'"}),
    )
    .await);
    assert_eq!(ids(&v), [4]);
    let v = ok(&sel(json!({"tableName": "customers", "whereConditions": "lower(name) LIKE 'a%'", "orderBy": "id"})).await);
    assert_eq!(ids(&v), [1, 2]);
    let v = ok(&sel(json!({"tableName": "customers", "whereConditions": "id IN (1, 3) OR email IS NULL", "orderBy": "id"})).await);
    assert_eq!(ids(&v), [1, 3, 4]);
    let v = ok(&sel(json!({"tableName": "customers", "whereConditions": "age BETWEEN 30 AND 50 AND NOT (status = 'inactive')", "orderBy": "id"})).await);
    assert_eq!(ids(&v), [1, 2]);
    let v = ok(&sel(json!({"tableName": "Customers", "columns": "id, email", "orderBy": "id DESC", "limit": 2, "offset": 1})).await);
    assert_eq!(ids(&v), [3, 2]);
    assert_eq!(v["data"][0].as_object().unwrap().len(), 2);
    assert!(v.get("truncated").is_none(), "{v}");
    let v = ok(&sel(json!({"tableName": "customers", "whereConditions": "balance > 100"})).await);
    assert_eq!(ids(&v), [1]);

    // Cut at the tool's row limit, with a flag and a warning.
    let tool = f.tool("selectQueryTool", json!({"maxRows": 2})).await;
    let v = ok(&tool.call(json!({"tableName": "numbers"})).await.unwrap());
    assert_eq!(v["rowCount"], 2);
    assert_eq!(v["truncated"], true);
    assert!(
        v["warning"].as_str().unwrap().contains("first 2 rows"),
        "{v}"
    );

    // An answer is cut at its byte budget, whatever the row limit.
    let big: Vec<Value> = (0..30)
        .map(|i| json!({"id": i, "body": "x".repeat(100_000)}))
        .collect();
    ok(&f
        .call("insertDataTool", json!({"tableName": "notes", "rows": big}))
        .await);
    let v = ok(&sel(json!({"tableName": "notes"})).await);
    assert_eq!(v["truncated"], true, "{v:.300}");
    assert!(
        v["warning"].as_str().unwrap().contains("MiB"),
        "{:.300}",
        v["warning"]
    );
    assert!(v["data"].as_array().unwrap().len() < 30);

    // A limit over the cap is lowered to it, with a warning; rows past the
    // tool's maximum are cut as usual.
    let v = ok(&sel(json!({"tableName": "customers", "limit": 1_000_000_000_000i64})).await);
    assert_eq!(v["rowCount"], 4);
    assert!(v.get("truncated").is_none(), "{v}");
    assert!(
        v["warning"].as_str().unwrap().contains("lowered to 10000"),
        "{v}"
    );
    let v = ok(&tool
        .call(json!({"tableName": "numbers", "limit": 10_001}))
        .await
        .unwrap());
    assert_eq!(v["rowCount"], 2);
    assert_eq!(v["truncated"], true);
    let warning = v["warning"].as_str().unwrap();
    assert!(
        warning.contains("lowered to 10000") && warning.contains("first 2 rows"),
        "{v}"
    );

    // Objects and arrays go into JSON columns only.
    let meta = json!({"tags": ["a", "b"], "n": 1});
    ok(&f
        .call(
            "insertDataTool",
            json!({"tableName": "notes", "rows": {"id": 900, "body": "b", "meta": meta}}),
        )
        .await);
    let v = ok(&sel(
        json!({"tableName": "notes", "whereConditions": "id = 900", "columns": "meta"}),
    )
    .await);
    let stored = &v["data"][0]["meta"];
    match f.db {
        Db::Postgres => assert_eq!(stored, &meta),
        // SQLite keeps JSON as text.
        Db::Sqlite => assert_eq!(
            serde_json::from_str::<Value>(stored.as_str().unwrap()).unwrap(),
            meta
        ),
    }

    // Deny lists hold however the author spells the table.
    for denied in [
        "main.secrets",
        "\"secrets\"",
        "public.secrets; orders",
        "`secrets`",
    ] {
        let tool = f
            .tool(
                "executeSqlTool",
                json!({"allowedTables": "", "deniedTables": denied}),
            )
            .await;
        let v = tool
            .call(json!({"query": "SELECT * FROM secrets"}))
            .await
            .unwrap();
        assert_eq!(v["errorType"], "invalid_table", "{denied}: {v}");
    }

    // A statement that runs too long is cancelled.
    let tool = f.tool("executeSqlTool", json!({"timeout": 1})).await;
    let v = tool
        .call(json!({"query": "SELECT count(*) FROM numbers a, numbers b, numbers c WHERE a.n + b.n = c.n + 1"}))
        .await
        .unwrap();
    assert_eq!(v["errorType"], "timeout", "{v}");

    let v = ok(&f.call("executeSqlTool", json!({"query": "SELECT status, count(*) AS n FROM customers GROUP BY status ORDER BY status"})).await);
    assert_eq!(
        v["data"],
        json!([{"status": "active", "n": 3}, {"status": "inactive", "n": 1}])
    );
    let v = ok(&f.call("executeSqlTool", json!({"query": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT count(*) AS c FROM r"})).await);
    assert_eq!(v["data"], json!([{"c": 5}]));
    let v = ok(&f.call("executeSqlTool", json!({"query": "WITH big AS (SELECT customer_id, sum(total) AS spent FROM orders GROUP BY customer_id) SELECT c.name FROM customers c JOIN big ON big.customer_id = c.id WHERE big.spent > 50"})).await);
    assert_eq!(v["data"], json!([{"name": "Ada Lovelace"}]));

    // Fixed templates: bound in order, on both databases; reads and writes.
    let v = ok(&f
        .call(
            "customersByStatus",
            json!({"status": "active", "minAge": 30}),
        )
        .await);
    assert_eq!(v["operation"], "select");
    assert_eq!(
        v["data"],
        json!([{"name": "Ada Lovelace"}, {"name": "Alan Turing"}])
    );
    let v = ok(&f
        .call("renameCustomer", json!({"name": "Ada King", "id": 1}))
        .await);
    assert_eq!(v["affectedRows"], 1);
    let v = ok(&f
        .call("renameCustomer", json!({"name": "Ada Lovelace", "id": 1}))
        .await);
    assert_eq!(v["affectedRows"], 1);
    let v = f
        .call(
            "customersByStatus",
            json!({"status": "active", "minAge": "old"}),
        )
        .await;
    assert_eq!(v["errorType"], "syntax_error", "{v}");
    assert_eq!(v["reason"], "malformed", "{v}");

    // Writes: inserted rows come back with their values; text that looks like SQL is just text.
    let v = ok(&f.call("insertDataTool", json!({"tableName": "customers", "rows": [
        {"id": 5, "name": "x'); DROP TABLE customers; --", "email": "e@example.com", "age": 50},
        {"id": 6, "name": "Barbara Liskov", "balance": "12345.67"}
    ]})).await);
    assert_eq!(v["operation"], "insert");
    assert_eq!(v["affectedRows"], 2);
    assert_eq!(ids(&v), [5, 6]);
    let v = ok(&sel(json!({"tableName": "customers", "whereConditions": "id = 5"})).await);
    assert_eq!(v["data"][0]["name"], "x'); DROP TABLE customers; --");

    let v = ok(&f.call("updateDataTool", json!({"tableName": "customers", "values": {"status": "vip", "age": 51}, "whereConditions": "id = 5"})).await);
    assert_eq!(v["affectedRows"], 1);
    assert_eq!(v["data"][0]["status"], "vip");
    let v = ok(&f
        .call(
            "deleteDataTool",
            json!({"tableName": "customers", "whereConditions": "id IN (5, 6)"}),
        )
        .await);
    assert_eq!(v["affectedRows"], 2);

    // The execute tool writes only when the workflow author allows it.
    let tool = f.tool("executeSqlTool", json!({"allowWrites": true})).await;
    let v = ok(&tool
        .call(json!({"query": "UPDATE customers SET status = 'gold' WHERE id = 3"}))
        .await
        .unwrap());
    assert_eq!(v["affectedRows"], 1);
    let v = tool
        .call(json!({"query": "DELETE FROM customers"}))
        .await
        .unwrap();
    assert_eq!(v["success"], false, "{v}");

    // An unknown column names the ones that exist; an unknown table only the allowed ones.
    let v = sel(json!({"tableName": "customers", "columns": "nme"})).await;
    assert_eq!(v["errorType"], "invalid_column");
    assert!(
        v["suggestion"].as_str().unwrap().contains("name, email"),
        "{v}"
    );
    let v = sel(json!({"tableName": "custmers"})).await;
    assert_eq!(v["errorType"], "invalid_table");
    let suggestion = v["suggestion"].as_str().unwrap();
    assert!(
        suggestion.contains("customers") && !suggestion.contains("secrets"),
        "{v}"
    );
}

/// Discovery and upsert, the same on both databases.
async fn run_describe_and_upsert(f: &Fixture) {
    let ok = |v: Value| {
        assert_eq!(v["success"], true, "{:?}: {v}", f.db);
        assert!(!v.to_string().contains("secrets"), "{:?}: {v}", f.db);
        v
    };
    let describe = |table: &str| f.call("describeDatabaseTool", json!({"tableName": table}));

    // The tables the tool may use, and no other.
    let list = ok(f.call("describeDatabaseTool", json!({})).await);
    assert_eq!(list["operation"], "describe");
    let tables: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["table"].as_str().unwrap())
        .collect();
    assert_eq!(tables, ["customers", "notes", "numbers", "orders", "tags"]);
    assert!(
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["type"] == "table")
    );

    let customers = ok(describe("customers").await);
    assert_eq!(customers["table"], "customers");
    assert_eq!(customers["type"], "table");
    assert_eq!(customers["primaryKey"], json!(["id"]));
    assert_eq!(customers["uniqueKeys"], json!([["email"]]));
    assert_eq!(customers["approximateRows"], 4);
    let column = |v: &Value, name: &str| {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["column"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no column {name} in {v}"))
    };
    let id = column(&customers, "id");
    assert_eq!(
        (&id["primaryKey"], &id["nullable"]),
        (&json!(true), &json!(false)),
        "{id}"
    );
    assert_eq!(column(&customers, "name")["nullable"], false);
    assert_eq!(column(&customers, "email")["nullable"], true);
    assert!(
        column(&customers, "balance")["type"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .starts_with("numeric")
    );
    assert_eq!(customers["rowCount"], 8);

    // A foreign key to a table the tool may not use is left out.
    let tags = ok(describe("tags").await);
    assert_eq!(
        tags["foreignKeys"],
        json!([{"columns": ["customer_id"], "references": {"table": "customers", "columns": ["id"]}}])
    );
    assert_eq!(tags["uniqueKeys"], json!([["customer_id", "label"]]));
    assert!(
        column(&tags, "label")["default"]
            .as_str()
            .unwrap()
            .contains("new"),
        "{tags}"
    );
    assert_eq!(column(&tags, "label")["nullable"], false);
    assert_eq!(tags["approximateRows"], 0);
    // A case-insensitive name finds the table, as the other tools do.
    assert_eq!(
        ok(describe("Orders").await)["foreignKeys"][0]["references"]["table"],
        "customers"
    );
    let missing = describe("secrets").await;
    assert_eq!(missing["errorType"], "invalid_table", "{missing}");
    assert!(!missing.to_string().contains("secrets\","), "{missing}");
    assert!(
        !missing["suggestion"].as_str().unwrap().contains("secrets"),
        "{missing}"
    );

    // Upsert on the primary key: one row updated (its other columns kept), one added.
    let up = |conflict: &str, rows: Value| {
        f.call(
            "upsertDataTool",
            json!({"tableName": "customers", "conflictColumns": conflict, "rows": rows}),
        )
    };
    let v = ok(up(
        "id",
        json!([{"id": 1, "name": "Ada King"}, {"id": 5, "name": "Barbara Liskov", "email": "barbara@example.com"}]),
    )
    .await);
    assert_eq!(v["operation"], "upsert");
    assert_eq!(v["affectedRows"], 2, "{v}");
    let select = |filter: &str| {
        f.call(
            "selectQueryTool",
            json!({"tableName": "customers", "whereConditions": filter, "orderBy": "id"}),
        )
    };
    let rows = ok(select("id IN (1, 5)").await);
    assert_eq!(rows["data"][0]["name"], "Ada King");
    assert_eq!(
        rows["data"][0]["email"], "ada@example.com",
        "the other columns are kept"
    );
    assert_eq!(rows["data"][1]["name"], "Barbara Liskov");
    // On a unique column; nothing but the key: the stored row comes back unchanged.
    let v = ok(up(
        "email",
        json!({"id": 2, "email": "alan@example.com", "name": "Alan M. Turing"}),
    )
    .await);
    assert_eq!(v["data"][0]["name"], "Alan M. Turing", "{v}");
    let v = ok(f
        .call(
            "upsertDataTool",
            json!({"tableName": "numbers", "conflictColumns": "n", "rows": {"n": 7}}),
        )
        .await);
    assert_eq!(v["data"], json!([{"n": 7}]), "{v}");
    // A row must hold what an insert needs, even when it would update.
    let v = up("id", json!({"id": 3})).await;
    assert_eq!(v["errorType"], "constraint_violation", "{v}");
    // A composite unique key.
    let tag = |id: i64| {
        f.call(
            "upsertDataTool",
            json!({"tableName": "tags", "conflictColumns": "label, customer_id", "rows": {"id": id, "customer_id": 1, "label": "vip"}}),
        )
    };
    ok(tag(1).await);
    let v = ok(tag(2).await);
    assert_eq!(v["data"][0]["id"], 2, "the stored tag was updated: {v}");
    let all = ok(f
        .call("selectQueryTool", json!({"tableName": "tags"}))
        .await);
    assert_eq!(all["rowCount"], 1, "{all}");

    // Refused with what to do instead, and nothing changed.
    let v = up("name", json!({"id": 1, "name": "x"})).await;
    assert_eq!(
        (v["errorType"].as_str(), v["reason"].as_str()),
        (Some("invalid_column"), Some("not_unique")),
        "{v}"
    );
    assert!(
        v["suggestion"].as_str().unwrap().contains("(id), (email)"),
        "{v}"
    );
    let v = f
        .call(
            "upsertDataTool",
            json!({"tableName": "numbers", "conflictColumns": "n", "rows": {"n": 1, "m": 2}}),
        )
        .await;
    assert_eq!(v["errorType"], "invalid_column", "{v}");
    assert_eq!(ok(select("id = 1").await)["data"][0]["name"], "Ada King");

    // PostgreSQL: only the tool's schema, even as a foreign key's target.
    if let Some(pool) = &f.pg {
        let s = &f.schema;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE SCHEMA {s}_outside; CREATE TABLE {s}_outside.ledger (id INTEGER PRIMARY KEY); \
             ALTER TABLE {s}.notes ADD COLUMN ledger_id INTEGER REFERENCES {s}_outside.ledger(id)"
        )))
        .execute(pool)
        .await
        .unwrap();
        let notes = ok(describe("notes").await);
        assert_eq!(notes["foreignKeys"], json!([]), "{notes}");
        assert!(!notes.to_string().contains("_outside"), "{notes}");
        let v = describe(&format!("{s}_outside.ledger")).await;
        assert_eq!(v["errorType"], "invalid_table", "{v}");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA {s}_outside CASCADE"
        )))
        .execute(pool)
        .await
        .unwrap();
    }
}

/// How many customers with these ids the database holds, read past the tools.
async fn stored(f: &Fixture, ids: &str) -> i64 {
    let sql = match f.db {
        Db::Postgres => format!(
            "SELECT count(*) FROM {}.customers WHERE id IN ({ids})",
            f.schema
        ),
        Db::Sqlite => format!("SELECT count(*) FROM customers WHERE id IN ({ids})"),
    };
    match f.db {
        Db::Postgres => sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(f.pg.as_ref().unwrap())
            .await
            .unwrap(),
        Db::Sqlite => sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(f.sqlite.as_ref().unwrap())
            .await
            .unwrap(),
    }
}

/// Transactions across tool calls, bound to the agent run.
async fn run_transactions(f: &Fixture) {
    use nodekit::run_scope::scoped as agent_run;
    let ok = |v: Value| {
        assert_eq!(v["success"], true, "{:?}: {v}", f.db);
        v
    };
    let denied = |v: Value, says: &str| {
        assert_eq!(v["errorType"], "permission_denied", "{:?}: {v}", f.db);
        assert!(
            v["error"].as_str().unwrap().contains(says),
            "{:?}: {v}",
            f.db
        );
    };
    let tx = f.tool("sqlTransactionTool", json!({})).await;
    let ins = f.tool("insertDataTool", json!({})).await;
    let sel = f.tool("selectQueryTool", json!({})).await;
    let call = async |tool: &Arc<dyn Tool>, args: Value| tool.call(args).await.unwrap();
    let add = |id: i64| json!({"tableName": "customers", "rows": {"id": id, "name": format!("In transaction {id}")}});

    // Committed: reads inside see the writes; nothing shows outside until the commit.
    agent_run(async {
        ok(call(&tx, json!({"action": "begin"})).await);
        ok(call(&ins, add(100)).await);
        let inside = ok(call(
            &sel,
            json!({"tableName": "customers", "whereConditions": "id = 100"}),
        )
        .await);
        assert_eq!(inside["rowCount"], 1, "{inside}");
        assert_eq!(
            stored(f, "100").await,
            0,
            "{:?}: uncommitted rows are not seen outside",
            f.db
        );
        // A failed call is undone alone; the transaction goes on.
        let dup = call(&ins, add(100)).await;
        assert_eq!(dup["errorType"], "constraint_violation", "{dup}");
        ok(call(&ins, add(101)).await);
        denied(call(&tx, json!({"action": "begin"})).await, "already open");
        ok(call(&tx, json!({"action": "COMMIT"})).await);
        denied(
            call(&tx, json!({"action": "commit"})).await,
            "no transaction is open",
        );
    })
    .await;
    assert_eq!(stored(f, "100, 101").await, 2, "{:?}", f.db);

    // Rolled back: by the model, at the end of the run, at the time limit.
    agent_run(async {
        ok(call(&tx, json!({"action": "begin"})).await);
        ok(call(&ins, add(102)).await);
        ok(call(&tx, json!({"action": "rollback"})).await);
    })
    .await;
    agent_run(async {
        ok(call(&tx, json!({"action": "begin"})).await);
        ok(call(&ins, add(103)).await);
    })
    .await;
    assert_eq!(stored(f, "102, 103").await, 0, "{:?}", f.db);
    let short = f
        .tool_with("sqlTransactionTool", json!({}), json!({"timeLimit": 1}))
        .await;
    agent_run(async {
        ok(call(&short, json!({"action": "begin"})).await);
        ok(call(&ins, add(104)).await);
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(stored(f, "104").await, 0, "{:?}", f.db);
        // A write now would be saved at once, which the model does not expect.
        denied(call(&ins, add(104)).await, "ended without a commit");
        ok(call(
            &sel,
            json!({"tableName": "customers", "whereConditions": "id = 104"}),
        )
        .await);
        denied(
            call(&tx, json!({"action": "commit"})).await,
            "time limit of 1 s",
        );
        // Once the model knows, calls run on their own again.
        ok(call(&ins, add(104)).await);
    })
    .await;
    assert_eq!(stored(f, "104").await, 1, "{:?}", f.db);

    // A commit from another run finds nothing open; the first run's transaction is untouched.
    let begun = tokio::sync::Notify::new();
    let tried = tokio::sync::Notify::new();
    let first = agent_run(async {
        ok(call(&tx, json!({"action": "begin"})).await);
        ok(call(&ins, add(105)).await);
        begun.notify_one();
        tried.notified().await;
        let mine = ok(call(
            &sel,
            json!({"tableName": "customers", "whereConditions": "id = 105"}),
        )
        .await);
        assert_eq!(mine["rowCount"], 1, "{mine}");
        ok(call(&tx, json!({"action": "rollback"})).await);
    });
    let second = agent_run(async {
        begun.notified().await;
        denied(
            call(&tx, json!({"action": "commit"})).await,
            "no transaction is open",
        );
        tried.notify_one();
    });
    tokio::join!(first, second);
    assert_eq!(stored(f, "105").await, 0, "{:?}", f.db);

    // A write interrupted at its time limit: PostgreSQL undoes the call
    // alone and the transaction goes on; SQLite ends the whole transaction,
    // which the tools notice and say.
    let exw = f
        .tool("executeSqlTool", json!({"allowWrites": true, "timeout": 1}))
        .await;
    let slow = json!({"query": "INSERT INTO numbers SELECT a.n * 10000 + b.n + 100000 FROM numbers a, numbers b"});
    agent_run(async {
        ok(call(&tx, json!({"action": "begin"})).await);
        ok(call(&ins, add(107)).await);
        let v = call(&exw, slow.clone()).await;
        assert_eq!(v["errorType"], "timeout", "{:?}: {v}", f.db);
        match f.db {
            Db::Postgres => {
                ok(call(&ins, add(108)).await);
                ok(call(&tx, json!({"action": "commit"})).await);
            }
            Db::Sqlite => {
                assert!(
                    v["error"]
                        .as_str()
                        .unwrap()
                        .contains("transaction and its changes are gone"),
                    "{v}"
                );
                denied(call(&ins, add(108)).await, "ended without a commit");
                denied(
                    call(&tx, json!({"action": "commit"})).await,
                    "rolled it back",
                );
            }
        }
    })
    .await;
    let kept = if f.db == Db::Postgres { 2 } else { 0 };
    assert_eq!(stored(f, "107, 108").await, kept, "{:?}", f.db);

    // A write elsewhere while the run's transaction is open is refused.
    if f.db == Db::Postgres {
        let other = f.tool("insertDataTool", json!({"schema": "public"})).await;
        agent_run(async {
            ok(call(&tx, json!({"action": "begin"})).await);
            denied(call(&other, add(106)).await, "another database or schema");
            ok(call(&tx, json!({"action": "rollback"})).await);
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_attacks_and_answers_requests() {
    let f = Fixture::sqlite().await;
    run_attacks(&f).await;
    run_legitimate(&f).await;
    run_describe_and_upsert(&f).await;
    run_transactions(&f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_refuses_attacks_and_answers_requests() {
    let Some(f) = Fixture::postgres().await else {
        return;
    };
    run_attacks(&f).await;
    run_legitimate(&f).await;
    run_describe_and_upsert(&f).await;
    run_transactions(&f).await;
    f.drop_schema().await;
}

// sqlx retries a refused connection until its acquire timeout (10 s),
// taking it for a server starting up: a port nobody listens on must be
// reported at once, as refused, not as a timeout.
#[tokio::test]
async fn a_closed_port_is_reported_as_refused() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let f = Fixture {
        db: Db::Postgres,
        credentials: json!({"postgres": {
            "host": "127.0.0.1", "port": port, "database": "postgres",
            "user": "nobody", "password": "", "ssl": "disable",
        }}),
        schema: String::new(),
        pg: None,
        sqlite: None,
        _dir: None,
    };
    let answer = f
        .call("selectQueryTool", json!({"tableName": "customers"}))
        .await;
    assert_eq!(answer["errorType"], "connection_error", "{answer}");
    let message = answer["error"].as_str().unwrap_or_default();
    assert!(message.contains("could not reach the database"), "{answer}");
    assert!(!message.contains("timed out"), "{answer}");
}

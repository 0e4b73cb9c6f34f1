use super::*;
use crate::testing::pg;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Executor, SqliteConnection};
use std::str::FromStr;
use std::time::Duration;

/// Runs `sql` (extended protocol, with optional text binds) and
/// classifies the error it must raise.
async fn fail<'c, E>(conn: E, sql: &str, binds: &[&str]) -> ToolError
where
    E: Executor<'c, Database = sqlx::Postgres>,
{
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()));
    for b in binds {
        q = q.bind(b.to_string());
    }
    match q.execute(conn).await {
        Ok(_) => panic!("expected an error from {sql}"),
        Err(e) => classify(&e),
    }
}

fn assert_clean(e: &ToolError, secrets: &[&str]) {
    let all = format!("{} {:?}", e.message, e.suggestion);
    for s in secrets {
        assert!(!all.contains(s), "{s:?} leaked in {e:?}");
    }
    assert!(e.message.chars().count() <= MAX_CHARS);
}

#[tokio::test]
async fn pg_constraint_and_statement_errors() {
    let Some(mut conn) = pg().await else { return };
    conn.execute(
        "CREATE TEMP TABLE sqlvalue_parent (id int PRIMARY KEY);
         CREATE TEMP TABLE sqlvalue_err (
             id serial PRIMARY KEY,
             email text UNIQUE,
             name text NOT NULL,
             age int CONSTRAINT sqlvalue_age_check CHECK (age >= 0),
             code varchar(3),
             parent int REFERENCES sqlvalue_parent (id));
         INSERT INTO sqlvalue_err (email, name) VALUES ('taken@example.com', 'x')",
    )
    .await
    .unwrap();
    let c = &mut conn;

    let insert = "INSERT INTO sqlvalue_err (email, name, age, code, parent) \
                  VALUES ($1, $2, $3::text::int, $4, $5::text::int)";
    let e = fail(&mut *c, insert, &["taken@example.com", "n", "1", "a", "0"]).await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("23505"));
    assert!(
        e.suggestion
            .as_deref()
            .unwrap()
            .contains("\"sqlvalue_err_email_key\"")
    );
    assert_clean(&e, &["taken@example.com", "INSERT"]);

    let e = fail(
        &mut *c,
        "INSERT INTO sqlvalue_err (email, name) VALUES ($1, NULL)",
        &["secret-mail@example.com"],
    )
    .await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("23502"));
    assert!(e.suggestion.as_deref().unwrap().contains("\"name\""));
    assert_clean(&e, &["secret-mail@example.com"]);

    let e = fail(&mut *c, insert, &["a@b.c", "n", "1", "a", "999"]).await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("23503"));
    assert!(
        e.suggestion
            .as_deref()
            .unwrap()
            .contains("sqlvalue_err_parent_fkey")
    );
    assert_clean(&e, &["999"]);

    let e = fail(&mut *c, insert, &["a@b.c", "n", "-42", "a", "1"]).await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("23514"));
    assert!(
        e.suggestion
            .as_deref()
            .unwrap()
            .contains("\"sqlvalue_age_check\"")
    );
    assert_clean(&e, &["-42"]);

    let e = fail(&mut *c, insert, &["a@b.c", "n", "1", "toolong", "1"]).await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.reason, Some(Reason::BadValue));
    assert_eq!(e.sql_state.as_deref(), Some("22001"));
    assert_clean(&e, &["toolong"]);

    let e = fail(
        &mut *c,
        insert,
        &["a@b.c", "n", "not-a-number-secret", "a", "1"],
    )
    .await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("22P02"));
    assert!(e.message.contains("integer: \"***\""), "{e:?}");
    assert_clean(&e, &["not-a-number-secret"]);

    let e = fail(&mut *c, "SELECT $1::text::int4", &["99999999999"]).await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("22003"));
    assert_clean(&e, &["99999999999"]);

    let e = fail(
        &mut *c,
        "SELECT $1::text::timestamptz",
        &["2024-13-45 secret"],
    )
    .await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert!(e.sql_state.as_deref().unwrap().starts_with("22"));
    assert_clean(&e, &["2024-13-45", "secret"]);

    let e = fail(&mut *c, "SELECT 1 / 0", &[]).await;
    assert_eq!(e.error_type, ErrorType::ConstraintViolation);
    assert_eq!(e.sql_state.as_deref(), Some("22012"));
    assert_eq!(e.message, "division by zero");

    let e = fail(&mut *c, "SELECT * FROM sqlvalue_missing", &[]).await;
    assert_eq!(e.error_type, ErrorType::InvalidTable);
    assert_eq!(e.sql_state.as_deref(), Some("42P01"));
    assert_eq!(e.message, "relation \"sqlvalue_missing\" does not exist");

    let e = fail(&mut *c, "SELECT emial FROM sqlvalue_err", &[]).await;
    assert_eq!(e.error_type, ErrorType::InvalidColumn);
    assert_eq!(e.sql_state.as_deref(), Some("42703"));
    assert!(e.suggestion.is_some());

    let e = fail(&mut *c, "SELEC 1", &[]).await;
    assert_eq!(e.error_type, ErrorType::SyntaxError);
    assert_eq!(e.sql_state.as_deref(), Some("42601"));

    let e = fail(&mut *c, "SELECT sqlvalue_no_such_fn(1)", &[]).await;
    assert_eq!(e.error_type, ErrorType::SyntaxError);
    assert_eq!(e.sql_state.as_deref(), Some("42883"));
    assert!(e.suggestion.is_some(), "the server's hint: {e:?}");

    conn.execute("DROP TABLE sqlvalue_err, sqlvalue_parent")
        .await
        .unwrap();
}

#[tokio::test]
async fn pg_read_only_timeout_and_lock() {
    let Some(mut conn) = pg().await else { return };
    let table = format!("sqlvalue_lock_{}", std::process::id());
    conn.execute(sqlx::AssertSqlSafe(format!(
        "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id int)"
    )))
    .await
    .unwrap();

    let mut tx = conn.begin().await.unwrap();
    tx.execute("SET TRANSACTION READ ONLY").await.unwrap();
    let e = fail(&mut *tx, &format!("INSERT INTO {table} VALUES (1)"), &[]).await;
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert_eq!(e.sql_state.as_deref(), Some("25006"));
    tx.rollback().await.unwrap();

    let mut tx = conn.begin().await.unwrap();
    tx.execute("SET LOCAL statement_timeout = '50ms'")
        .await
        .unwrap();
    let e = fail(&mut *tx, "SELECT pg_sleep(5)", &[]).await;
    assert_eq!(e.error_type, ErrorType::Timeout);
    assert_eq!(e.sql_state.as_deref(), Some("57014"));
    tx.rollback().await.unwrap();

    // Another session holds the table's lock.
    let mut holder = pg().await.unwrap();
    let mut held = holder.begin().await.unwrap();
    held.execute(sqlx::AssertSqlSafe(format!(
        "LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"
    )))
    .await
    .unwrap();
    let mut tx = conn.begin().await.unwrap();
    tx.execute("SET LOCAL lock_timeout = '50ms'").await.unwrap();
    let e = fail(&mut *tx, &format!("SELECT * FROM {table}"), &[]).await;
    assert_eq!(e.error_type, ErrorType::Timeout);
    assert_eq!(e.sql_state.as_deref(), Some("55P03"));
    tx.rollback().await.unwrap();
    held.rollback().await.unwrap();

    conn.execute(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
        .await
        .unwrap();
}

#[tokio::test]
async fn pg_connection_and_login_errors() {
    let Some(url) = nodekit_test_support::server("DATABASE_URL") else {
        return;
    };
    if pg().await.is_none() {
        return;
    }
    let base = sqlx::postgres::PgConnectOptions::from_str(&url).unwrap();

    // Trust authentication accepts any password, but not an unknown role.
    let opts = base
        .clone()
        .username("sqlvalue_no_such_role")
        .password("hunter2-secret");
    let e = classify(&opts.connect().await.unwrap_err());
    assert_eq!(e.error_type, ErrorType::AuthenticationError);
    assert_eq!(e.sql_state.as_deref(), Some("28000"));
    assert_clean(&e, &["sqlvalue_no_such_role", "hunter2-secret"]);

    let opts = base.clone().database("sqlvalue_no_such_db");
    let e = classify(&opts.connect().await.unwrap_err());
    assert_eq!(e.error_type, ErrorType::ConnectionError);
    assert_eq!(e.sql_state.as_deref(), Some("3D000"));

    let opts = base
        .clone()
        .host("127.0.0.1")
        .port(1)
        .password("hunter2-secret");
    let e = classify(&opts.connect().await.unwrap_err());
    assert_eq!(e.error_type, ErrorType::ConnectionError, "{e:?}");
    assert_eq!(e.sql_state, None);
    assert_clean(&e, &["hunter2-secret"]);

    let err = sqlx::postgres::PgConnectOptions::from_str(
        "postgres://admin:hunter2-secret@db.example.com:notaport/app",
    )
    .unwrap_err();
    let e = classify(&err);
    assert_eq!(e.error_type, ErrorType::ConnectionError);
    assert_clean(&e, &["hunter2-secret"]);
}

fn temp_path(tag: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    nodekit_test_support::scratch_dir()
        .join(format!("sqlvalue_{tag}_{}_{nanos}.db", std::process::id()))
}

async fn lite_fail(conn: &mut SqliteConnection, sql: &str) -> ToolError {
    match conn.execute(sqlx::AssertSqlSafe(sql.to_owned())).await {
        Ok(_) => panic!("expected an error from {sql}"),
        Err(e) => classify(&e),
    }
}

#[tokio::test]
async fn sqlite_errors() {
    let path = temp_path("errors");
    let opts = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .foreign_keys(true);
    let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
    conn.execute(
        "CREATE TABLE p (id INTEGER PRIMARY KEY);
         CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT NOT NULL,
             age INTEGER CHECK (age >= 0), parent INTEGER REFERENCES p (id));
         CREATE TABLE s (x INTEGER) STRICT;
         INSERT INTO p VALUES (1);
         INSERT INTO t (id, email, name) VALUES (1, 'taken@example.com', 'x');",
    )
    .await
    .unwrap();
    let cases = [
        (
            "INSERT INTO t (email, name) VALUES ('taken@example.com', 'y')",
            ErrorType::ConstraintViolation,
            "2067",
        ),
        (
            "INSERT INTO t (id, name) VALUES (1, 'y')",
            ErrorType::ConstraintViolation,
            "1555",
        ),
        (
            "INSERT INTO t (name) VALUES (NULL)",
            ErrorType::ConstraintViolation,
            "1299",
        ),
        (
            "INSERT INTO t (name, age) VALUES ('y', -5)",
            ErrorType::ConstraintViolation,
            "275",
        ),
        (
            "INSERT INTO t (name, parent) VALUES ('y', 99)",
            ErrorType::ConstraintViolation,
            "787",
        ),
        (
            "INSERT INTO s VALUES ('abc')",
            ErrorType::ConstraintViolation,
            "3091",
        ),
        ("SELECT * FROM nope", ErrorType::InvalidTable, "1"),
        ("SELECT nope FROM t", ErrorType::InvalidColumn, "1"),
        (
            "INSERT INTO t (nope) VALUES (1)",
            ErrorType::InvalidColumn,
            "1",
        ),
        ("SELEC 1", ErrorType::SyntaxError, "1"),
        ("SELECT * FROM t WHERE", ErrorType::SyntaxError, "1"),
        ("SELECT no_such_fn(1)", ErrorType::SyntaxError, "1"),
    ];
    for (sql, error_type, code) in cases {
        let e = lite_fail(&mut conn, sql).await;
        assert_eq!(
            (e.error_type, e.sql_state.as_deref()),
            (error_type, Some(code)),
            "{sql}: {e:?}"
        );
        assert_clean(&e, &["taken@example.com", "-5", "99", "'abc'"]);
    }

    // The tool's deadline: a progress handler that stops the statement.
    conn.lock_handle()
        .await
        .unwrap()
        .set_progress_handler(1000, || false);
    let e = lite_fail(
        &mut conn,
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
    )
    .await;
    assert_eq!(
        (e.error_type, e.sql_state.as_deref()),
        (ErrorType::Timeout, Some("9"))
    );
    conn.lock_handle().await.unwrap().remove_progress_handler();

    // Another connection holds the write lock.
    conn.execute("BEGIN IMMEDIATE").await.unwrap();
    let mut other = SqliteConnection::connect_with(&opts.clone().busy_timeout(Duration::ZERO))
        .await
        .unwrap();
    let e = lite_fail(&mut other, "INSERT INTO p VALUES (2)").await;
    assert_eq!(e.error_type, ErrorType::Timeout);
    assert_eq!(e.sql_state.as_deref(), Some("5"));
    assert!(e.suggestion.as_deref().unwrap().contains("retry"));
    conn.execute("ROLLBACK").await.unwrap();
    other.close().await.unwrap();

    let mut ro = SqliteConnection::connect_with(&opts.clone().read_only(true))
        .await
        .unwrap();
    let e = lite_fail(&mut ro, "INSERT INTO p VALUES (3)").await;
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert_eq!(e.sql_state.as_deref(), Some("8"));
    ro.close().await.unwrap();
    conn.close().await.unwrap();

    let missing = temp_path("missing");
    let err = SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(&missing))
        .await
        .unwrap_err();
    let e = classify(&err);
    assert_eq!(
        (e.error_type, e.sql_state.as_deref()),
        (ErrorType::ConnectionError, Some("14"))
    );

    std::fs::write(&missing, vec![b'x'; 4096]).unwrap();
    let e = match SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(&missing))
        .await
    {
        Ok(mut c) => lite_fail(&mut c, "SELECT * FROM sqlite_master").await,
        Err(err) => classify(&err),
    };
    assert_eq!(
        (e.error_type, e.sql_state.as_deref()),
        (ErrorType::ConnectionError, Some("26"))
    );
    let _ = std::fs::remove_file(&missing);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn postgres_codes_map_as_documented() {
    use ErrorType::*;
    let table = [
        ("08006", ConnectionError, None),
        ("08001", ConnectionError, None),
        ("3D000", ConnectionError, None),
        ("53300", ConnectionError, None),
        ("57P01", ConnectionError, None),
        ("28000", AuthenticationError, None),
        ("28P01", AuthenticationError, None),
        ("42P01", InvalidTable, None),
        ("3F000", InvalidTable, None),
        ("42703", InvalidColumn, None),
        ("42601", SyntaxError, None),
        ("42883", SyntaxError, None),
        ("42804", SyntaxError, None),
        ("42501", PermissionDenied, None),
        ("25006", PermissionDenied, None),
        ("23505", ConstraintViolation, None),
        ("23P01", ConstraintViolation, None),
        ("44000", ConstraintViolation, None),
        ("57014", Timeout, None),
        ("55P03", Timeout, None),
        ("22P02", ConstraintViolation, Some(Reason::BadValue)),
        ("22003", ConstraintViolation, Some(Reason::BadValue)),
        ("22007", ConstraintViolation, Some(Reason::BadValue)),
        ("22001", ConstraintViolation, Some(Reason::BadValue)),
        ("22012", ConstraintViolation, Some(Reason::BadValue)),
        ("53100", ConnectionError, Some(Reason::Resources)),
        ("54001", SyntaxError, Some(Reason::TooComplex)),
        ("40001", Timeout, Some(Reason::Conflict)),
        ("40P01", Timeout, Some(Reason::Conflict)),
        ("XX000", ConnectionError, Some(Reason::Database)),
        ("P0001", ConstraintViolation, Some(Reason::Database)),
        ("0A000", SyntaxError, Some(Reason::Database)),
        ("21000", SyntaxError, Some(Reason::Database)),
        ("25P02", ConnectionError, Some(Reason::Database)),
    ];
    for (code, expected, reason) in table {
        assert_eq!(pg_category(code), (expected, reason), "{code}");
    }
}

#[test]
fn sqlite_codes_map_as_documented() {
    use ErrorType::*;
    for code in [
        19, 275, 531, 787, 1043, 1299, 1555, 1811, 2067, 2323, 2579, 2835,
    ] {
        assert_eq!(
            sqlite_category(code, "x"),
            (ConstraintViolation, None),
            "{code}"
        );
    }
    let table = [
        (
            3091,
            "cannot store TEXT value in INTEGER column s.x",
            ConstraintViolation,
            Some(Reason::WrongType),
        ),
        (9, "interrupted", Timeout, None),
        (5, "database is locked", Timeout, None),
        (517, "database is locked", Timeout, None),
        (6, "database table is locked", Timeout, None),
        (262, "database table is locked", Timeout, None),
        (
            8,
            "attempt to write a readonly database",
            PermissionDenied,
            None,
        ),
        (
            1032,
            "attempt to write a readonly database",
            PermissionDenied,
            None,
        ),
        (23, "not authorized", PermissionDenied, None),
        (14, "unable to open database file", ConnectionError, None),
        (26, "file is not a database", ConnectionError, None),
        (1, "no such table: main.x", InvalidTable, None),
        (1, "no such column: y", InvalidColumn, None),
        (1, "table t has no column named y", InvalidColumn, None),
        (1, "near \"SELEC\": syntax error", SyntaxError, None),
        (1, "incomplete input", SyntaxError, None),
        (1, "unrecognized token: \"'abc\"", SyntaxError, None),
        (1, "no such function: f", SyntaxError, None),
        (
            1,
            "too many terms in compound SELECT",
            SyntaxError,
            Some(Reason::Database),
        ),
        (
            18,
            "string or blob too big",
            ConstraintViolation,
            Some(Reason::BadValue),
        ),
        (
            20,
            "datatype mismatch",
            ConstraintViolation,
            Some(Reason::WrongType),
        ),
        (
            25,
            "column index out of range",
            ConstraintViolation,
            Some(Reason::BadValue),
        ),
        (
            13,
            "database or disk is full",
            ConnectionError,
            Some(Reason::Database),
        ),
    ];
    for (code, message, expected, reason) in table {
        assert_eq!(
            sqlite_category(code, message),
            (expected, reason),
            "{code} {message}"
        );
    }
}

#[test]
fn sqlx_errors_map_as_documented() {
    use ErrorType::*;
    let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
    assert_eq!(classify(&io).error_type, ConnectionError);
    assert_eq!(
        classify(&sqlx::Error::PoolTimedOut).error_type,
        ConnectionError
    );
    assert_eq!(
        classify(&sqlx::Error::PoolClosed).error_type,
        ConnectionError
    );
    assert_eq!(
        classify(&sqlx::Error::Tls("bad cert".into())).error_type,
        ConnectionError
    );
    let config = sqlx::Error::Configuration("bad url postgres://u:pw1@h/db".into());
    let e = classify(&config);
    assert_eq!(e.error_type, ConnectionError);
    assert_clean(&e, &["pw1"]);
    assert_eq!(
        classify(&sqlx::Error::Protocol("x".into())).error_type,
        ConnectionError
    );
    let decode = sqlx::Error::ColumnDecode {
        index: "\"a\"".into(),
        source: "mismatched types".into(),
    };
    let e = classify(&decode);
    assert_eq!(
        (e.error_type, e.reason),
        (InvalidColumn, Some(Reason::Unreadable))
    );
    let encode = sqlx::Error::Encode("value 123456 secret out of range".into());
    let e = classify(&encode);
    assert_eq!(
        (e.error_type, e.reason),
        (ConstraintViolation, Some(Reason::WrongType))
    );
    assert_clean(&e, &["123456", "secret"]);
    assert_eq!(
        classify(&sqlx::Error::RowNotFound).error_type,
        ConnectionError
    );
}

#[test]
fn mask_hides_credentials() {
    let cases = [
        ("postgres://user:pass@host/db", "postgres://***@host/db"),
        (
            "failed: postgresql://admin:s3cr%40t@db.example.com:5432/app?sslmode=require then",
            "failed: postgresql://***@db.example.com:5432/app?sslmode=require then",
        ),
        (
            "postgres://u:p@ss/w@rd@host:1/db",
            "postgres://***@host:1/db",
        ),
        ("mysql://root@localhost/x", "mysql://***@localhost/x"),
        ("'postgres://a:b@h/d'", "'postgres://***@h/d'"),
        ("postgres://host/db", "postgres://host/db"),
        ("sqlite:///tmp/x.db", "sqlite:///tmp/x.db"),
        (
            "host=h password=hunter2 user=u",
            "host=h password=*** user=u",
        ),
        (
            "host=h password='a b\\' c' user=u",
            "host=h password=*** user=u",
        ),
        ("PGPASSWORD=hunter2 psql", "PGPASSWORD=*** psql"),
        (
            r#"{"password": "hunter2", "user": "u"}"#,
            r#"{"password": ***, "user": "u"}"#,
        ),
        (
            "postgres://h/db?user=u&password=hunter2&sslmode=require",
            "postgres://h/db?user=u&password=***&sslmode=require",
        ),
        (
            "sslpassword = x1 ; pwd=x2, api_key: x3",
            "sslpassword = *** ; pwd=***, api_key: ***",
        ),
        (
            "ALTER ROLE bob PASSWORD 'it''s secret'",
            "ALTER ROLE bob PASSWORD '***'",
        ),
        ("access_token=abc.def", "access_token=***"),
        ("unrecognized token: \"abc\"", "unrecognized token: \"abc\""),
        (
            "column \"password\" does not exist",
            "column \"password\" does not exist",
        ),
        ("", ""),
    ];
    for (input, expected) in cases {
        assert_eq!(mask(input), expected, "{input}");
    }
}

#[test]
fn messages_are_cut_and_values_redacted() {
    let long = "é".repeat(1000);
    let cut = clean(&long, false);
    assert_eq!(cut.chars().count(), MAX_CHARS);
    assert!(cut.ends_with('…'));
    assert_eq!(
        clean("invalid input syntax for type integer: \"a\"b\"", true),
        "invalid input syntax for type integer: \"***\""
    );
    assert_eq!(clean("division by zero", true), "division by zero");
}

use super::*;
use crate::ErrorType;

fn tables() -> Vec<String> {
    ["users", "orders", "Mixed Case"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn columns() -> Vec<String> {
    [
        "id",
        "name",
        "age",
        "user_id",
        "total",
        "created_at",
        "a",
        "Email",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn check_with(
    dialect: Dialect,
    sql: &str,
    allow_writes: bool,
) -> Result<CheckedStatement, ToolError> {
    let t = tables();
    let c = columns();
    let schema = match dialect {
        Dialect::Postgres => "public",
        Dialect::Sqlite => "main",
    };
    check_statement(
        dialect,
        sql,
        &StatementPolicy {
            schema,
            tables: &t,
            columns: &c,
            allow_writes,
            max_rows: 1000,
        },
    )
}

fn pg(sql: &str) -> Result<CheckedStatement, ToolError> {
    check_with(Dialect::Postgres, sql, false)
}

fn lite(sql: &str) -> Result<CheckedStatement, ToolError> {
    check_with(Dialect::Sqlite, sql, false)
}

fn pg_rw(sql: &str) -> Result<CheckedStatement, ToolError> {
    check_with(Dialect::Postgres, sql, true)
}

/// Both dialects refuse `sql` with `ty` (writes allowed or not as given).
fn refused_rw(sql: &str, ty: ErrorType, allow_writes: bool) -> ToolError {
    let mut last = None;
    for d in [Dialect::Postgres, Dialect::Sqlite] {
        let e = check_with(d, sql, allow_writes).expect_err(&format!("{d:?} must refuse {sql:?}"));
        assert_eq!(e.error_type, ty, "{d:?} {sql:?}: {e:?}");
        assert!(
            e.message.chars().count() < 300,
            "long message: {}",
            e.message
        );
        last = Some(e);
    }
    last.unwrap()
}

fn refused(sql: &str, ty: ErrorType) -> ToolError {
    refused_rw(sql, ty, false)
}

#[test]
fn recursive_ctes_may_count_but_not_grow_strings() {
    assert!(pg("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r").is_ok());
    for body in ["s || s", "concat(s, s)"] {
        let sql = format!(
            "WITH RECURSIVE r(n, s) AS (SELECT 1, name FROM users UNION ALL SELECT n + 1, {body} FROM r WHERE n < 40) SELECT n FROM r"
        );
        let e = refused(&sql, ErrorType::PermissionDenied);
        assert!(e.message.contains("WITH RECURSIVE"), "{e:?}");
    }
}

#[test]
fn plain_query_gets_a_limit_and_qualified_tables() {
    let c = pg("SELECT * FROM users").unwrap();
    assert_eq!(c.sql, r#"SELECT * FROM "public"."users" LIMIT 1001"#);
    assert!(c.read_only);
    assert_eq!(c.tables, vec!["users".to_string()]);
    let c = lite("select * from USERS;").unwrap();
    assert_eq!(c.sql, r#"SELECT * FROM "main"."users" LIMIT 1001"#);
}

#[test]
fn limits_are_kept_lowered_or_refused() {
    assert!(
        pg("SELECT * FROM users LIMIT 5")
            .unwrap()
            .sql
            .ends_with("LIMIT 5")
    );
    assert!(
        pg("SELECT * FROM users LIMIT 100000")
            .unwrap()
            .sql
            .ends_with("LIMIT 1001")
    );
    assert!(
        pg("SELECT * FROM users LIMIT ALL")
            .unwrap()
            .sql
            .ends_with("LIMIT 1001")
    );
    let c = pg("SELECT * FROM users LIMIT 10 OFFSET 5").unwrap();
    assert!(c.sql.ends_with("LIMIT 10 OFFSET 5"), "{}", c.sql);
    let c = pg("SELECT * FROM users OFFSET 5").unwrap();
    assert!(c.sql.ends_with("LIMIT 1001 OFFSET 5"), "{}", c.sql);
    let c = lite("SELECT * FROM users LIMIT 5, 99999").unwrap();
    assert!(c.sql.ends_with("LIMIT 5, 1001"), "{}", c.sql);
    let c = pg("SELECT * FROM users FETCH FIRST 3 ROWS ONLY").unwrap();
    assert!(c.sql.ends_with("LIMIT 3"), "{}", c.sql);
    let c = pg("SELECT * FROM users OFFSET 2 ROWS FETCH FIRST 3 ROWS ONLY").unwrap();
    assert!(c.sql.ends_with("LIMIT 3 OFFSET 2 ROWS"), "{}", c.sql);
    refused(
        "SELECT * FROM users FETCH FIRST 50 PERCENT ROWS ONLY",
        ErrorType::PermissionDenied,
    );
    let c = pg("SELECT * FROM users FETCH FIRST 30000 ROWS ONLY").unwrap();
    assert!(c.sql.ends_with("LIMIT 1001"), "{}", c.sql);
    // The limit applies to the whole query, not to a branch.
    let c = pg("SELECT id FROM users UNION SELECT id FROM orders").unwrap();
    assert!(c.sql.ends_with("LIMIT 1001"), "{}", c.sql);
    let c = pg("(SELECT id FROM users LIMIT 100000)").unwrap();
    assert!(c.sql.ends_with("LIMIT 1001"), "{}", c.sql);

    refused("SELECT * FROM users LIMIT -1", ErrorType::SyntaxError);
    refused(
        "SELECT * FROM users LIMIT (SELECT 1)",
        ErrorType::SyntaxError,
    );
    refused("SELECT * FROM users LIMIT 1+1", ErrorType::SyntaxError);
    refused("SELECT * FROM users LIMIT NULL", ErrorType::SyntaxError);
    refused("SELECT * FROM users LIMIT '5'", ErrorType::SyntaxError);
    refused("SELECT * FROM users LIMIT 1e9", ErrorType::SyntaxError);
    refused(
        "SELECT * FROM users LIMIT 5 OFFSET -1",
        ErrorType::SyntaxError,
    );
    let e = lite("SELECT * FROM users LIMIT -1, 5").unwrap_err();
    assert_eq!(e.error_type, ErrorType::SyntaxError);
    let e = pg("SELECT * FROM users LIMIT 99999999999999999999999").unwrap_err();
    assert_eq!(e.error_type, ErrorType::SyntaxError);
}

#[test]
fn max_rows_at_the_top_of_u32_does_not_overflow() {
    let t = tables();
    let c = check_statement(
        Dialect::Postgres,
        "SELECT * FROM users",
        &StatementPolicy {
            schema: "public",
            tables: &t,
            columns: &[],
            allow_writes: false,
            max_rows: u32::MAX,
        },
    )
    .unwrap();
    assert!(c.sql.ends_with("LIMIT 4294967296"), "{}", c.sql);
}

#[test]
fn legitimate_queries_pass() {
    for q in [
        "SELECT name, count(*) FROM orders GROUP BY name ORDER BY 2 DESC",
        "SELECT u.name, o.total FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total > 10",
        "SELECT * FROM users LEFT OUTER JOIN orders USING (id)",
        "WITH big AS (SELECT * FROM orders WHERE total > 100) SELECT count(*) FROM big",
        "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b",
        "SELECT id FROM users WHERE id IN (SELECT user_id FROM orders)",
        "SELECT id FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id)",
        "SELECT (SELECT max(total) FROM orders) AS m",
        "SELECT CASE WHEN age > 18 THEN 'adult' ELSE 'minor' END FROM users",
        "SELECT CAST(id AS text), lower(name) || '!' FROM users",
        "SELECT coalesce(nullif(name, ''), 'none'), abs(-1), round(2.5) FROM users",
        "SELECT count(DISTINCT name) FROM users",
        "SELECT row_number() OVER (PARTITION BY name ORDER BY id) FROM users",
        "SELECT sum(total) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM orders",
        "SELECT name FROM users WHERE name LIKE 'a%' AND age BETWEEN 1 AND 9 AND id IS NOT NULL",
        "SELECT 1",
        "SELECT * FROM (SELECT id FROM users) AS s",
        "SELECT * FROM \"Mixed Case\"",
        "SELECT id FROM users UNION ALL SELECT id FROM orders",
        "VALUES (1), (2)",
    ] {
        for d in [Dialect::Postgres, Dialect::Sqlite] {
            let r = check_with(d, q, false);
            assert!(r.is_ok(), "{d:?} {q}: {r:?}");
        }
    }
    for q in [
        "SELECT id::text, now() - interval '1 day', date_trunc('day', created_at) FROM orders",
        "SELECT string_agg(name, ',' ORDER BY name), array_agg(id) FROM users",
        "SELECT current_date, CURRENT_TIMESTAMP, DATE '2024-01-01', EXTRACT(year FROM created_at) FROM orders",
        "SELECT DISTINCT ON (name) name, id FROM users ORDER BY name, id",
        "SELECT count(DISTINCT name) FROM public.users JOIN \"public\".orders ON true",
        "SELECT count(*) FILTER (WHERE age > 18) FROM users",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
    ] {
        let r = pg(q);
        assert!(r.is_ok(), "{q}: {r:?}");
    }
    for q in [
        "SELECT strftime('%Y', created_at), julianday('now'), group_concat(name, ',') FROM orders",
        "SELECT ifnull(name, 'x'), iif(age > 1, 'a', 'b'), substr(name, 1, 2) FROM users",
        "SELECT * FROM MAIN.users JOIN \"main\".Orders ON 1",
    ] {
        let r = lite(q);
        assert!(r.is_ok(), "{q}: {r:?}");
    }
}

#[test]
fn tables_used_are_collected_once() {
    let c =
        pg("SELECT * FROM users u JOIN orders o ON o.user_id = u.id JOIN users u2 ON u2.id = u.id")
            .unwrap();
    assert_eq!(c.tables, vec!["users".to_string(), "orders".to_string()]);
    let c = pg("WITH x AS (SELECT * FROM orders) SELECT * FROM x").unwrap();
    assert_eq!(c.tables, vec!["orders".to_string()]);
}

#[test]
fn stacked_statements_are_refused() {
    refused("SELECT 1; SELECT 2", ErrorType::PermissionDenied);
    let e = refused(
        "SELECT * FROM users; DROP TABLE users",
        ErrorType::PermissionDenied,
    );
    assert_eq!(e.message, "exactly one statement, please");
    refused(
        "SELECT 1; garbage that does not parse",
        ErrorType::PermissionDenied,
    );
    refused("; SELECT 1; SELECT 2", ErrorType::PermissionDenied);
    assert!(pg("SELECT 1;").is_ok());
    assert!(pg("SELECT 1 ;; ").is_ok());
    refused(";", ErrorType::SyntaxError);
    refused("", ErrorType::SyntaxError);
    refused("   ", ErrorType::SyntaxError);
    refused("SELEC * FROM users", ErrorType::SyntaxError);
}

#[test]
fn comments_placeholders_and_special_strings_are_refused() {
    refused("SELECT * FROM users -- x", ErrorType::PermissionDenied);
    refused("SELECT * FROM users /* x */", ErrorType::PermissionDenied);
    refused(
        "SELECT * FROM users WHERE id = $1",
        ErrorType::PermissionDenied,
    );
    refused(
        "SELECT * FROM users WHERE id = ?",
        ErrorType::PermissionDenied,
    );
    refused("SELECT $$x$$", ErrorType::PermissionDenied);
    refused("SELECT X'41'", ErrorType::PermissionDenied);
    refused("SELECT 0x10", ErrorType::PermissionDenied);
    refused("SELECT N'x'", ErrorType::PermissionDenied);
    assert_eq!(
        pg(r"SELECT E'\x27'").unwrap_err().error_type,
        ErrorType::PermissionDenied
    );
    assert_eq!(
        lite("SELECT * FROM users WHERE id = :id")
            .unwrap_err()
            .error_type,
        ErrorType::PermissionDenied
    );
    assert_eq!(
        lite("SELECT * FROM users WHERE id = @id")
            .unwrap_err()
            .error_type,
        ErrorType::PermissionDenied
    );
}

#[test]
fn write_statements_need_permission_and_where() {
    let e = refused(
        "INSERT INTO users (name) VALUES ('x')",
        ErrorType::PermissionDenied,
    );
    assert!(e.message.contains("read-only"), "{}", e.message);
    refused(
        "UPDATE users SET name = 'x' WHERE id = 1",
        ErrorType::PermissionDenied,
    );
    refused(
        "DELETE FROM users WHERE id = 1",
        ErrorType::PermissionDenied,
    );

    let c = pg_rw("INSERT INTO users (name) VALUES ('x') RETURNING id").unwrap();
    assert!(!c.read_only);
    assert_eq!(
        c.sql,
        r#"INSERT INTO "public"."users" (name) VALUES ('x') RETURNING id"#
    );
    let c = pg_rw("UPDATE users SET name = 'x' WHERE id = 1").unwrap();
    assert_eq!(
        c.sql,
        r#"UPDATE "public"."users" SET name = 'x' WHERE id = 1"#
    );
    let c = pg_rw("DELETE FROM users WHERE id IN (SELECT user_id FROM orders)").unwrap();
    assert_eq!(c.tables, vec!["users".to_string(), "orders".to_string()]);
    assert!(
        pg_rw("INSERT INTO users (id) SELECT id FROM orders ON CONFLICT (id) DO NOTHING").is_ok()
    );

    let e = refused_rw("UPDATE users SET a=1", ErrorType::PermissionDenied, true);
    assert!(e.message.contains("WHERE"), "{}", e.message);
    refused_rw("DELETE FROM users", ErrorType::PermissionDenied, true);
    refused_rw(
        "DELETE FROM users WHERE 1=1",
        ErrorType::PermissionDenied,
        true,
    );
    refused_rw(
        "UPDATE users SET a = 1 WHERE TRUE",
        ErrorType::PermissionDenied,
        true,
    );
    refused_rw(
        "DELETE FROM secrets WHERE id = 1",
        ErrorType::InvalidTable,
        true,
    );
    refused_rw(
        "INSERT INTO secrets (a) VALUES (1)",
        ErrorType::InvalidTable,
        true,
    );
    refused_rw(
        "INSERT INTO users SELECT * FROM secrets",
        ErrorType::InvalidTable,
        true,
    );
    refused_rw(
        "UPDATE users SET a = (SELECT pw FROM secrets) WHERE id = 1",
        ErrorType::InvalidTable,
        true,
    );
    refused_rw(
        "UPDATE users SET a = pg_sleep(1) WHERE id = 1",
        ErrorType::PermissionDenied,
        true,
    );
    refused_rw("DROP TABLE users", ErrorType::PermissionDenied, true);
    refused_rw("CREATE TABLE x (a int)", ErrorType::PermissionDenied, true);
    refused_rw("TRUNCATE users", ErrorType::PermissionDenied, true);
}

#[test]
fn data_modifying_ctes_are_refused() {
    for writes in [false, true] {
        refused_rw(
            "WITH x AS (DELETE FROM users RETURNING *) SELECT * FROM x",
            ErrorType::PermissionDenied,
            writes,
        );
        refused_rw(
            "WITH x AS (UPDATE users SET a = 1 WHERE id = 1 RETURNING *) SELECT * FROM x",
            ErrorType::PermissionDenied,
            writes,
        );
        refused_rw(
            "WITH x AS (INSERT INTO users (a) VALUES (1) RETURNING *) SELECT * FROM x",
            ErrorType::PermissionDenied,
            writes,
        );
        // A CTE named like a secret table does not make DELETE's target
        // a CTE: the whole WITH ... DELETE form is refused.
        refused_rw(
            "WITH secrets AS (SELECT 1) DELETE FROM secrets WHERE id = 1",
            ErrorType::PermissionDenied,
            writes,
        );
    }
}

#[test]
fn select_into_and_locks_are_refused() {
    let e = refused("SELECT * INTO t2 FROM users", ErrorType::PermissionDenied);
    assert!(e.message.contains("INTO"), "{}", e.message);
    refused(
        "SELECT * FROM users FOR UPDATE",
        ErrorType::PermissionDenied,
    );
    assert_eq!(
        pg("SELECT * FROM users FOR SHARE").unwrap_err().error_type,
        ErrorType::PermissionDenied
    );
    assert_eq!(
        pg("SELECT * FROM (SELECT * FROM users FOR UPDATE) s")
            .unwrap_err()
            .error_type,
        ErrorType::PermissionDenied
    );
}

#[test]
fn catalog_and_foreign_relations_are_refused() {
    for q in [
        "SELECT * FROM pg_catalog.pg_shadow",
        "SELECT * FROM pg_shadow",
        "SELECT * FROM pg_user",
        "SELECT * FROM information_schema.tables",
        "SELECT * FROM sqlite_master",
        "SELECT * FROM sqlite_schema",
        "SELECT * FROM main.sqlite_master",
        "SELECT * FROM other.users",
        "SELECT * FROM db.public.users",
        "SELECT * FROM secrets",
        "SELECT * FROM users UNION SELECT * FROM secrets",
        "SELECT * FROM users WHERE id IN (SELECT id FROM secrets)",
        "SELECT (SELECT password FROM secrets LIMIT 1) FROM users",
        "SELECT * FROM users JOIN secrets ON true",
        "SELECT * FROM (SELECT * FROM secrets) s",
        "SELECT * FROM users WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_authid)",
        "WITH x AS (SELECT * FROM secrets) SELECT * FROM x",
        "SELECT * FROM \"USERS\"",
    ] {
        let e = match pg(q) {
            Err(e) => e,
            Ok(c) => panic!("{q} passed as {}", c.sql),
        };
        assert_eq!(e.error_type, ErrorType::InvalidTable, "{q}: {e:?}");
        assert_eq!(
            e.suggestion.as_deref(),
            Some("Tables you can use: users, orders, Mixed Case"),
            "{q}"
        );
    }
    // SQLite compares names case-insensitively, quoted or not.
    assert!(lite("SELECT * FROM \"USERS\"").is_ok());
    assert_eq!(
        lite("SELECT * FROM temp.users").unwrap_err().error_type,
        ErrorType::InvalidTable
    );
    // PostgreSQL folds unquoted names: a mixed-case table needs quotes.
    let e = pg("SELECT * FROM Mixed").unwrap_err();
    assert_eq!(e.error_type, ErrorType::InvalidTable);
    let e = pg("SELECT * FROM \"mixed case\"").unwrap_err();
    assert!(e.message.contains("write \"Mixed Case\""), "{}", e.message);
}

#[test]
fn cte_names_are_scoped() {
    // A non-recursive CTE's body does not see its own name: `secrets`
    // inside is the real table.
    refused(
        "WITH secrets AS (SELECT * FROM secrets) SELECT * FROM secrets",
        ErrorType::InvalidTable,
    );
    // Nor later CTEs.
    refused(
        "WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a",
        ErrorType::InvalidTable,
    );
    // A CTE defined in a subquery is not visible outside it.
    refused(
        "SELECT * FROM (WITH secrets AS (SELECT 1) SELECT * FROM secrets) s, secrets",
        ErrorType::InvalidTable,
    );
    refused(
        "SELECT (WITH s AS (SELECT 1) SELECT 1), (SELECT * FROM s)",
        ErrorType::InvalidTable,
    );
    // A nested CTE body sees only the earlier CTEs of the outer WITH.
    refused(
        "WITH a AS (WITH i AS (SELECT * FROM b) SELECT * FROM i), b AS (SELECT 1) SELECT * FROM a",
        ErrorType::InvalidTable,
    );
    assert!(pg("WITH b AS (SELECT 1), a AS (WITH i AS (SELECT * FROM b) SELECT * FROM i) SELECT * FROM a").is_ok());
    // Recursive CTEs see themselves.
    assert!(pg("WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r").is_ok());
    // PostgreSQL: quoted CTE names are case-sensitive; SQLite: never.
    assert_eq!(
        pg("WITH \"Secrets\" AS (SELECT 1) SELECT * FROM secrets")
            .unwrap_err()
            .error_type,
        ErrorType::InvalidTable
    );
    assert!(lite("WITH \"Secrets\" AS (SELECT 1) SELECT * FROM secrets").is_ok());
    // A qualified name is never a CTE.
    refused(
        "WITH secrets AS (SELECT 1) SELECT * FROM public.secrets",
        ErrorType::InvalidTable,
    );
}

#[test]
fn dangerous_functions_are_refused_everywhere() {
    for f in [
        "pg_sleep(5)",
        "pg_read_file('/etc/passwd')",
        "pg_ls_dir('.')",
        "lo_import('/etc/passwd')",
        "dblink('host=x', 'select 1')",
        "current_setting('data_directory')",
        "set_config('a', 'b', false)",
        "version()",
        "randomblob(1000000000)",
        "zeroblob(1000000000)",
        "load_extension('x')",
        "readfile('/etc/passwd')",
        "writefile('/tmp/x', 'y')",
        "sqlite_version()",
        "query_to_xml('select 1', true, true, '')",
        "pg_terminate_backend(1)",
        "pg_catalog.lower('a')",
        "\"LOWER\"('a')",
    ] {
        for q in [
            format!("SELECT {f}"),
            format!("SELECT * FROM users WHERE {f} IS NULL"),
            format!("SELECT name FROM users GROUP BY name HAVING count({f}) > 0"),
            format!("SELECT * FROM users ORDER BY {f}"),
            format!("SELECT * FROM users JOIN orders ON {f} IS NULL"),
            format!("SELECT lower({f}) FROM users"),
            format!("SELECT * FROM users WHERE id IN (SELECT {f})"),
        ] {
            for d in [Dialect::Postgres, Dialect::Sqlite] {
                let e = check_with(d, &q, false).expect_err(&q);
                assert_eq!(
                    e.error_type,
                    ErrorType::PermissionDenied,
                    "{d:?} {q}: {e:?}"
                );
            }
        }
    }
    let e = pg("SELECT pg_sleep(5)").unwrap_err();
    assert!(e.message.contains("pg_sleep"), "{}", e.message);
    // Bare keywords PostgreSQL evaluates as functions.
    for k in [
        "current_user",
        "session_user",
        "user",
        "current_schema",
        "current_role",
    ] {
        let e = pg(&format!("SELECT {k}")).unwrap_err();
        assert_eq!(e.error_type, ErrorType::PermissionDenied, "{k}");
    }
    // SQLite-only and PostgreSQL-only functions.
    assert!(pg("SELECT julianday('now')").is_err());
    assert!(lite("SELECT array_agg(id) FROM users").is_err());
    // Window use of a scalar function.
    assert!(pg("SELECT lower(name) OVER () FROM users").is_err());
    assert!(pg("SELECT row_number() FROM users").is_err());
}

#[test]
fn table_functions_are_refused() {
    for q in [
        "SELECT * FROM generate_series(1,10)",
        "SELECT * FROM users, LATERAL generate_series(1, users.id)",
        "SELECT * FROM pg_read_file('/etc/passwd')",
        "SELECT * FROM json_each('{}')",
        "SELECT * FROM pragma_table_info('users')",
        "SELECT * FROM UNNEST(ARRAY[1,2])",
        "SELECT * FROM users JOIN generate_series(1,2) g ON true",
    ] {
        let e = pg(q).expect_err(q);
        assert_eq!(e.error_type, ErrorType::PermissionDenied, "{q}: {e:?}");
    }
    let e = lite("SELECT * FROM json_each('[1]')").unwrap_err();
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
}

#[test]
fn other_statements_are_refused() {
    for q in [
        "COPY users TO '/tmp/x'",
        "ATTACH DATABASE '/tmp/x' AS y",
        "PRAGMA writable_schema=1",
        "SET statement_timeout=0",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "DROP TABLE users",
        "ALTER TABLE users ADD COLUMN x int",
        "GRANT ALL ON users TO public",
        "EXPLAIN SELECT * FROM users",
        "EXPLAIN ANALYZE DELETE FROM users",
        "CALL p()",
        "VACUUM",
        "CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql",
        "LISTEN x",
        "SHOW ALL",
        "DETACH DATABASE y",
    ] {
        for d in [Dialect::Postgres, Dialect::Sqlite] {
            match check_with(d, q, true) {
                Err(e) => assert!(
                    matches!(
                        e.error_type,
                        ErrorType::PermissionDenied | ErrorType::SyntaxError
                    ),
                    "{d:?} {q}: {e:?}"
                ),
                Ok(c) => panic!("{d:?} {q} passed as {}", c.sql),
            }
        }
    }
    let e = pg("COPY users TO '/tmp/x'").unwrap_err();
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert!(e.message.contains("COPY"), "{}", e.message);
}

#[test]
fn expressions_outside_the_list_are_refused() {
    for q in [
        "SELECT id::regclass FROM users",
        "SELECT CAST(name AS json) FROM users",
        "SELECT 'x'::xml",
        "SELECT name COLLATE \"C\" FROM users",
        "SELECT ARRAY[1, 2]",
        "SELECT data -> 'a' FROM users",
        "SELECT name ~ 'a' FROM users",
        "SELECT id & 1 FROM users",
        "SELECT name SIMILAR TO 'a' FROM users",
        "SELECT ts AT TIME ZONE 'UTC' FROM users",
        "SELECT id = ANY(ARRAY[1]) FROM users",
        "SELECT TRY_CAST(id AS text) FROM users",
        "SELECT count(*) FROM users GROUP BY ROLLUP (name)",
        "SELECT JSON '{}'",
    ] {
        match pg(q) {
            Err(e) => assert!(
                matches!(
                    e.error_type,
                    ErrorType::PermissionDenied | ErrorType::SyntaxError
                ),
                "{q}: {e:?}"
            ),
            Ok(c) => panic!("{q} passed as {}", c.sql),
        }
    }
}

#[test]
fn size_control_and_nesting_limits() {
    let long = format!("SELECT '{}'", "a".repeat(MAX_STATEMENT_BYTES));
    refused(&long, ErrorType::SyntaxError);
    refused("SELECT 1\0", ErrorType::SyntaxError);
    refused("SELECT\u{8} 1", ErrorType::SyntaxError);
    let deep = format!("SELECT {}1{}", "(".repeat(100), ")".repeat(100));
    refused(&deep, ErrorType::SyntaxError);
    let deep_q = format!(
        "SELECT * FROM {}users{}",
        "(SELECT * FROM ".repeat(60),
        ") s".repeat(60)
    );
    refused(&deep_q, ErrorType::SyntaxError);
    // The NOT chain that sqlparser misreads at its recursion limit.
    let nots = format!("SELECT {}TRUE FROM users", "NOT ".repeat(60));
    assert!(pg(&nots).is_err() && lite(&nots).is_err());
    // Flat operator chains up to the token limit are fine and do not
    // overflow the stack.
    let chain = format!("SELECT {}1", "1 + ".repeat(990));
    assert!(pg(&chain).is_ok());
    let conds = format!(
        "SELECT * FROM users WHERE {}",
        vec!["id = 1"; 300].join(" OR ")
    );
    assert!(pg(&conds).is_ok());
}

#[test]
fn more_bypass_attempts() {
    for q in [
        "SELECT * FROM users NATURAL JOIN secrets",
        "SELECT * FROM users, secrets",
        "SELECT * FROM ONLY secrets",
        "SELECT * FROM users WHERE id = (SELECT id FROM users LIMIT 1 FOR UPDATE)",
        "SELECT * FROM users WHERE id IN (TABLE secrets)",
        "SELECT * FROM users WHERE 1 = (SELECT count(*) FROM pg_stat_activity)",
        "SELECT * FROM users TABLESAMPLE SYSTEM (10)",
        "SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM users",
        "SELECT sum(id) OVER (PARTITION BY pg_backend_pid()) FROM users",
        "SELECT * FROM users WHERE name = U&\"d\\0061ta\"",
        "SELECT * FROM users WHERE id = 1 OR pg_catalog.pg_sleep(1) IS NULL",
        "SELECT * FROM users WHERE id OPERATOR(pg_catalog.=) 1",
        "SELECT nextval('s')",
        "SELECT txid_current()",
        "SELECT * FROM users WHERE name = ANY('{a,b}')",
        "SELECT string_agg(name, ',' ORDER BY pg_sleep(1)) FROM users",
        "SELECT * FROM users ORDER BY (SELECT 1 FROM secrets)",
        "SELECT * FROM users GROUP BY id HAVING count(*) > (SELECT count(*) FROM secrets)",
        "SELECT * FROM users JOIN orders ON orders.id = (SELECT id FROM secrets)",
        "SELECT * FROM users LIMIT 1 OFFSET (SELECT 1)",
        "WITH RECURSIVE x AS (SELECT * FROM secrets) SELECT * FROM x",
    ] {
        match pg(q) {
            Err(e) => assert!(
                matches!(
                    e.error_type,
                    ErrorType::PermissionDenied | ErrorType::InvalidTable | ErrorType::SyntaxError
                ),
                "{q}: {e:?}"
            ),
            Ok(c) => panic!("{q} passed as {}", c.sql),
        }
    }
    for q in [
        "SELECT * FROM sqlite_temp_master",
        "SELECT * FROM main.users, temp.sqlite_master",
        "SELECT * FROM users INDEXED BY idx",
        "SELECT * FROM pragma_database_list",
        "SELECT * FROM users WHERE id = 1 UNION SELECT sql, 1 FROM sqlite_master",
        "SELECT printf('%.*c', 1000000000, 'x')",
        "SELECT * FROM users WHERE name GLOB '*'",
        "SELECT * FROM users WHERE name REGEXP 'a'",
        "SELECT * FROM users WHERE name MATCH 'a'",
    ] {
        match lite(q) {
            Err(e) => assert!(
                matches!(
                    e.error_type,
                    ErrorType::PermissionDenied | ErrorType::InvalidTable | ErrorType::SyntaxError
                ),
                "{q}: {e:?}"
            ),
            Ok(c) => panic!("{q} passed as {}", c.sql),
        }
    }
}

#[test]
fn relations_are_rewritten_to_what_was_checked() {
    // sqlparser reads `FROM ONLY secrets` as table `only` aliased
    // `secrets`; PostgreSQL reads table `secrets`. The rewrite to the
    // qualified catalog name makes the database read what we checked.
    let t = vec!["only".to_string()];
    let c = check_statement(
        Dialect::Postgres,
        "SELECT * FROM ONLY secrets",
        &StatementPolicy {
            schema: "public",
            tables: &t,
            columns: &[],
            allow_writes: false,
            max_rows: 10,
        },
    )
    .unwrap();
    assert_eq!(c.sql, r#"SELECT * FROM "public"."only" secrets LIMIT 11"#);
    // Quotes inside catalog names are escaped by the rendering.
    let t = vec!["we\"ird".to_string()];
    let c = check_statement(
        Dialect::Sqlite,
        "SELECT * FROM \"WE\"\"IRD\"",
        &StatementPolicy {
            schema: "main",
            tables: &t,
            columns: &[],
            allow_writes: false,
            max_rows: 10,
        },
    )
    .unwrap();
    assert_eq!(c.sql, r#"SELECT * FROM "main"."we""ird" LIMIT 11"#);
    // Without a schema, names are left unqualified (but still quoted).
    let t = vec!["users".to_string()];
    let c = check_statement(
        Dialect::Postgres,
        "SELECT * FROM users",
        &StatementPolicy {
            schema: "",
            tables: &t,
            columns: &[],
            allow_writes: false,
            max_rows: 10,
        },
    )
    .unwrap();
    assert_eq!(c.sql, r#"SELECT * FROM "users" LIMIT 11"#);
}

#[test]
fn unicode_quotes_stay_inside_strings() {
    let c = pg("SELECT * FROM users WHERE name = 'O’Brien'' OR 1=1'").unwrap();
    assert!(c.sql.contains("'O’Brien'' OR 1=1'"), "{}", c.sql);
    // A look-alike quote is not a quote: it is part of an identifier
    // (on PostgreSQL, one that names no column).
    let q = "SELECT * FROM users WHERE name = ’x’ OR ’1’=’1’";
    assert!(lite(q).unwrap().sql.contains("’x’"));
    assert_eq!(pg(q).unwrap_err().error_type, ErrorType::InvalidColumn);
}

#[test]
fn output_is_our_rendering_not_the_input() {
    let c = pg("select   ID  from   USERS   where NAME='a'").unwrap();
    assert_eq!(
        c.sql,
        r#"SELECT ID FROM "public"."users" WHERE NAME = 'a' LIMIT 1001"#
    );
}

fn lite_rw(sql: &str) -> Result<CheckedStatement, ToolError> {
    check_with(Dialect::Sqlite, sql, true)
}

fn pg_error(sql: &str, writes: bool) -> ToolError {
    match check_with(Dialect::Postgres, sql, writes) {
        Err(e) => e,
        Ok(c) => panic!("{sql} passed as {}", c.sql),
    }
}

#[test]
fn postgres_function_call_notation_and_whole_rows_are_refused() {
    for q in [
        "SELECT u.to_json FROM users u",
        "SELECT u.pg_column_size FROM users u",
        "SELECT users.quote_literal FROM users",
        "SELECT u.peek FROM users u",
        "SELECT public.users.peek FROM public.users",
        "SELECT id FROM users u WHERE u.peek IS NOT NULL",
        "SELECT id FROM users u ORDER BY u.peek",
        "SELECT count(*) FROM users u GROUP BY u.peek",
        "SELECT * FROM users u JOIN orders o ON o.peek = u.id",
        "SELECT lower(u.peek) FROM users u",
        // An alias defined elsewhere does not make `u.peek` a column
        // of the base table `u`.
        "SELECT u.peek FROM users u, (SELECT 1 AS peek) x",
        "WITH x AS (SELECT 1 AS peek) SELECT u.peek FROM users u, x",
        // Whole-row references.
        "SELECT u FROM users u",
        "SELECT users FROM users",
        "SELECT array_agg(u) FROM users u",
        "SELECT count(u) FROM users u",
        "SELECT CAST(u AS text) FROM users u",
        "SELECT id FROM users u WHERE u IS NOT NULL",
        "SELECT 1 AS u, u FROM users u",
        "SELECT s FROM (SELECT id FROM users) s",
        "SELECT (u.*) FROM users u",
        "SELECT CAST(u.* AS text) FROM users u",
        "SELECT id FROM users u WHERE u.* IS NOT NULL",
        "SELECT name FROM users u ORDER BY u.*",
        "SELECT u.name.* FROM users u",
        // Names that exist nowhere.
        "SELECT nosuch FROM users",
        "SELECT \"NAME\" FROM users",
    ] {
        let e = pg_error(q, false);
        assert_eq!(e.error_type, ErrorType::InvalidColumn, "{q}: {e:?}");
        assert!(e.message.chars().count() < 300, "{}", e.message);
        assert!(
            e.suggestion.as_deref().unwrap_or("").contains("user_id"),
            "{q}: {e:?}"
        );
    }
    for q in [
        "INSERT INTO users (name) VALUES ('x') RETURNING users.peek",
        "INSERT INTO users AS t (name) VALUES ('x') RETURNING t.peek",
        "UPDATE users SET name = users.peek WHERE id = 1",
        "DELETE FROM users WHERE id = 1 RETURNING users.peek",
        "UPDATE users SET name = 'x' WHERE id = 1 RETURNING users",
        "DELETE FROM users WHERE id = 1 RETURNING users.name.*",
    ] {
        let e = pg_error(q, true);
        assert_eq!(e.error_type, ErrorType::InvalidColumn, "{q}: {e:?}");
    }
    // PostgreSQL folds unquoted names: a mixed-case column needs quotes.
    let e = pg_error("SELECT email FROM users", false);
    assert_eq!(e.error_type, ErrorType::InvalidColumn);
    assert!(e.message.contains("write \"Email\""), "{}", e.message);
    // Special keywords stay refused as functions.
    assert_eq!(
        pg_error("SELECT current_user FROM users", false).error_type,
        ErrorType::PermissionDenied
    );

    for q in [
        "SELECT u.name, o.total AS t FROM users u JOIN orders o ON o.user_id = u.id ORDER BY t",
        "SELECT s.n, n FROM (SELECT count(*) AS n FROM users) s",
        "WITH c(k) AS (SELECT id FROM users) SELECT c.k, k FROM c",
        "WITH c AS (SELECT id AS k FROM users) SELECT x.k FROM c x",
        "SELECT x.k FROM (SELECT id FROM users) AS x(k)",
        "SELECT public.users.id, users.NAME, \"Email\" FROM public.users",
        "SELECT name, count(*) AS n FROM users GROUP BY name HAVING count(*) > 1 ORDER BY n",
        "SELECT id FROM users WHERE id IN (SELECT user_id FROM orders o WHERE o.total > 1)",
        "SELECT u.*, orders.*, public.orders.*, s.* FROM users u, public.orders, (SELECT 1 AS k) s",
        "SELECT count(*), count(u.*) FROM users u",
    ] {
        let r = pg(q);
        assert!(r.is_ok(), "{q}: {r:?}");
    }
    assert!(pg_rw("INSERT INTO users (name, age) VALUES (DEFAULT, 1) RETURNING id").is_ok());
    assert!(pg_rw("UPDATE users SET name = DEFAULT WHERE id = 1").is_ok());
    // SQLite has no function-call notation: unchanged.
    assert!(lite("SELECT u.peek FROM users u").is_ok());
}

#[test]
fn conflict_clauses_that_change_other_rows_are_refused() {
    for q in [
        "REPLACE INTO users (id, name) VALUES (1, 'x')",
        "INSERT OR REPLACE INTO users (id, name) VALUES (1, 'x')",
        "INSERT OR IGNORE INTO users (id, name) VALUES (1, 'x')",
        "INSERT OR ROLLBACK INTO users (id) VALUES (1)",
        "UPDATE OR REPLACE users SET id = 4 WHERE id = 5",
        "UPDATE OR IGNORE users SET id = 4 WHERE id = 5",
    ] {
        match lite_rw(q) {
            Err(e) => assert_eq!(e.error_type, ErrorType::PermissionDenied, "{q}: {e:?}"),
            Ok(c) => panic!("{q} passed as {}", c.sql),
        }
    }
    refused_rw(
        "INSERT INTO users (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET name = 'x'",
        ErrorType::PermissionDenied,
        true,
    );
    assert!(lite_rw("INSERT INTO users (id) VALUES (1) ON CONFLICT (id) DO NOTHING").is_ok());
    assert!(pg_rw("INSERT INTO users (id) VALUES (1) ON CONFLICT DO NOTHING").is_ok());
}

#[test]
fn update_and_delete_must_filter_on_a_real_column() {
    for q in [
        "DELETE FROM users WHERE id = id",
        "DELETE FROM users WHERE users.id = id",
        "DELETE FROM users WHERE (id) >= (ID)",
        "UPDATE users SET name = 'x' WHERE id <> id OR id = id",
        "DELETE FROM users WHERE lower(name) = lower(name)",
        "DELETE FROM users WHERE name LIKE name",
        "DELETE FROM users WHERE name LIKE '%'",
        "DELETE FROM users WHERE id BETWEEN id AND 5",
        "DELETE FROM users WHERE id IN (1, id)",
        "DELETE FROM users WHERE id IS NOT DISTINCT FROM id",
        "DELETE FROM users WHERE id = 1 OR 1 = 1",
        "DELETE FROM users WHERE id = 1 OR TRUE",
        "DELETE FROM users WHERE 'a' = 'a'",
        "DELETE FROM users WHERE EXISTS (SELECT 1 FROM orders)",
        "UPDATE users SET name = 'x' WHERE (1 = 1 AND TRUE) OR id = 2",
    ] {
        refused_rw(q, ErrorType::PermissionDenied, true);
    }
    // Names that are no column: refused on both (PostgreSQL says which).
    for q in [
        "DELETE FROM users WHERE \"nosuchcol\" = \"nosuchcol\"",
        "DELETE FROM users WHERE nosuch = 1",
    ] {
        assert_eq!(
            lite_rw(q).unwrap_err().error_type,
            ErrorType::PermissionDenied,
            "{q}"
        );
        assert_eq!(
            pg_error(q, true).error_type,
            ErrorType::InvalidColumn,
            "{q}"
        );
    }
    for q in [
        "DELETE FROM users WHERE id = 1",
        "UPDATE users SET name = 'x' WHERE id = 1 OR name = 'y'",
        "DELETE FROM users WHERE id IN (SELECT user_id FROM orders)",
        "DELETE FROM users WHERE age > 18 AND TRUE",
        "DELETE FROM users WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = users.id)",
        "DELETE FROM users WHERE name LIKE 'a%'",
        "UPDATE users SET age = age + 1 WHERE age < 18",
    ] {
        for d in [Dialect::Postgres, Dialect::Sqlite] {
            let r = check_with(d, q, true);
            assert!(r.is_ok(), "{d:?} {q}: {r:?}");
        }
    }
}

#[test]
fn long_char_casts_are_refused() {
    for q in [
        "SELECT CAST(name AS CHAR(10485760)) FROM users",
        "SELECT CAST(name AS character varying(10001)) FROM users",
        "SELECT CAST(name AS VARCHAR(20000)) FROM users",
        "SELECT CAST(name AS character(99999)) FROM users",
    ] {
        refused(q, ErrorType::PermissionDenied);
    }
    assert_eq!(
        pg("SELECT name::char(10485760) FROM users")
            .unwrap_err()
            .error_type,
        ErrorType::PermissionDenied
    );
    for q in [
        "SELECT CAST(name AS CHAR(10000)) FROM users",
        "SELECT CAST(name AS varchar(255)), CAST(id AS varchar) FROM users",
    ] {
        assert!(pg(q).is_ok() && lite(q).is_ok(), "{q}");
    }
}

#[test]
fn statements_with_too_many_tokens_are_refused_before_parsing() {
    // 16 KiB of `1+` used to build an 8,000-deep tree (~400 MB to check).
    let chain = format!("SELECT {}1", "1+".repeat(8000));
    assert!(chain.len() <= MAX_STATEMENT_BYTES);
    let e = refused(&chain, ErrorType::SyntaxError);
    assert!(e.message.contains("tokens"), "{}", e.message);
    let just_over = format!("SELECT {}1", "1+".repeat(MAX_STATEMENT_TOKENS / 2));
    refused(&just_over, ErrorType::SyntaxError);
    let at_limit = format!("SELECT {}1", "1+".repeat(MAX_STATEMENT_TOKENS / 2 - 1));
    assert!(pg(&at_limit).is_ok() && lite(&at_limit).is_ok());
    // A few hundred values in a list are fine.
    let list = (1..=800)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let q = format!("SELECT id, name FROM users WHERE id IN ({list}) ORDER BY name");
    assert!(pg(&q).is_ok() && lite(&q).is_ok());
}

#[test]
fn values_queries_get_no_limit() {
    // SQLite refuses `VALUES (...) LIMIT n`; the list bounds itself.
    for d in [Dialect::Postgres, Dialect::Sqlite] {
        let c = check_with(d, "VALUES (1), (2)", false).unwrap();
        assert_eq!(c.sql, "VALUES (1), (2)");
    }
    let c = pg("VALUES (1), (2) LIMIT 99999").unwrap();
    assert!(c.sql.ends_with("LIMIT 1001"), "{}", c.sql);
    let c = pg("SELECT * FROM (VALUES (1)) AS v(x)").unwrap();
    assert!(c.sql.ends_with("LIMIT 1001"), "{}", c.sql);
}

#[test]
fn size_amplifying_functions_are_refused() {
    for f in [
        "replace(name, 'a', name)",
        "repeat(name, 1000)",
        "lpad(name, 100000000)",
        "rpad(name, 100000000)",
        "printf('%0100000000d', 1)",
        "format('%100000000s', 'x')",
    ] {
        refused(
            &format!("SELECT {f} FROM users"),
            ErrorType::PermissionDenied,
        );
    }
}

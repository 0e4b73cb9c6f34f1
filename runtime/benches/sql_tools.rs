//! SQL tool overhead against the same query written directly with sqlx:
//! selects of 1, 100 and 1,000 rows, an insert of 100 rows, upserts of 1
//! and 100 rows (all updating rows already there), describing a table, and
//! the cost of checking a typical filter. Medians and p99 over BENCH_OPS runs (default
//! 300). PostgreSQL comes from `DATABASE_URL` (`eval "$(scripts/services.sh)"`)
//! and is skipped without it; SQLite uses a temporary file.
//!
//! The direct baseline decodes the same columns into typed Rust values and
//! builds the same JSON rows, which is what a hand-written tool has to do.
//! For describe it runs the catalog queries the tool runs (columns with
//! nullability and defaults, unique keys, foreign keys, the row estimate)
//! on a pooled connection and builds the same JSON.
//!
//! `cargo bench -p nodekit --bench sql_tools`

use std::future::Future;
use std::str::FromStr;
use std::time::{Duration, Instant};

use nodekit::__bench::sql::{Column, ColumnKind, Database, Dialect, Filter, SqlWriter, Table, run};
use nodekit::sql::{
    DescribeRequest, InsertRequest, Request, SelectRequest, ToolOptions, UpsertRequest,
};
use serde_json::{Value, json};
use sqlx::Row;

const ROWS: usize = 1000;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(bench());
}

fn ops() -> usize {
    std::env::var("BENCH_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// Runs `direct` and `tool` alternately, `n` times each after a warm-up, so
/// both see the same cache and machine state; p50 and p99 of each. Every
/// run gets its own index, warm-up included (inserts use it for ids).
async fn pair<D, DF, T, TF>(n: usize, mut direct: D, mut tool: T) -> [(Duration, Duration); 2]
where
    D: FnMut(usize) -> DF,
    DF: Future<Output = ()>,
    T: FnMut(usize) -> TF,
    TF: Future<Output = ()>,
{
    let warm = n / 10 + 1;
    for i in n..n + warm {
        direct(i).await;
        tool(i).await;
    }
    let mut samples = [Vec::with_capacity(n), Vec::with_capacity(n)];
    for i in 0..n {
        let start = Instant::now();
        direct(i).await;
        samples[0].push(start.elapsed());
        let start = Instant::now();
        tool(i).await;
        samples[1].push(start.elapsed());
    }
    samples.map(|mut s| {
        s.sort();
        (s[n / 2], s[(n * 99 / 100).min(n - 1)])
    })
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// The rows of `id, name, price, qty, active` as JSON, typed as a hand-written tool would.
fn sqlite_rows(rows: &[sqlx::sqlite::SqliteRow]) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            Value::Object(row(
                r.get::<i64, _>(0) as usize,
                r.get(1),
                r.get::<f64, _>(2).into(),
                r.get(3),
                r.get(4),
            ))
        })
        .collect()
}

/// The same on PostgreSQL (`price` read as `price::text`: exact decimals).
fn pg_rows(rows: &[sqlx::postgres::PgRow]) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            Value::Object(row(
                r.get::<i32, _>(0) as usize,
                r.get(1),
                r.get::<String, _>(2).into(),
                r.get::<i32, _>(3).into(),
                r.get(4),
            ))
        })
        .collect()
}

fn row(
    i: usize,
    name: String,
    price: Value,
    qty: i64,
    active: bool,
) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("id".into(), (i as i64).into());
    m.insert("name".into(), name.into());
    m.insert("price".into(), price);
    m.insert("qty".into(), qty.into());
    m.insert("active".into(), active.into());
    m
}

async fn bench() {
    let n = ops();
    println!("{n} runs per measurement; table of {ROWS} rows (id, name, price, qty, active)\n");
    println!(
        "| database | operation | direct sqlx p50 | tool p50 | overhead | direct p99 | tool p99 |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");

    let dir = std::env::temp_dir().join(format!("nodekit-bench-sql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.db");
    let sqlite = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(
            sqlx::sqlite::SqliteConnectOptions::new()
                .filename(&path)
                .create_if_missing(true),
        )
        .await
        .unwrap();
    sqlx::raw_sql(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, qty INTEGER, active BOOLEAN);
         WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000)
         INSERT INTO items SELECT n, 'item number ' || n, n * 1.25, n % 17, n % 2 FROM s;",
    )
    .execute(&sqlite)
    .await
    .unwrap();
    let db =
        Database::sqlite(&serde_json::from_value(json!({"databasePath": path})).unwrap()).unwrap();
    compare(
        "SQLite",
        &db,
        n,
        |limit| {
            let pool = sqlite.clone();
            async move {
                let rows = sqlx::query(
                    "SELECT id, name, price, qty, active FROM items ORDER BY id LIMIT ?1",
                )
                .bind(limit as i64)
                .fetch_all(&pool)
                .await
                .unwrap();
                std::hint::black_box(sqlite_rows(&rows));
            }
        },
        |first| {
            let pool = sqlite.clone();
            async move {
                let mut q =
                    sqlx::QueryBuilder::new("INSERT INTO items (id, name, price, qty, active) ");
                q.push_values(first..first + 100, |mut b, i| {
                    b.push_bind(i as i64)
                        .push_bind(format!("new item {i}"))
                        .push_bind(2.5)
                        .push_bind(3i64)
                        .push_bind(true);
                });
                q.push(" RETURNING id, name, price, qty, active");
                let rows = q.build().fetch_all(&pool).await.unwrap();
                std::hint::black_box(rows.len());
            }
        },
        |count, round| {
            let pool = sqlite.clone();
            async move {
                let mut q =
                    sqlx::QueryBuilder::new("INSERT INTO items (id, name, price, qty, active) ");
                q.push_values(1..=count, |mut b, i| {
                    b.push_bind(i as i64)
                        .push_bind(format!("item {i} direct {round}"))
                        .push_bind(2.5)
                        .push_bind(3i64)
                        .push_bind(true);
                });
                q.push(
                    " ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, \
                     qty = excluded.qty, active = excluded.active RETURNING id, name, price, qty, active",
                );
                let rows = q.build().fetch_all(&pool).await.unwrap();
                std::hint::black_box(sqlite_rows(&rows));
            }
        },
        || {
            let pool = sqlite.clone();
            async move {
                let mut conn = pool.acquire().await.unwrap();
                let columns: Vec<(String, String, bool, Option<String>, i64)> = sqlx::query_as(
                    "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid",
                )
                .bind("items")
                .fetch_all(&mut *conn)
                .await
                .unwrap();
                let indexes: Vec<(String,)> = sqlx::query_as(
                    "SELECT name FROM pragma_index_list(?1) WHERE \"unique\" = 1 AND partial = 0",
                )
                .bind("items")
                .fetch_all(&mut *conn)
                .await
                .unwrap();
                let mut unique = Vec::new();
                for (index,) in indexes {
                    let names: Vec<String> =
                        sqlx::query_scalar("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
                            .bind(index)
                            .fetch_all(&mut *conn)
                            .await
                            .unwrap();
                    unique.push(names);
                }
                let foreign: Vec<(i64, String, String, Option<String>)> = sqlx::query_as(
                    "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1)",
                )
                .bind("items")
                .fetch_all(&mut *conn)
                .await
                .unwrap();
                let count: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM (SELECT 1 FROM items LIMIT 100000)")
                        .fetch_one(&mut *conn)
                        .await
                        .unwrap();
                let data: Vec<Value> = columns
                    .iter()
                    .map(|(name, ty, not_null, default, pk)| {
                        json!({"column": name, "type": ty, "nullable": !not_null, "default": default, "primaryKey": *pk > 0})
                    })
                    .collect();
                std::hint::black_box(json!({"data": data, "uniqueKeys": unique, "foreignKeys": foreign.len(), "approximateRows": count}));
            }
        },
        || {
            let pool = sqlite.clone();
            async move {
                sqlx::query("DELETE FROM items WHERE id > 1000")
                    .execute(&pool)
                    .await
                    .unwrap();
            }
        },
    )
    .await;

    if let Ok(url) = std::env::var("DATABASE_URL") {
        let options = sqlx::postgres::PgConnectOptions::from_str(&url).unwrap();
        let pg = sqlx::postgres::PgPoolOptions::new()
            .max_connections(4)
            .connect_with(options.clone())
            .await
            .unwrap();
        sqlx::raw_sql(
            "DROP TABLE IF EXISTS bench_sql_items;
             CREATE TABLE bench_sql_items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC(10,2), qty INTEGER, active BOOLEAN);
             INSERT INTO bench_sql_items SELECT n, 'item number ' || n, n * 1.25, n % 17, n % 2 = 1 FROM generate_series(1, 1000) n;",
        )
        .execute(&pg)
        .await
        .unwrap();
        let db = Database::postgres(&nodekit::postgres::Postgres::from_options(options.clone()));
        compare(
            "PostgreSQL",
            &db,
            n,
            |limit| {
                let pool = pg.clone();
                async move {
                    let rows = sqlx::query(
                        "SELECT id, name, price::text, qty, active FROM bench_sql_items ORDER BY id LIMIT $1",
                    )
                    .bind(limit as i64)
                    .fetch_all(&pool)
                    .await
                    .unwrap();
                    std::hint::black_box(pg_rows(&rows));
                }
            },
            |first| {
                let pool = pg.clone();
                async move {
                    let mut q = sqlx::QueryBuilder::new(
                        "INSERT INTO bench_sql_items (id, name, price, qty, active) ",
                    );
                    q.push_values(first..first + 100, |mut b, i| {
                        b.push_bind(i as i32)
                            .push_bind(format!("new item {i}"))
                            .push_bind("2.50")
                            .push_unseparated("::numeric")
                            .push_bind(3i32)
                            .push_bind(true);
                    });
                    q.push(" RETURNING id, name, price::text, qty, active");
                    let rows = q.build().fetch_all(&pool).await.unwrap();
                    std::hint::black_box(rows.len());
                }
            },
            |count, round| {
                let pool = pg.clone();
                async move {
                    let mut q = sqlx::QueryBuilder::new(
                        "INSERT INTO bench_sql_items (id, name, price, qty, active) ",
                    );
                    q.push_values(1..=count, |mut b, i| {
                        b.push_bind(i as i32)
                            .push_bind(format!("item {i} direct {round}"))
                            .push_bind("2.50")
                            .push_unseparated("::numeric")
                            .push_bind(3i32)
                            .push_bind(true);
                    });
                    q.push(
                        " ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, \
                         qty = excluded.qty, active = excluded.active RETURNING id, name, price::text, qty, active",
                    );
                    let rows = q.build().fetch_all(&pool).await.unwrap();
                    std::hint::black_box(pg_rows(&rows));
                }
            },
            || {
                let pool = pg.clone();
                async move {
                    let mut conn = pool.acquire().await.unwrap();
                    let columns: Vec<(String, String, bool, Option<String>)> = sqlx::query_as(
                        "SELECT a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, \
                         pg_catalog.pg_get_expr(d.adbin, d.adrelid) FROM pg_catalog.pg_attribute a \
                         LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                         WHERE a.attrelid = 'public.bench_sql_items'::regclass AND a.attnum > 0 AND NOT a.attisdropped \
                         ORDER BY a.attnum",
                    )
                    .fetch_all(&mut *conn)
                    .await
                    .unwrap();
                    let keys: Vec<(bool, Vec<String>)> = sqlx::query_as(
                        "SELECT i.indisprimary, array_agg(a.attname::text ORDER BY k.ord) FROM pg_catalog.pg_index i \
                         CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord) \
                         JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
                         WHERE i.indrelid = 'public.bench_sql_items'::regclass AND i.indisunique \
                         GROUP BY i.indexrelid, i.indisprimary",
                    )
                    .fetch_all(&mut *conn)
                    .await
                    .unwrap();
                    let foreign: Vec<(String,)> = sqlx::query_as(
                        "SELECT confrelid::regclass::text FROM pg_catalog.pg_constraint \
                         WHERE conrelid = 'public.bench_sql_items'::regclass AND contype = 'f'",
                    )
                    .fetch_all(&mut *conn)
                    .await
                    .unwrap();
                    let estimate: f32 = sqlx::query_scalar(
                        "SELECT reltuples FROM pg_catalog.pg_class WHERE oid = 'public.bench_sql_items'::regclass",
                    )
                    .fetch_one(&mut *conn)
                    .await
                    .unwrap();
                    let count: i64 = if estimate > 0.0 {
                        estimate as i64
                    } else {
                        sqlx::query_scalar(
                            "SELECT count(*) FROM (SELECT 1 FROM bench_sql_items LIMIT 100000) c",
                        )
                        .fetch_one(&mut *conn)
                        .await
                        .unwrap()
                    };
                    let primary: Vec<&String> = keys.iter().filter(|k| k.0).flat_map(|k| &k.1).collect();
                    let data: Vec<Value> = columns
                        .iter()
                        .map(|(name, ty, nullable, default)| {
                            json!({"column": name, "type": ty, "nullable": nullable, "default": default, "primaryKey": primary.contains(&name)})
                        })
                        .collect();
                    std::hint::black_box(json!({"data": data, "keys": keys.len(), "foreignKeys": foreign.len(), "approximateRows": count}));
                }
            },
            || {
                let pool = pg.clone();
                async move {
                    sqlx::query("DELETE FROM bench_sql_items WHERE id > 1000")
                        .execute(&pool)
                        .await
                        .unwrap();
                }
            },
        )
        .await;
        sqlx::raw_sql("DROP TABLE bench_sql_items")
            .execute(&pg)
            .await
            .unwrap();
    } else {
        println!("| PostgreSQL | skipped: DATABASE_URL is not set | | | | | |");
    }
    let _ = std::fs::remove_dir_all(&dir);

    filter_cost();
}

/// Measures selects, the insert, upserts and describe on one database.
#[allow(clippy::too_many_arguments)]
async fn compare<S, SF, I, IF, U, UF, D, DF, C, CF>(
    name: &str,
    db: &Database,
    n: usize,
    direct_select: S,
    direct_insert: I,
    direct_upsert: U,
    direct_describe: D,
    cleanup: C,
) where
    S: Fn(usize) -> SF,
    SF: Future<Output = ()>,
    I: Fn(usize) -> IF,
    IF: Future<Output = ()>,
    U: Fn(usize, usize) -> UF,
    UF: Future<Output = ()>,
    D: Fn() -> DF,
    DF: Future<Output = ()>,
    C: Fn() -> CF,
    CF: Future<Output = ()>,
{
    let table = if db.dialect() == Dialect::Postgres {
        "bench_sql_items"
    } else {
        "items"
    };
    let options = ToolOptions {
        max_rows: 1000,
        ..ToolOptions::default()
    };
    for limit in [1usize, 100, 1000] {
        let request = Request::Select(SelectRequest {
            table: table.into(),
            columns: "id, name, price, qty, active".into(),
            order_by: "id".into(),
            limit: Some(limit as i64),
            ..SelectRequest::default()
        });
        let [(d50, d99), (t50, t99)] = pair(
            n,
            |_| direct_select(limit),
            |_| async {
                let out = run(db, &request, &options).await;
                assert_eq!(out["success"], true, "{out}");
                std::hint::black_box(out);
            },
        )
        .await;
        report(name, &format!("select {limit} rows"), d50, t50, d99, t99);
    }

    // Each run adds 100 new ids (direct and tool apart); the table is reset after.
    let inserts = (n / 3).max(10);
    let [(d50, d99), (t50, t99)] = pair(
        inserts,
        |i| direct_insert(100_000 + i * 100),
        |i| {
            let rows: Vec<Value> = (0..100)
                .map(|k| {
                    json!({"id": 1_000_000 + i * 100 + k, "name": format!("new item {k}"), "price": 2.5, "qty": 3, "active": true})
                })
                .collect();
            let request = Request::Insert(InsertRequest {
                table: table.into(),
                rows: Value::Array(rows),
            });
            let options = options.clone();
            async move {
                let out = run(db, &request, &options).await;
                assert_eq!(out["success"], true, "{out}");
            }
        },
    )
    .await;
    cleanup().await;
    report(name, "insert 100 rows", d50, t50, d99, t99);

    // Upserts that update rows already there (ids 1..=count): each call
    // changes the rows (the direct side and the tool write other names).
    for count in [1usize, 100] {
        let [(d50, d99), (t50, t99)] = pair(
            n,
            |round| direct_upsert(count, round),
            |round| {
                let rows: Vec<Value> = (1..=count)
                    .map(|i| {
                        json!({"id": i, "name": format!("item {i} tool {round}"), "price": 2.5, "qty": 3, "active": true})
                    })
                    .collect();
                let request = Request::Upsert(UpsertRequest {
                    table: table.into(),
                    rows: Value::Array(rows),
                    conflict_columns: "id".into(),
                });
                let options = options.clone();
                async move {
                    let out = run(db, &request, &options).await;
                    assert_eq!(out["success"], true, "{out}");
                    std::hint::black_box(out);
                }
            },
        )
        .await;
        report(name, &format!("upsert {count} rows"), d50, t50, d99, t99);
    }

    let request = Request::Describe(DescribeRequest {
        table: table.into(),
    });
    let [(d50, d99), (t50, t99)] = pair(
        n,
        |_| direct_describe(),
        |_| async {
            let out = run(db, &request, &options).await;
            assert_eq!(out["success"], true, "{out}");
            std::hint::black_box(out);
        },
    )
    .await;
    report(name, "describe a table", d50, t50, d99, t99);
}

fn report(db: &str, op: &str, d50: Duration, t50: Duration, d99: Duration, t99: Duration) {
    let overhead = (t50.as_secs_f64() / d50.as_secs_f64() - 1.0) * 100.0;
    println!(
        "| {db} | {op} | {} | {} | {overhead:+.0}% | {} | {} |",
        us(d50),
        us(t50),
        us(d99),
        us(t99)
    );
}

/// Parsing, checking and writing a typical filter, without a database.
fn filter_cost() {
    let column = |name: &str, kind, sql_type: &str| Column {
        name: name.into(),
        kind,
        sql_type: sql_type.into(),
    };
    let table = Table {
        name: "customers".into(),
        columns: vec![
            column("id", ColumnKind::Integer, "integer"),
            column("name", ColumnKind::Text, "text"),
            column("status", ColumnKind::Text, "text"),
            column("age", ColumnKind::Integer, "integer"),
            column(
                "created_at",
                ColumnKind::Temporal,
                "timestamp with time zone",
            ),
        ],
    };
    let filters = [
        ("simple", "status = 'active'"),
        (
            "typical",
            "age > 18 AND status = 'active' AND (name LIKE 'A%' OR id IN (1, 2, 3)) AND created_at >= '2024-01-01'",
        ),
    ];
    println!("\n| filter | dialect | check + write p50 | p99 |");
    println!("|---|---|---:|---:|");
    for (label, text) in filters {
        for dialect in [Dialect::Postgres, Dialect::Sqlite] {
            let mut samples = Vec::with_capacity(10_000);
            for _ in 0..10_000 {
                let start = Instant::now();
                let filter = Filter::parse(dialect, &table, text).unwrap();
                let mut w = SqlWriter::new(dialect);
                filter.write(&mut w);
                std::hint::black_box(w.finish());
                samples.push(start.elapsed());
            }
            samples.sort();
            println!(
                "| {label}: `{text}` | {dialect:?} | {} | {} |",
                us(samples[5_000]),
                us(samples[9_900])
            );
        }
    }
}

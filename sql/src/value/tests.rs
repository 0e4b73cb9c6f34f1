use super::*;
use crate::testing::pg;
use serde_json::json;
use sqlx::{Connection, Executor, PgConnection, SqliteConnection};

fn pg_row(row: &PgRow) -> Result<Map<String, Value>, ToolError> {
    pg_row_keyed(row, &row_keys(row))
}

fn sqlite_row(row: &SqliteRow) -> Result<Map<String, Value>, ToolError> {
    sqlite_row_keyed(row, &row_keys(row))
}

/// Every column of the first row of `sql`, run through the extended
/// protocol (binary results).
async fn row(conn: &mut PgConnection, sql: &str) -> Map<String, Value> {
    let r = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_one(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pg_row(&r).unwrap()
}

/// The single value of `SELECT expr`.
async fn one(conn: &mut PgConnection, expr: &str) -> Value {
    row(conn, &format!("SELECT {expr} AS v")).await["v"].clone()
}

/// The same through the simple protocol (text results).
async fn one_text(conn: &mut PgConnection, expr: &str) -> Value {
    let sql = format!("SELECT {expr} AS v");
    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
        .fetch_all(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pg_row(&rows[0]).unwrap()["v"].clone()
}

/// (expression, expected JSON) for the scalar types; checked through
/// both protocols where the text path promises the same answer.
fn scalar_cases() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("NULL::int4", json!(null), true),
        ("(-32768)::int2", json!(-32768), true),
        ("2147483647::int4", json!(2147483647), true),
        ("(-9223372036854775808)::int8", json!(i64::MIN), true),
        ("4294967295::oid", json!(4294967295u32), true),
        ("0.1::float4", json!(0.1), true),
        ("1.5e300::float8", json!(1.5e300), true),
        ("'NaN'::float8", json!("NaN"), true),
        ("'Infinity'::float4", json!("Infinity"), true),
        ("'-Infinity'::float8", json!("-Infinity"), true),
        (
            "123456789012345678901234567890.123456789::numeric",
            json!("123456789012345678901234567890.123456789"),
            true,
        ),
        ("(-12.50)::numeric", json!("-12.50"), true),
        ("12.5::numeric(10,2)", json!("12.50"), true),
        ("'NaN'::numeric", json!("NaN"), true),
        ("'Infinity'::numeric", json!("Infinity"), true),
        ("'-Infinity'::numeric", json!("-Infinity"), true),
        ("0.000100::numeric", json!("0.000100"), true),
        ("0::numeric", json!("0"), true),
        ("0.00::numeric", json!("0.00"), true),
        ("10000::numeric", json!("10000"), true),
        ("1e20::numeric", json!("100000000000000000000"), true),
        ("(-0.0001)::numeric", json!("-0.0001"), true),
        ("1.23e-20::numeric", json!("0.0000000000000000000123"), true),
        ("1234.56::money", json!("1234.56"), false),
        ("(-0.01)::money", json!("-0.01"), false),
        ("true", json!(true), true),
        ("false", json!(false), true),
        ("'héllo ☃'::text", json!("héllo ☃"), true),
        ("'ab'::varchar(5)", json!("ab"), true),
        ("'ab'::char(5)", json!("ab   "), true),
        ("'pg_class'::name", json!("pg_class"), true),
        ("'x'::\"char\"", json!("x"), true),
        ("'\\x00ff0000'::bytea", json!("AP8AAA=="), true),
        ("''::bytea", json!(""), true),
        (
            r#"'{"a": [1, 2.5, {"b": null}], "c": "d"}'::json"#,
            json!({"a": [1, 2.5, {"b": null}], "c": "d"}),
            true,
        ),
        (
            r#"'{"z": {"y": [true, false, "x"]}, "a": 1}'::jsonb"#,
            json!({"a": 1, "z": {"y": [true, false, "x"]}}),
            true,
        ),
        (
            "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid",
            json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            true,
        ),
        ("'2024-03-05'::date", json!("2024-03-05"), true),
        ("'1969-12-31'::date", json!("1969-12-31"), true),
        ("'0001-01-01'::date", json!("0001-01-01"), true),
        ("'0001-12-31 BC'::date", json!("0000-12-31"), true),
        ("'4713-01-01 BC'::date", json!("-4712-01-01"), true),
        ("'12345-06-07'::date", json!("+12345-06-07"), true),
        ("'infinity'::date", json!("infinity"), true),
        ("'-infinity'::date", json!("-infinity"), true),
        ("'13:45:06.5'::time", json!("13:45:06.5"), true),
        ("'24:00:00'::time", json!("24:00:00"), true),
        ("'00:00:00.000001'::time", json!("00:00:00.000001"), true),
        ("'13:45:06+02'::timetz", json!("13:45:06+02:00"), false),
        (
            "'01:02:03.25-05:30'::timetz",
            json!("01:02:03.25-05:30"),
            false,
        ),
        (
            "'2024-03-05 13:45:06.123456'::timestamp",
            json!("2024-03-05T13:45:06.123456"),
            true,
        ),
        (
            "'1900-01-01 00:00:00'::timestamp",
            json!("1900-01-01T00:00:00"),
            true,
        ),
        (
            "'0044-03-15 12:00 BC'::timestamp",
            json!("-0043-03-15T12:00:00"),
            true,
        ),
        ("'infinity'::timestamp", json!("infinity"), true),
        (
            "'2024-03-05 13:45:06.123456+02'::timestamptz",
            json!("2024-03-05T11:45:06.123456Z"),
            true,
        ),
        (
            "'1960-01-01 00:30:00.5-01:30'::timestamptz",
            json!("1960-01-01T02:00:00.5Z"),
            true,
        ),
        ("'-infinity'::timestamptz", json!("-infinity"), true),
        (
            "'1 year 2 months 3 days 04:05:06.5'::interval",
            json!("P1Y2M3DT4H5M6.5S"),
            false,
        ),
        ("'0'::interval", json!("PT0S"), false),
        ("'-1 day'::interval", json!("P-1D"), false),
        ("'192.168.0.1'::inet", json!("192.168.0.1"), true),
        ("'192.168.0.0/24'::inet", json!("192.168.0.0/24"), true),
        ("'10.0.0.0/8'::cidr", json!("10.0.0.0/8"), true),
        ("'10.1.2.3/32'::cidr", json!("10.1.2.3/32"), true),
        ("'::1'::inet", json!("::1"), true),
        ("'2001:db8::/32'::cidr", json!("2001:db8::/32"), true),
        (
            "'08:00:2b:01:02:03'::macaddr",
            json!("08:00:2b:01:02:03"),
            true,
        ),
        ("B'101'::bit(3)", json!("101"), true),
        ("B'1011001110'::varbit", json!("1011001110"), true),
        ("pg_sleep(0)", json!(null), true),
        ("'(1,2)'::point", json!("<unsupported type point>"), false),
        (
            "'a b'::tsvector",
            json!("<unsupported type tsvector>"),
            false,
        ),
    ]
}

#[tokio::test]
async fn pg_scalars_binary_and_text() {
    let Some(mut conn) = pg().await else { return };
    for (expr, expected, same_in_text) in scalar_cases() {
        assert_eq!(one(&mut conn, expr).await, expected, "binary: {expr}");
        if same_in_text {
            assert_eq!(one_text(&mut conn, expr).await, expected, "text: {expr}");
        }
    }
}

#[tokio::test]
async fn pg_arrays_ranges_records() {
    let Some(mut conn) = pg().await else { return };
    conn.execute("CREATE TYPE pg_temp.sqlvalue_mood AS ENUM ('sad', 'ok', 'happy')")
        .await
        .unwrap();
    conn.execute("CREATE TYPE pg_temp.sqlvalue_pair AS (a int4, b text)")
        .await
        .unwrap();
    conn.execute("CREATE DOMAIN pg_temp.sqlvalue_posint AS int4 CHECK (VALUE > 0)")
        .await
        .unwrap();
    let cases = [
        ("ARRAY[1, NULL, 3]::int4[]", json!([1, null, 3]), true),
        ("'{}'::int8[]", json!([]), true),
        (
            r#"ARRAY['a', NULL, 'b "c"', 'd,e', '', 'NULL']::text[]"#,
            json!(["a", null, "b \"c\"", "d,e", "", "NULL"]),
            true,
        ),
        (
            "ARRAY[1.5, 'NaN', NULL]::float8[]",
            json!([1.5, "NaN", null]),
            true,
        ),
        ("ARRAY[true, NULL, false]", json!([true, null, false]), true),
        (
            "ARRAY['1.50', NULL, '-0.000100']::numeric[]",
            json!(["1.50", null, "-0.000100"]),
            true,
        ),
        (
            "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']::uuid[]",
            json!(["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]),
            true,
        ),
        ("ARRAY[[1, 2], [3, 4]]", json!([[1, 2], [3, 4]]), true),
        ("'[0:1]={7,8}'::int4[]", json!([7, 8]), true),
        (
            "ARRAY['2024-01-02'::date, NULL]",
            json!(["2024-01-02", null]),
            true,
        ),
        (
            r#"ARRAY['{"a": 1}'::jsonb, '[2]']"#,
            json!([{"a": 1}, [2]]),
            true,
        ),
        (
            "ARRAY['ok', NULL, 'happy']::pg_temp.sqlvalue_mood[]",
            json!(["ok", null, "happy"]),
            true,
        ),
        ("'happy'::pg_temp.sqlvalue_mood", json!("happy"), true),
        ("5::pg_temp.sqlvalue_posint", json!(5), true),
        (
            "ROW(1, 'x')::pg_temp.sqlvalue_pair",
            json!({"a": 1, "b": "x"}),
            false,
        ),
        ("ROW(1, 'x', NULL::date)", json!([1, "x", null]), false),
        ("int4range(1, 10)", json!("[1,10)"), true),
        ("'empty'::int4range", json!("empty"), true),
        ("numrange(1.5, 2.50, '[]')", json!("[1.5,2.50]"), true),
        (
            "tstzrange('2024-01-01 00:00+00', NULL)",
            json!("[2024-01-01T00:00:00Z,)"),
            false,
        ),
        ("'(,5]'::int8range", json!("(,6)"), true),
    ];
    for (expr, expected, same_in_text) in cases {
        assert_eq!(one(&mut conn, expr).await, expected, "binary: {expr}");
        if same_in_text {
            assert_eq!(one_text(&mut conn, expr).await, expected, "text: {expr}");
        }
    }
}

/// A table with a column of every type the module maps, one row of
/// values and one of NULLs.
#[tokio::test]
async fn pg_table_with_every_type() {
    let Some(mut conn) = pg().await else { return };
    conn.execute(
        "CREATE TEMP TABLE sqlvalue_types (
            id int8 PRIMARY KEY, i2 int2, i4 int4, f4 float4, f8 float8,
            n numeric, n2 numeric(10, 2), m money, b bool, t text, vc varchar(10),
            bc char(4), nm name, j json, jb jsonb, u uuid, d date, tm time,
            ts timestamp, tz timestamptz, iv interval, ip inet, net cidr,
            by bytea, ai int4[], at text[], an numeric[], af float8[])",
    )
    .await
    .unwrap();
    conn.execute(
        r#"INSERT INTO sqlvalue_types VALUES (
            1, -7, 42, 1.25, 'NaN', 123456789012345678901234567890.123456789,
            12.5, 9.99, true, 'it''s', 'ab', 'ab', 'nm',
            '{"k": [1, {"x": null}]}', '{"deep": {"deeper": {"deepest": [1, "two"]}}}',
            'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1901-02-03', '23:59:59.999999',
            '2000-01-01 00:00:00', '2024-02-29 23:59:59.000001+00', '1 mon -2 days',
            '::ffff:1.2.3.4', '192.168.0.0/16', '\x0000ff00', '{1,NULL}',
            '{"a b",NULL}', '{NaN,-1.10}', '{Infinity,NULL}'),
            (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, NULL, NULL, NULL)"#,
    )
    .await
    .unwrap();
    let rows = sqlx::query("SELECT * FROM sqlvalue_types ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let first = Value::Object(pg_row(&rows[0]).unwrap());
    assert_eq!(
        first,
        json!({
            "id": 1, "i2": -7, "i4": 42, "f4": 1.25, "f8": "NaN",
            "n": "123456789012345678901234567890.123456789", "n2": "12.50",
            "m": "9.99", "b": true, "t": "it's", "vc": "ab", "bc": "ab  ", "nm": "nm",
            "j": {"k": [1, {"x": null}]},
            "jb": {"deep": {"deeper": {"deepest": [1, "two"]}}},
            "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "d": "1901-02-03",
            "tm": "23:59:59.999999", "ts": "2000-01-01T00:00:00",
            "tz": "2024-02-29T23:59:59.000001Z", "iv": "P1M-2D",
            "ip": "::ffff:1.2.3.4", "net": "192.168.0.0/16", "by": "AAD/AA==",
            "ai": [1, null], "at": ["a b", null], "an": ["NaN", "-1.10"],
            "af": ["Infinity", null]
        })
    );
    let second = pg_row(&rows[1]).unwrap();
    assert_eq!(second.len(), 28);
    assert_eq!(second["id"], json!(2));
    assert!(second.iter().skip(1).all(|(_, v)| v.is_null()));
    conn.execute("DROP TABLE sqlvalue_types").await.unwrap();
}

/// numeric_out, reproduced: our decoding of the binary form matches
/// PostgreSQL's own text for values of every scale and sign.
#[tokio::test]
async fn pg_numeric_matches_server_text() {
    let Some(mut conn) = pg().await else { return };
    let rows = sqlx::query(
        "SELECT x, x::text AS s FROM (
            SELECT (i::numeric * 98765.4321 - 5e7) * ('1e' || (i % 31))::numeric AS x
            FROM generate_series(-300, 300) i
            UNION ALL SELECT round(i::numeric / 7, (i % 12)) FROM generate_series(-50, 50) i
            UNION ALL SELECT (10::numeric ^ i) FROM generate_series(-40, 40) i
        ) t",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(rows.len() > 700);
    for r in &rows {
        let m = pg_row(r).unwrap();
        assert_eq!(m["x"], m["s"]);
    }
}

/// The binary decoder and the text normalizer are independent: they
/// must agree on dates and timestamps across the whole range, BC
/// included. Intervals are checked against the server's `iso_8601`
/// output.
#[tokio::test]
async fn pg_temporal_binary_matches_text() {
    let Some(mut conn) = pg().await else { return };
    let sql = "SELECT t::date AS d, t::timestamp AS ts, t AS tz FROM generate_series(
        '4713-01-01 00:00:00+00 BC'::timestamptz, '20000-01-01+00',
        '97 years 3 months 11 days 1234.567891 seconds') t";
    let binary = sqlx::query(sql).fetch_all(&mut conn).await.unwrap();
    let text = sqlx::raw_sql(sql).fetch_all(&mut conn).await.unwrap();
    assert_eq!(binary.len(), text.len());
    assert!(binary.len() > 200);
    for (b, t) in binary.iter().zip(&text) {
        assert_eq!(pg_row(b).unwrap(), pg_row(t).unwrap());
    }

    conn.execute("SET intervalstyle = iso_8601").await.unwrap();
    let rows = sqlx::query(
        "SELECT v, v::text AS s FROM (VALUES
            ('1 year 2 mons 3 days 04:05:06.5'::interval), ('-1 year -2 mons +3 days -04:05:06'),
            ('0'), ('-0.000001 s'), ('25 hours'), ('-1 mon 1 day'), ('1.5 s'), ('-61 min'),
            ('178000000 years'), ('3 days 1 hour -1 second')) t(v)",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    for r in &rows {
        let m = pg_row(r).unwrap();
        assert_eq!(m["v"], m["s"]);
    }
    conn.execute("RESET intervalstyle").await.unwrap();
}

#[tokio::test]
async fn pg_duplicate_names_and_unresolved_types() {
    let Some(mut conn) = pg().await else { return };
    let m = row(&mut conn, "SELECT 1 AS id, 2 AS id, 3 AS id_2, 4 AS id").await;
    assert_eq!(
        Value::Object(m.clone()),
        json!({"id": 1, "id_3": 2, "id_2": 3, "id_4": 4})
    );
    assert_eq!(m.keys().collect::<Vec<_>>(), ["id", "id_3", "id_2", "id_4"]);

    // A fresh connection has never looked these types up: through the
    // simple protocol sqlx knows only their OIDs.
    conn.execute(
        "CREATE TYPE pg_temp.sqlvalue_color AS ENUM ('red'); \
         CREATE TYPE pg_temp.sqlvalue_pt AS (x int4)",
    )
    .await
    .unwrap();
    let rows = sqlx::raw_sql(
        "SELECT 'red'::pg_temp.sqlvalue_color AS c, \
                ARRAY['red']::pg_temp.sqlvalue_color[] AS a, \
                ROW(1)::pg_temp.sqlvalue_pt AS p",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        Value::Object(pg_row(&rows[0]).unwrap()),
        json!({"c": "red", "a": "{red}", "p": "(1)"})
    );
}

/// An extension type with no special handling: `citext` sends its text.
/// Created inside a transaction that is rolled back, so the shared
/// database is left as it was.
#[tokio::test]
async fn pg_extension_type_falls_back_to_text() {
    let Some(mut conn) = pg().await else { return };
    let mut tx = conn.begin().await.unwrap();
    if let Err(e) = tx.execute("CREATE EXTENSION IF NOT EXISTS citext").await {
        eprintln!("skipping citext: {e}");
        return;
    }
    let r = sqlx::query("SELECT 'MiXed'::citext AS c, ARRAY['a'::citext, NULL] AS a")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(
        Value::Object(pg_row(&r).unwrap()),
        json!({"c": "MiXed", "a": ["a", null]})
    );
    tx.rollback().await.unwrap();
}

fn temp_sqlite_path(tag: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    nodekit_test_support::scratch_dir()
        .join(format!("sqlvalue_{tag}_{}_{nanos}.db", std::process::id()))
}

#[tokio::test]
async fn sqlite_storage_classes() {
    let path = temp_sqlite_path("value");
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
    conn.execute(
        "CREATE TABLE sqlvalue_t (id INTEGER PRIMARY KEY, flag BOOLEAN, flag2 bool,
             n INTEGER, r REAL, t TEXT, b BLOB, j JSON, anything)",
    )
    .await
    .unwrap();
    conn.execute(
        r#"INSERT INTO sqlvalue_t VALUES
            (1, 1, 0, 9223372036854775807, 1.5, 'héllo', x'00ff00', '{"a": 1}', 2.5),
            (2, 2, NULL, -1, 1e999, '', x'', '[1]', 'text'),
            (3, 0, 'yes', NULL, -1e999, NULL, NULL, NULL, x'41')"#,
    )
    .await
    .unwrap();
    let rows = sqlx::query("SELECT *, id AS id, t || '!' AS t FROM sqlvalue_t ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let got: Vec<Value> = rows
        .iter()
        .map(|r| Value::Object(sqlite_row(r).unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            json!({"id": 1, "flag": true, "flag2": false, "n": i64::MAX, "r": 1.5,
                   "t": "héllo", "b": "AP8A", "j": "{\"a\": 1}", "anything": 2.5,
                   "id_2": 1, "t_2": "héllo!"}),
            json!({"id": 2, "flag": 2, "flag2": null, "n": -1, "r": "Infinity",
                   "t": "", "b": "", "j": "[1]", "anything": "text",
                   "id_2": 2, "t_2": "!"}),
            json!({"id": 3, "flag": false, "flag2": "yes", "n": null, "r": "-Infinity",
                   "t": null, "b": null, "j": null, "anything": "QQ==",
                   "id_2": 3, "t_2": null}),
        ]
    );
    conn.close().await.unwrap();
    let _ = std::fs::remove_file(&path);
}

#[test]
fn unique_keys_keep_real_names() {
    let names = ["a", "a", "a_2", "b", "a", "a_3"];
    assert_eq!(
        unique_keys(names.iter().copied()),
        ["a", "a_4", "a_2", "b", "a_5", "a_3"]
    );
}

#[test]
fn calendar_round_trips() {
    for days in (-3_000_000..3_000_000).step_by(997) {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, m, d), days);
    }
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(PG_EPOCH_DAYS), (2000, 1, 1));
    assert_eq!(civil_from_days(-719_528), (0, 1, 1));
}

#[test]
fn intervals_in_iso_8601() {
    assert_eq!(interval(0, 0, 0), "PT0S");
    assert_eq!(interval(-1, 0, 0), "PT-0.000001S");
    assert_eq!(interval(90_000_000_000, 1, 14), "P1Y2M1DT25H");
    assert_eq!(interval(-3_661_500_000, 0, -1), "P-1MT-1H-1M-1.5S");
    assert_eq!(interval(i64::MAX, i32::MAX, i32::MAX), "infinity");
}

#[test]
fn malformed_binary_is_an_error_not_a_panic() {
    assert!(numeric(&[0, 1]).is_err());
    assert!(numeric(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]).is_err()); // digit 10000
    assert!(
        array_binary(
            None,
            &[
                0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1
            ],
            0
        )
        .is_err()
    );
    assert!(record_binary(None, &[0x7f, 0, 0, 0], 0).is_err());
    assert!(inet(&[2, 32, 0, 4, 1, 2]).is_err());
    assert!(bits(&[0, 0, 0, 9, 0xff]).is_err());
}

use super::*;

fn col(name: &str, kind: ColumnKind, sql_type: &str) -> Column {
    Column {
        name: name.into(),
        kind,
        sql_type: sql_type.into(),
    }
}

fn users() -> Table {
    Table {
        name: "users".into(),
        columns: vec![
            col("id", ColumnKind::Integer, "integer"),
            col("name", ColumnKind::Text, "text"),
            col("age", ColumnKind::Integer, "integer"),
            col("status", ColumnKind::Text, "text"),
            col("score", ColumnKind::Float, "double precision"),
            col("active", ColumnKind::Boolean, "boolean"),
            col("Full Name", ColumnKind::Text, "text"),
            col("created", ColumnKind::Temporal, "timestamp with time zone"),
        ],
    }
}

fn pg(text: &str) -> Result<Filter, ToolError> {
    Filter::parse(Dialect::Postgres, &users(), text)
}

fn lite(text: &str) -> Result<Filter, ToolError> {
    Filter::parse(Dialect::Sqlite, &users(), text)
}

fn sql(f: &Filter) -> (String, Vec<Bind>) {
    let mut w = SqlWriter::new(f.dialect);
    f.write(&mut w);
    w.finish()
}

fn err(r: Result<Filter, ToolError>) -> ToolError {
    r.expect_err("must be refused")
}

/// Both dialects refuse `text` with `ty`.
fn refused(text: &str, ty: ErrorType) {
    for d in [Dialect::Postgres, Dialect::Sqlite] {
        let e = Filter::parse(d, &users(), text).expect_err(&format!("{d:?} must refuse {text:?}"));
        assert_eq!(e.error_type, ty, "{d:?} {text:?}: {e:?}");
        assert!(
            e.message.chars().count() < 300,
            "long message: {}",
            e.message
        );
    }
}

#[test]
fn simple_comparison_is_written_with_binds() {
    let f = pg("age > 18 AND status = 'active'").unwrap();
    let (s, b) = sql(&f);
    assert_eq!(s, r#"(("age" > $1::integer) AND ("status" = $2))"#);
    assert_eq!(
        b,
        vec![Bind::Text("18".into()), Bind::Text("active".into())]
    );
    assert!(!f.is_always_true());

    let f = lite("age > 18 AND status = 'active'").unwrap();
    let (s, b) = sql(&f);
    assert_eq!(s, r#"(("age" > ?1) AND ("status" = ?2))"#);
    assert_eq!(b, vec![Bind::Int(18), Bind::Text("active".into())]);
}

#[test]
fn literal_on_the_left_takes_the_column_type() {
    let (s, b) = sql(&pg("18 < age").unwrap());
    assert_eq!(s, r#"($1::integer < "age")"#);
    assert_eq!(b, vec![Bind::Text("18".into())]);
}

#[test]
fn sqlite_binds_follow_column_kind() {
    let (_, b) = sql(&lite("score >= '2.5' AND age = '7' AND age = 1.5 AND active = TRUE AND active = 'false' AND name = 5").unwrap());
    assert_eq!(
        b,
        vec![
            Bind::Float(2.5),
            Bind::Int(7),
            Bind::Float(1.5),
            Bind::Int(1),
            Bind::Int(0),
            Bind::Text("5".into())
        ]
    );
    // Not a number: stays text, the database decides.
    let (_, b) = sql(&lite("age = 'abc'").unwrap());
    assert_eq!(b, vec![Bind::Text("abc".into())]);
    let (_, b) = sql(&lite("score = 'NaN'").unwrap());
    assert_eq!(b, vec![Bind::Text("NaN".into())]);
}

#[test]
fn null_bool_and_negative_numbers() {
    let (s, b) = sql(&pg("active = TRUE OR age = -5 OR name = NULL").unwrap());
    assert_eq!(
        s,
        r#"((("active" = $1) OR ("age" = $2::integer)) OR ("name" = $3))"#
    );
    assert_eq!(
        b,
        vec![Bind::Bool(true), Bind::Text("-5".into()), Bind::Null]
    );
    // A number with no column beside it is a number.
    let (_, b) = sql(&pg("length(name) > 3 AND abs(-2.5) < 3").unwrap());
    assert_eq!(b, vec![Bind::Int(3), Bind::Float(-2.5), Bind::Int(3)]);
}

#[test]
fn in_between_like_is() {
    let (s, b) = sql(&pg("id IN (1, 2) AND age NOT BETWEEN 1 AND 9 AND name ILIKE 'a%' AND status NOT LIKE '%x' ESCAPE '!' AND created IS NOT NULL AND active IS NOT TRUE").unwrap());
    assert_eq!(
        s,
        r#"(((((("id" IN ($1::integer, $2::integer)) AND ("age" NOT BETWEEN $3::integer AND $4::integer)) AND ("name" ILIKE $5)) AND ("status" NOT LIKE $6 ESCAPE $7)) AND ("created" IS NOT NULL)) AND ("active" IS NOT TRUE))"#
    );
    assert_eq!(b.len(), 7);
    // SQLite: ILIKE is written as LIKE.
    let (s, _) = sql(&lite("name ILIKE 'a%' OR name NOT ILIKE 'b%'").unwrap());
    assert_eq!(s, r#"(("name" LIKE ?1) OR ("name" NOT LIKE ?2))"#);
}

#[test]
fn functions_are_written_from_the_allow_list() {
    let (s, b) = sql(&pg("LOWER(name) = 'bob' AND Round(score, 2) > 1 AND coalesce(age, 0) > 18 AND trim(status) <> ''").unwrap());
    assert_eq!(
        s,
        r#"((((lower("name") = $1) AND (round("score", 2) > $2)) AND (coalesce("age", $3::integer) > $4::integer)) AND (trim("status") <> $5))"#
    );
    assert_eq!(b[1], Bind::Int(1));
    assert!(matches!(
        err(pg("round(score, 99) > 1")).error_type,
        ErrorType::SyntaxError
    ));
    assert!(matches!(
        err(pg("round(score, age) > 1")).error_type,
        ErrorType::SyntaxError
    ));
    assert!(matches!(
        err(pg("lower(name, name) = 'a'")).error_type,
        ErrorType::SyntaxError
    ));
}

#[test]
fn qualified_and_quoted_columns() {
    let (s, _) = sql(&pg(
        r#""users"."id" = 1 AND users.age > 2 AND "Full Name" = 'x' AND "NAME" = 'y'"#,
    )
    .unwrap());
    assert_eq!(
        s,
        r#"(((("id" = $1::integer) AND ("age" > $2::integer)) AND ("Full Name" = $3)) AND ("name" = $4))"#
    );
}

#[test]
fn quotes_inside_strings_are_just_characters() {
    let (s, b) = sql(&pg(
        "name = 'O''Brien' AND status = 'a\"b' AND name <> '’; DROP TABLE users; --'",
    )
    .unwrap());
    assert!(!s.contains("DROP"));
    assert_eq!(b[0], Bind::Text("O'Brien".into()));
    assert_eq!(b[1], Bind::Text("a\"b".into()));
    assert_eq!(b[2], Bind::Text("’; DROP TABLE users; --".into()));
}

#[test]
fn unicode_look_alike_quotes_are_not_quotes() {
    // ’x’ is an identifier to sqlparser (and to PostgreSQL/SQLite): an
    // unknown column, not a string.
    refused("name = ’x’", ErrorType::InvalidColumn);
    refused("name = ’x’ OR ’1’=’1’", ErrorType::InvalidColumn);
    refused("name = ＇x＇", ErrorType::InvalidColumn);
}

#[test]
fn stacked_statements_and_trailing_garbage() {
    refused("1=1; DROP TABLE users", ErrorType::PermissionDenied);
    refused("id = 1;", ErrorType::PermissionDenied);
    refused("id = 1 garbage", ErrorType::SyntaxError);
    refused(
        "id = 1 UNION SELECT password FROM secrets",
        ErrorType::SyntaxError,
    );
    refused("id = 1) OR (1=1", ErrorType::SyntaxError);
    refused("name = 'unterminated", ErrorType::SyntaxError);
}

#[test]
fn comments_are_refused() {
    refused("id = 1 -- comment", ErrorType::PermissionDenied);
    refused("id = 1 /* x */", ErrorType::PermissionDenied);
    refused("id = 1 /* unterminated", ErrorType::SyntaxError);
    refused("id = /**/1", ErrorType::PermissionDenied);
}

#[test]
fn subqueries_and_other_tables_are_refused() {
    let e = err(pg("id IN (SELECT id FROM secrets)"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert!(e.message.contains("subqueries"), "{}", e.message);
    refused("id = (SELECT 1)", ErrorType::PermissionDenied);
    refused("EXISTS (SELECT 1)", ErrorType::PermissionDenied);
    refused(
        "NOT EXISTS (SELECT * FROM secrets)",
        ErrorType::PermissionDenied,
    );
    refused("secrets.id = 1", ErrorType::PermissionDenied);
    refused("public.users.id = 1", ErrorType::PermissionDenied);
    refused(
        "id = ANY(SELECT id FROM secrets)",
        ErrorType::PermissionDenied,
    );
}

#[test]
fn functions_outside_the_list_are_refused() {
    let e = err(pg("pg_sleep(5) IS NULL"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert!(e.message.contains("pg_sleep"), "{}", e.message);
    assert!(e.message.contains("lower, upper"), "{}", e.message);
    refused("pg_catalog.lower(name) = 'a'", ErrorType::PermissionDenied);
    refused(
        "length(pg_read_file('/etc/passwd')) > 0",
        ErrorType::PermissionDenied,
    );
    refused(
        "randomblob(1000000000) IS NULL",
        ErrorType::PermissionDenied,
    );
    refused("count(*) > 1", ErrorType::PermissionDenied);
    refused("lower(DISTINCT name) = 'a'", ErrorType::PermissionDenied);
    refused("abs(age) OVER () > 1", ErrorType::PermissionDenied);
}

#[test]
fn special_strings_and_placeholders_are_refused() {
    refused("name = $$x$$", ErrorType::PermissionDenied);
    refused("name = $tag$x$tag$", ErrorType::PermissionDenied);
    refused("name = $1", ErrorType::PermissionDenied);
    refused("name = ?", ErrorType::PermissionDenied);
    refused("name = ?1", ErrorType::PermissionDenied);
    refused("name = N'x'", ErrorType::PermissionDenied);
    refused("name = X'41'", ErrorType::PermissionDenied);
    refused("id = 0x10", ErrorType::PermissionDenied);
    // Colon and @ placeholders are tokenized as punctuation but parsed
    // into placeholders by the SQLite dialect.
    let e = err(lite("name = :x"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    let e = err(lite("name = @x"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    // PostgreSQL tokenizes E'..' and U&'..' specially.
    let e = err(pg(r"name = E'\x27'"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    let e = err(pg(r"name = U&'\0027'"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    // SQLite reads E'..' as an identifier followed by a string.
    assert!(lite(r"name = E'\x27'").is_err());
}

#[test]
fn casts_concat_and_operators_are_refused() {
    refused("CAST(id AS text) = '1'", ErrorType::PermissionDenied);
    refused("name = 'a' || 'b'", ErrorType::PermissionDenied);
    refused("age + 1 > 2", ErrorType::PermissionDenied);
    refused("age & 1 = 1", ErrorType::PermissionDenied);
    refused("name COLLATE \"C\" = 'a'", ErrorType::PermissionDenied);
    refused(
        "CASE WHEN id = 1 THEN TRUE ELSE FALSE END",
        ErrorType::PermissionDenied,
    );
    refused("name IS DISTINCT FROM 'a'", ErrorType::PermissionDenied);
    refused("id IN (1, age)", ErrorType::PermissionDenied);
    refused("id IN (1, 2 + 3)", ErrorType::PermissionDenied);
    let e = err(pg("id::text = '1'"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert!(e.message.contains("casts"), "{}", e.message);
    let e = err(pg("created > now() - interval '1 day'"));
    assert_eq!(e.error_type, ErrorType::PermissionDenied);
    assert!(err(pg("name ~ 'a.*'")).error_type == ErrorType::PermissionDenied);
    assert!(err(pg("name SIMILAR TO 'a%'")).error_type == ErrorType::PermissionDenied);
    assert!(err(pg("name -> 'a' = '1'")).error_type == ErrorType::PermissionDenied);
    assert!(err(pg("ARRAY[1] = ARRAY[1]")).error_type == ErrorType::PermissionDenied);
    assert!(err(pg("created > DATE '2020-01-01'")).error_type == ErrorType::PermissionDenied);
    assert!(err(pg("-name = 1")).error_type == ErrorType::PermissionDenied);
}

#[test]
fn unknown_columns_suggest_the_list() {
    let e = err(pg("password = 'x'"));
    assert_eq!(e.error_type, ErrorType::InvalidColumn);
    assert_eq!(
        e.suggestion.as_deref(),
        Some("Available columns: id, name, age, status, score, active, Full Name, created")
    );
    // Long names are not echoed in full.
    let long = "x".repeat(3000);
    let e = err(pg(&format!("{long} = 1")));
    assert!(e.message.len() < 200, "{}", e.message);
}

#[test]
fn like_on_non_text_columns_is_malformed() {
    let e = err(pg("age LIKE '1%'"));
    assert_eq!(e.error_type, ErrorType::SyntaxError);
    assert_eq!(e.reason, Some(Reason::Malformed));
    assert_eq!(e.message, "LIKE works on text columns; `age` is integer");
    assert!(pg("lower(name) LIKE 'a%'").is_ok());
    assert_eq!(
        err(pg("name LIKE 'a' ESCAPE '!!'")).error_type,
        ErrorType::SyntaxError
    );
    assert!(err(pg("name LIKE ANY (ARRAY['a'])")).error_type == ErrorType::PermissionDenied);
}

#[test]
fn size_and_character_limits() {
    refused(
        &format!("name = '{}'", "a".repeat(5000)),
        ErrorType::SyntaxError,
    );
    refused("id = 1\0", ErrorType::SyntaxError);
    refused("id = 1\u{7}", ErrorType::SyntaxError);
    refused("name = 'a\u{1b}[2J'", ErrorType::SyntaxError);
    refused("", ErrorType::SyntaxError);
    refused("   \n\t ", ErrorType::SyntaxError);
    assert!(pg("id = 1\r\n\tAND age > 2").is_ok());
    // Exactly at the limit is fine.
    let at_limit = format!("name = '{}'", "é".repeat(MAX_FILTER_CHARS - 9));
    assert_eq!(at_limit.chars().count(), MAX_FILTER_CHARS);
    assert!(pg(&at_limit).is_ok());
}

#[test]
fn nesting_and_size_of_the_tree_are_capped() {
    let deep = format!("{}id = 1{}", "(".repeat(200), ")".repeat(200));
    refused(&deep, ErrorType::SyntaxError);
    // sqlparser gives up on very long NOT chains in different ways;
    // either way the filter is refused.
    let nots = format!("{}id = 1", "NOT ".repeat(200));
    assert!(pg(&nots).is_err() && lite(&nots).is_err());
    let nots = format!("{}id = 1", "NOT ".repeat(20));
    assert!(pg(&nots).is_ok());
    let chain = vec!["id = 1"; 300].join(" AND ");
    refused(&chain, ErrorType::SyntaxError);
    let in_list = format!(
        "id IN ({})",
        (0..1001)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    refused(&in_list, ErrorType::SyntaxError);
    // Within the limits.
    let ok = format!("{}id = 1{}", "(".repeat(10), ")".repeat(10));
    assert!(pg(&ok).is_ok());
}

#[test]
fn always_true_filters() {
    for t in [
        "1=1",
        "'a'='a'",
        "TRUE",
        "NOT FALSE",
        "1",
        "NULL IS NULL",
        "1 IN (1, 2)",
        "2 BETWEEN 1 AND 3",
        "id > 1 OR 1=1",
        "id = 5 OR (age > 3 OR TRUE)",
        "id = id",
        "id >= id",
        "lower(name) <= lower(name)",
        "NOT (id <> id)",
        "name IS NULL OR name IS NOT NULL",
        "name IS NULL OR id = 3 OR name IS NOT NULL",
        "age = 1 OR age <> 1",
        "age < 5 OR age >= 5",
        "active OR NOT active",
        "active IS TRUE OR active IS NOT TRUE",
        "id IN (1,2) OR id NOT IN (1,2)",
        "name LIKE '%'",
        "name ILIKE '%%'",
        "id BETWEEN id AND id",
        "(id = 1 AND TRUE) OR 'x' = 'x'",
        "id = 1 OR length('abc') = 7",
        "(id = 1 OR 1 = 1) AND (age = 2 OR 2 = 2)",
    ] {
        assert!(pg(t).unwrap().is_always_true(), "{t}");
    }
    for t in [
        "id = 1",
        "id > 1 OR 1=0",
        "id = 1 AND 1=1",
        "id = 5 OR 'a' = 'b'",
        "id <> id OR id = 3",
        "name LIKE 'a%'",
        "name NOT LIKE '%'",
        "name IS NOT NULL",
        "age = 1 OR age <> 2",
        "id = 1 OR NULL",
        "id = 1 AND (2 = 3 OR TRUE)",
    ] {
        assert!(!pg(t).unwrap().is_always_true(), "{t}");
    }
}

#[test]
fn collation_dependent_constants_count_as_true() {
    // 'a' < 'B' depends on the collation: not folded, so conservative.
    assert!(pg("id = 5 OR 'a' < 'B'").unwrap().is_always_true());
}

#[test]
fn write_is_deterministic_and_parenthesized() {
    let f = pg("NOT active AND (age < 3 OR age > 60)").unwrap();
    let (s, _) = sql(&f);
    assert_eq!(
        s,
        r#"((NOT "active") AND (("age" < $1::integer) OR ("age" > $2::integer)))"#
    );
    assert_eq!(sql(&f), sql(&f.clone()));
}

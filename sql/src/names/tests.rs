use super::*;

#[test]
fn table_lists_accept_how_authors_write_names() {
    assert_eq!(
        parse_table_list(" a, \"b\" ;main.c\n`d`, [e], public.\"F\", a,,"),
        ["a", "b", "c", "d", "e", "F"]
    );
    assert_eq!(parse_table_list("\"my.table\""), ["my.table"]);
}
use crate::schema::ColumnKind;

fn table() -> Table {
    let col = |name: &str| Column {
        name: name.into(),
        kind: ColumnKind::Text,
        sql_type: "text".into(),
    };
    Table {
        name: "users".into(),
        columns: vec![
            col("id"),
            col("name"),
            col("Full Name"),
            col("a,b"),
            col("say \"hi\""),
            col("desc"),
        ],
    }
}

fn names(cols: &[&Column]) -> Vec<String> {
    cols.iter().map(|c| c.name.clone()).collect()
}

fn err_type(r: Result<Vec<&Column>, ToolError>) -> ErrorType {
    r.expect_err("must be refused").error_type
}

#[test]
fn all_columns() {
    let t = table();
    assert_eq!(parse_columns(&t, "").unwrap().len(), 6);
    assert_eq!(parse_columns(&t, "  * ").unwrap().len(), 6);
    assert_eq!(parse_columns(&t, " \n ").unwrap().len(), 6);
}

#[test]
fn plain_and_quoted_names() {
    let t = table();
    assert_eq!(
        names(&parse_columns(&t, " id ,NAME, \"Full Name\"").unwrap()),
        vec!["id", "name", "Full Name"]
    );
    assert_eq!(
        names(&parse_columns(&t, r#""a,b", "say ""hi""", Full Name"#).unwrap()),
        vec!["a,b", "say \"hi\"", "Full Name"]
    );
}

#[test]
fn bad_column_lists() {
    let t = table();
    let e = parse_columns(&t, "id, (select password from users)").unwrap_err();
    assert_eq!(e.error_type, ErrorType::InvalidColumn);
    assert_eq!(
        e.suggestion.as_deref(),
        Some("Available columns: id, name, Full Name, a,b, say \"hi\", desc")
    );
    assert_eq!(
        err_type(parse_columns(&t, "count(*)")),
        ErrorType::InvalidColumn
    );
    assert_eq!(
        err_type(parse_columns(&t, "id--")),
        ErrorType::InvalidColumn
    );
    assert_eq!(
        err_type(parse_columns(&t, "id; DROP TABLE users")),
        ErrorType::InvalidColumn
    );
    assert_eq!(
        err_type(parse_columns(&t, "users.id")),
        ErrorType::InvalidColumn
    );
    assert_eq!(
        err_type(parse_columns(&t, "password")),
        ErrorType::InvalidColumn
    );
    assert_eq!(
        err_type(parse_columns(&t, "\"id\"\"; --\"")),
        ErrorType::InvalidColumn
    );
    assert_eq!(
        err_type(parse_columns(&t, "id,,name")),
        ErrorType::SyntaxError
    );
    assert_eq!(err_type(parse_columns(&t, "id,")), ErrorType::SyntaxError);
    assert_eq!(
        err_type(parse_columns(&t, "id, id")),
        ErrorType::SyntaxError
    );
    assert_eq!(
        err_type(parse_columns(&t, "id, ID")),
        ErrorType::SyntaxError
    );
    assert_eq!(err_type(parse_columns(&t, "\"id")), ErrorType::SyntaxError);
    assert_eq!(
        err_type(parse_columns(&t, "\"id\" x")),
        ErrorType::SyntaxError
    );
    assert_eq!(err_type(parse_columns(&t, "id\0")), ErrorType::SyntaxError);
    assert_eq!(
        err_type(parse_columns(&t, "i\u{1b}d")),
        ErrorType::SyntaxError
    );
    assert_eq!(
        err_type(parse_columns(&t, &"x".repeat(MAX_NAMES_CHARS + 1))),
        ErrorType::SyntaxError
    );
    assert_eq!(
        err_type(parse_columns(&t, &vec!["id"; MAX_NAMES + 1].join(","))),
        ErrorType::SyntaxError
    );
    // Error messages do not echo long input.
    let e = parse_columns(&t, &"y".repeat(1000)).unwrap_err();
    assert!(e.message.len() < 200, "{}", e.message);
}

#[test]
fn order_by() {
    let t = table();
    let o = parse_order_by(&t, "name DESC, id").unwrap();
    assert_eq!(o.len(), 2);
    assert_eq!((o[0].column.name.as_str(), o[0].descending), ("name", true));
    assert_eq!((o[1].column.name.as_str(), o[1].descending), ("id", false));
    let o = parse_order_by(&t, "\"Full Name\" asc, \"a,b\" DeSc").unwrap();
    assert_eq!(
        (o[0].column.name.as_str(), o[0].descending),
        ("Full Name", false)
    );
    assert_eq!((o[1].column.name.as_str(), o[1].descending), ("a,b", true));
    // Unquoted names with spaces, and a column called `desc`.
    let o = parse_order_by(&t, "Full Name DESC, desc, desc desc").unwrap_err();
    assert_eq!(o.error_type, ErrorType::SyntaxError); // desc twice
    let o = parse_order_by(&t, "Full Name DESC, desc").unwrap();
    assert_eq!(
        (o[0].column.name.as_str(), o[0].descending),
        ("Full Name", true)
    );
    assert_eq!(
        (o[1].column.name.as_str(), o[1].descending),
        ("desc", false)
    );
    let o = parse_order_by(&t, "desc desc").unwrap();
    assert!(o[0].descending);
    assert!(parse_order_by(&t, "").unwrap().is_empty());
    assert!(parse_order_by(&t, "  ").unwrap().is_empty());
}

#[test]
fn bad_order_by() {
    let t = table();
    let ty = |s: &str| parse_order_by(&t, s).unwrap_err().error_type;
    assert_eq!(ty("2 DESC"), ErrorType::InvalidColumn);
    assert_eq!(ty("name; DROP TABLE users"), ErrorType::InvalidColumn);
    assert_eq!(ty("(SELECT 1)"), ErrorType::InvalidColumn);
    assert_eq!(ty("random()"), ErrorType::InvalidColumn);
    assert_eq!(ty("name NULLS FIRST"), ErrorType::SyntaxError);
    assert_eq!(ty("name DESC NULLS LAST"), ErrorType::SyntaxError);
    assert_eq!(ty("\"name\" DESC NULLS LAST"), ErrorType::SyntaxError);
    assert_eq!(ty("\"name\" DESC extra"), ErrorType::SyntaxError);
    assert_eq!(ty("\"name\" sideways"), ErrorType::SyntaxError);
    assert_eq!(ty("name, name DESC"), ErrorType::SyntaxError);
    assert_eq!(ty("name,"), ErrorType::SyntaxError);
    assert_eq!(ty("name\0"), ErrorType::SyntaxError);
    assert_eq!(ty("name -- x"), ErrorType::InvalidColumn);
}

#[test]
fn identifiers() {
    assert!(check_identifier("table", "users").is_ok());
    assert!(check_identifier("table", "Mixed \"Case\" ✓").is_ok());
    for bad in ["", "   ", "a\0b", "a\nb", "a\u{7f}"] {
        let e = check_identifier("table", bad).unwrap_err();
        assert_eq!(e.error_type, ErrorType::SyntaxError, "{bad:?}");
    }
    let e = check_identifier("table", &"t".repeat(129)).unwrap_err();
    assert_eq!(
        e.message,
        "the table name is too long: at most 128 characters"
    );
    assert!(check_identifier("table", &"é".repeat(128)).is_ok());
}

#[test]
fn table_lists() {
    assert_eq!(parse_table_list(""), Vec::<String>::new());
    assert_eq!(parse_table_list(" , ,"), Vec::<String>::new());
    assert_eq!(
        parse_table_list(" customers, orders ,,orders, Line Items "),
        vec!["customers", "orders", "Line Items"]
    );
}

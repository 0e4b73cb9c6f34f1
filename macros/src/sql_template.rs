//! Compile-time checks of a `#[db_tool(query = "...")]` template: one
//! statement of valid PostgreSQL, placeholders `$1`..`$n` without gaps, and
//! whether it only reads. Comparing `n` with the bound fields is the
//! caller's job, since it knows the fields.

use std::collections::BTreeSet;

use sqlparser::ast::{Query, SetExpr, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// What the checks learned about a valid template.
#[derive(Debug, PartialEq, Eq)]
pub struct Template {
    /// Number of distinct placeholders: `$1`..`$n`.
    pub placeholders: usize,
    /// The statement only reads: a query without data-modifying CTEs,
    /// `SELECT INTO` or locking clauses.
    pub read_only: bool,
}

/// Checks `sql`; on failure, every problem found, each a full sentence.
pub fn check(sql: &str) -> Result<Template, Vec<String>> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| vec![format!("the query is not valid SQL: {e}")])?;
    let statements = Parser::parse_sql(&dialect, sql).map_err(|e| {
        let message = e.to_string();
        let message = message.trim_start_matches("sql parser error: ");
        let hint = if tokens
            .iter()
            .any(|t| matches!(&t.token, Token::Question) || is_question_placeholder(&t.token))
        {
            "; placeholders are written `$1`, `$2`, ... (not `?`)"
        } else {
            ""
        };
        vec![format!(
            "the query is not valid SQL (PostgreSQL dialect): {message}{hint}"
        )]
    })?;
    let statement = match statements.as_slice() {
        [] => return Err(vec!["the query is empty: write one SQL statement".into()]),
        [one] => one,
        many => {
            return Err(vec![format!(
                "the query has {} statements; a db_tool runs exactly one: make one tool per statement",
                many.len()
            )]);
        }
    };
    let placeholders = placeholders(sql, &tokens)?;
    Ok(Template {
        placeholders,
        read_only: is_read_only(statement),
    })
}

fn is_question_placeholder(token: &Token) -> bool {
    matches!(token, Token::Placeholder(p) if p.starts_with('?'))
}

/// The number of placeholders, after checking they are `$1`..`$n`.
fn placeholders(sql: &str, tokens: &[TokenWithSpan]) -> Result<usize, Vec<String>> {
    let multiline = sql.contains('\n');
    let at = |t: &TokenWithSpan| {
        let l = t.span.start;
        if multiline {
            format!("line {}, column {}", l.line, l.column)
        } else {
            format!("column {}", l.column)
        }
    };
    let mut errors = Vec::new();
    let mut numbers = BTreeSet::new();
    for (i, t) in tokens.iter().enumerate() {
        let written = match &t.token {
            Token::Placeholder(p) => p.clone(),
            // `:name` and `@name` are placeholders to the parser, not to the tokenizer.
            Token::Colon | Token::AtSign if is_named_placeholder(tokens, i) => {
                format!("{}{}", t.token, tokens[i + 1].token)
            }
            _ => continue,
        };
        match written.strip_prefix('$').map(str::parse::<u32>) {
            Some(Ok(0)) => errors.push(format!(
                "placeholder `$0` ({}): placeholders are numbered from `$1`",
                at(t)
            )),
            Some(Ok(n)) if written[1..].starts_with(|c: char| c != '0') => {
                numbers.insert(n);
            }
            _ => errors.push(format!(
                "unsupported placeholder `{written}` ({}): write `$1`, `$2`, ... numbered in the order of the bound fields",
                at(t)
            )),
        }
    }
    let max = numbers.last().copied().unwrap_or(0);
    let missing: Vec<String> = (1..=max)
        .filter(|n| !numbers.contains(n))
        .map(|n| format!("${n}"))
        .collect();
    if !missing.is_empty() {
        let used: Vec<String> = numbers.iter().map(|n| format!("${n}")).collect();
        let (what, verb) = if missing.len() == 1 {
            ("placeholder", "is")
        } else {
            ("placeholders", "are")
        };
        errors.push(format!(
            "{what} {} {verb} missing: the query uses {}, and placeholders are numbered `$1`, `$2`, ... without gaps",
            and_list(&missing),
            and_list(&used)
        ));
    }
    if errors.is_empty() {
        Ok(max as usize)
    } else {
        Err(errors)
    }
}

/// `:name` / `@name` written as one word, where an operand goes (not an array slice `a[1:2]`).
fn is_named_placeholder(tokens: &[TokenWithSpan], i: usize) -> bool {
    let next = tokens.get(i + 1).map(|t| &t.token);
    let prev = i.checked_sub(1).map(|p| &tokens[p].token);
    matches!(next, Some(Token::Word(_) | Token::Number(..)))
        && !matches!(
            prev,
            Some(Token::Word(_) | Token::Number(..) | Token::RBracket | Token::RParen)
        )
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn is_read_only(statement: &Statement) -> bool {
    match statement {
        Statement::Query(q) => !query_writes(q),
        _ => false,
    }
}

/// Whether a query writes or locks (PostgreSQL refuses those in a read-only transaction).
fn query_writes(q: &Query) -> bool {
    q.with
        .as_ref()
        .is_some_and(|w| w.cte_tables.iter().any(|c| query_writes(&c.query)))
        || !q.locks.is_empty()
        || set_expr_writes(&q.body)
}

fn set_expr_writes(body: &SetExpr) -> bool {
    match body {
        SetExpr::Select(s) => s.into.is_some(),
        SetExpr::Query(q) => query_writes(q),
        SetExpr::SetOperation { left, right, .. } => {
            set_expr_writes(left) || set_expr_writes(right)
        }
        SetExpr::Values(_) | SetExpr::Table(_) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(sql: &str) -> Template {
        check(sql).unwrap_or_else(|e| panic!("{sql:?} refused: {e:?}"))
    }

    fn err(sql: &str) -> String {
        match check(sql) {
            Ok(t) => panic!("{sql:?} accepted: {t:?}"),
            Err(e) => e.join("\n"),
        }
    }

    #[test]
    fn valid_templates() {
        let t = ok("SELECT id, name FROM users WHERE email = $1 AND status = $2");
        assert_eq!(
            t,
            Template {
                placeholders: 2,
                read_only: true
            }
        );
        assert_eq!(ok("SELECT count(*) FROM users;").placeholders, 0);
        // A placeholder may repeat and appear in any order.
        assert_eq!(
            ok("SELECT * FROM t WHERE a = $2 OR b = $1 OR c = $2").placeholders,
            2
        );
        // Placeholder-like text in strings, identifiers and comments is not a placeholder.
        assert_eq!(
            ok("SELECT '$7', \"$x\" FROM t WHERE a = $1 -- $3 and ?\n").placeholders,
            1
        );
        // Casts and array slices are not `:name` placeholders.
        assert_eq!(
            ok("SELECT a[1:2], b::text FROM t WHERE c = $1::int").placeholders,
            1
        );
        // jsonb's `?` operator is an operator.
        assert_eq!(ok("SELECT * FROM t WHERE data ? 'key'").placeholders, 0);
    }

    #[test]
    fn read_only_is_a_plain_query() {
        assert!(ok("SELECT 1").read_only);
        assert!(ok("WITH x AS (SELECT 1) SELECT * FROM x UNION SELECT 2").read_only);
        assert!(ok("VALUES (1), (2)").read_only);
        for writes in [
            "INSERT INTO t (a) VALUES ($1)",
            "UPDATE t SET a = $1 WHERE id = $2",
            "DELETE FROM t WHERE id = $1",
            "WITH gone AS (DELETE FROM t WHERE id = $1 RETURNING *) SELECT * FROM gone",
            "SELECT * INTO copy FROM t",
            "SELECT * FROM t WHERE id = $1 FOR UPDATE",
            "CREATE TABLE t (a int)",
        ] {
            assert!(!ok(writes).read_only, "{writes} reads only?");
        }
    }

    #[test]
    fn refused_templates() {
        assert!(err("SELECT 1; SELECT 2").contains("the query has 2 statements"));
        assert!(err("").contains("the query is empty"));
        assert_eq!(
            err("SELECT * FROM t WHERE a = $1 AND b = $3"),
            "placeholder $2 is missing: the query uses $1 and $3, and placeholders are numbered `$1`, `$2`, ... without gaps"
        );
        assert!(err("SELECT $4, $1").contains("placeholders $2 and $3 are missing"));
        assert!(
            err("SELEC * FROM t")
                .starts_with("the query is not valid SQL (PostgreSQL dialect): Expected")
        );
        assert!(err("SELECT * FROM t WHERE a = ?").ends_with("(not `?`)"));
        assert_eq!(
            err("SELECT * FROM t WHERE a = $name"),
            "unsupported placeholder `$name` (column 27): write `$1`, `$2`, ... numbered in the order of the bound fields"
        );
        assert!(err("SELECT * FROM t\nWHERE a = :name").contains("`:name` (line 2, column 11)"));
        assert!(err("SELECT $0").contains("numbered from `$1`"));
        assert!(err("SELECT $01").contains("unsupported placeholder `$01`"));
        assert!(err("SELECT 'unterminated").contains("not valid SQL"));
    }

    #[test]
    fn lists_read_well() {
        let s = |v: &[&str]| and_list(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(s(&["a"]), "a");
        assert_eq!(s(&["a", "b"]), "a and b");
        assert_eq!(s(&["a", "b", "c"]), "a, b and c");
    }
}

//! The one statement of the execute tool, checked before it runs.
//!
//! The model's SQL is size-checked, tokenized (comments, placeholders and
//! special string forms refused), parsed by sqlparser as exactly one
//! statement, and walked with sqlparser's visitor so that every relation,
//! table factor, expression, function and literal — in every position — is
//! checked against allow-lists; on PostgreSQL every name used as a value
//! must be a known column or alias. Relations are rewritten to their
//! schema-qualified catalog names, the row limit of a query is set, and the
//! statement sent to the database is our rendering of the checked tree,
//! never the input text. Two extra parses guard against differences between
//! the tree we checked and the SQL we send (see [`check_statement`]).

use std::ops::ControlFlow;

use sqlparser::ast::{
    Delete, Expr, FromTable, Ident, Insert, LimitClause, OnConflictAction, OnInsert, Query,
    SetExpr, SqliteOnConflict, Statement, TableFactor, TableObject, Update, UpdateTableFromKind,
    Value, ValueWithSpan, VisitMut,
};
use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token};

mod checker;

use super::lexical::{check_text, parser_error, tokenize_checked};
use super::response::{Reason, ToolError};
use super::schema::Dialect;
use super::writer::clip;
use checker::{Checker, brk, check_joins};

/// Largest statement accepted, in bytes (16 KiB).
pub const MAX_STATEMENT_BYTES: usize = 16 * 1024;

/// Most tokens (other than whitespace) in a statement. The checker's cost
/// grows with the depth of the parsed tree, and a flat operator chain
/// (`1+1+...`, `a OR b OR ...`) nests one level per two tokens: 16 KiB of
/// `1+` built an 8,000-deep tree that took ~400 MB to check; 2,000 tokens
/// bound the depth to ~1,000 (~60 MB in a debug build, less in release).
pub const MAX_STATEMENT_TOKENS: usize = 2000;

/// Longest `char(n)` / `varchar(n)` a cast may target: a longer `char(n)`
/// pads every value to `n` characters.
pub const MAX_CAST_LENGTH: u64 = 10_000;

/// Aggregate functions allowed in both dialects (also usable with `OVER`).
pub const AGGREGATE_FUNCTIONS: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "string_agg",
    "group_concat",
    "bool_and",
    "bool_or",
];

/// Scalar functions allowed in both dialects. None of them builds a value
/// more than linearly larger than its arguments (`replace`, `repeat`,
/// `lpad`, `rpad` and `printf` can, and are left out).
pub const SCALAR_FUNCTIONS: &[&str] = &[
    "lower",
    "upper",
    "length",
    "char_length",
    "character_length",
    "trim",
    "ltrim",
    "rtrim",
    "substr",
    "substring",
    "concat",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "abs",
    "round",
    "ceil",
    "ceiling",
    "floor",
    "date_trunc",
    "date_part",
    "now",
    "current_date",
    "current_timestamp",
    "to_char",
    "left",
    "right",
    "position",
    "ifnull",
    "iif",
    "sign",
    "mod",
];

/// Functions allowed only on PostgreSQL.
pub const POSTGRES_FUNCTIONS: &[&str] = &["array_agg"];

/// Functions allowed only on SQLite (its date and time functions).
pub const SQLITE_FUNCTIONS: &[&str] = &["strftime", "date", "datetime", "julianday"];

/// Ranking functions, allowed only with `OVER (...)`.
pub const WINDOW_FUNCTIONS: &[&str] = &["row_number", "rank", "dense_rank"];

/// The SQL keywords that are niladic functions (no parentheses) and may be
/// used: `CURRENT_DATE` and `CURRENT_TIMESTAMP`. Others of the kind
/// (`CURRENT_USER`, `SESSION_USER`, `USER`, `CURRENT_SCHEMA`, ...) reveal
/// server details and are refused.
pub const NILADIC_FUNCTIONS: &[&str] = &["current_date", "current_timestamp"];

/// The parser's recursion limit for statements.
const RECURSION_LIMIT: usize = 48;
/// The limit of the confirming parse: a tree that changes when the limit is
/// raised was shaped by the limit (sqlparser can swallow the limit error and
/// backtrack into another reading, e.g. a deep `NOT NOT ... NOT` chain whose
/// last `NOT` becomes a column name), so it is refused.
const CONFIRM_RECURSION_LIMIT: usize = RECURSION_LIMIT * 4;

/// What the execute tool may do, fixed by the workflow author.
#[derive(Debug, Clone, Copy)]
pub struct StatementPolicy<'a> {
    /// The only schema qualifier accepted (`public`, `main`), as the catalog
    /// spells it; every table is rewritten to be qualified by it. Empty
    /// leaves names unqualified.
    pub schema: &'a str,
    /// The tables the statement may use (already filtered by the allow and
    /// deny lists), exactly as the catalog spells them.
    pub tables: &'a [String],
    /// Every column name of every table in `tables`, exactly as the catalog
    /// spells them (each once). On PostgreSQL a name that is neither one of
    /// these nor an alias the statement defines is refused: `t.f` with no
    /// column `f` is the function call `f(t)`, and a bare table name is a
    /// whole-row value. UPDATE and DELETE must test one of them.
    pub columns: &'a [String],
    /// Whether INSERT, UPDATE and DELETE are allowed.
    pub allow_writes: bool,
    /// Most rows a query returns; its top-level LIMIT is set to one more, so
    /// the caller can tell the result was cut.
    pub max_rows: u32,
}

/// A statement that passed the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedStatement {
    /// Our rendering of the checked (and limited) tree: the SQL to run.
    pub sql: String,
    /// Whether the statement is a query (run it in a read-only transaction).
    pub read_only: bool,
    /// The catalog tables the statement uses, each once, in order of first use.
    pub tables: Vec<String>,
}

/// Checks the one statement of the execute tool.
///
/// Layers, in order: size cap (16 KiB) and no NUL/control characters
/// (→ `SyntaxError`); tokens (comments, placeholders, dollar-quoted and
/// other special strings → `PermissionDenied`; a `;` followed by more SQL →
/// `PermissionDenied` "exactly one statement"; more than
/// [`MAX_STATEMENT_TOKENS`] → `SyntaxError`); parse (→ `SyntaxError`),
/// confirmed by a second parse with a higher recursion limit; the statement
/// kind (queries; INSERT/UPDATE/DELETE only with `allow_writes`, without
/// SQLite conflict clauses or `ON CONFLICT DO UPDATE`); a visitor over
/// every node (relations → `InvalidTable` listing only `policy.tables`;
/// table functions, functions, casts and expression kinds outside the
/// allow-lists → `PermissionDenied`); on PostgreSQL, every name used as a
/// value must be a column in `policy.columns` or an alias the statement
/// defines (→ `InvalidColumn`); UPDATE and DELETE need a WHERE clause that
/// tests a real column and compares none with itself (→
/// `PermissionDenied`); the row limit of a query (→ `SyntaxError` for a
/// LIMIT/OFFSET that is not a non-negative integer literal; a bare VALUES
/// list gets none). Finally the rendered SQL is parsed again and must
/// render the same (a fixpoint), so what runs is what was checked.
pub fn check_statement(
    dialect: Dialect,
    sql: &str,
    policy: &StatementPolicy<'_>,
) -> Result<CheckedStatement, ToolError> {
    if sql.len() > MAX_STATEMENT_BYTES {
        return Err(ToolError::malformed(
            Reason::TooLong,
            format!("the statement is too long: at most {MAX_STATEMENT_BYTES} bytes"),
        ));
    }
    check_text(sql, MAX_STATEMENT_BYTES, "the statement")?;
    let tokens = tokenize_checked(dialect, sql, "statements", true)?;
    let significant: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let Some(first) = significant.first() else {
        return Err(ToolError::malformed(Reason::Empty, "empty statement"));
    };
    let first_word = clip(&first.to_string().to_ascii_uppercase());
    if significant.len() > MAX_STATEMENT_TOKENS {
        return Err(ToolError::malformed(Reason::TooComplex, format!(
            "the statement is too complex: at most {MAX_STATEMENT_TOKENS} tokens (words, numbers, strings and symbols)"
        ))
        .suggest("Split the work into several smaller statements."));
    }
    // Refuse stacking by tokens, before parsing: a second statement is
    // refused even when the parser could not read it.
    if let Some(pos) = significant.iter().position(|t| **t == Token::SemiColon)
        && significant[pos..].iter().any(|t| **t != Token::SemiColon)
    {
        return Err(one_statement());
    }

    let mut statements = parse(dialect, tokens.clone(), RECURSION_LIMIT)?;
    // Trees are compared through their rendering: it is what the database
    // sees, and Display is stack-protected by sqlparser where the derived
    // PartialEq is not (a 16 KiB `1+1+...` chain overflows it).
    let confirmed = parse(dialect, tokens, CONFIRM_RECURSION_LIMIT)
        .is_ok_and(|again| rendered(&again) == rendered(&statements));
    if !confirmed {
        return Err(ToolError::malformed(
            Reason::TooComplex,
            "the statement is nested too deeply to be checked",
        ));
    }
    if statements.len() != 1 {
        return Err(if statements.is_empty() {
            ToolError::malformed(Reason::Empty, "empty statement")
        } else {
            one_statement()
        });
    }
    let mut statement = statements.remove(0);

    let read_only = check_kind(&statement, policy, &first_word)?;

    let mut checker = Checker::new(dialect, policy);
    if let ControlFlow::Break(e) = VisitMut::visit(&mut statement, &mut checker) {
        return Err(e);
    }
    checker.check_columns(&statement)?;
    match &statement {
        Statement::Update(u) => require_where(dialect, policy, u.selection.as_ref(), "UPDATE")?,
        Statement::Delete(d) => require_where(dialect, policy, d.selection.as_ref(), "DELETE")?,
        _ => {}
    }

    if let Statement::Query(q) = &mut statement {
        limit_rows(q, policy.max_rows)?;
    }

    let sql = statement.to_string();
    // What runs must be what was checked: sqlparser must read our rendering
    // back as one statement that renders the same (a fixpoint), or Display
    // lost or changed something.
    let stable = tokenize_checked(dialect, &sql, "statements", true)
        .and_then(|tokens| parse(dialect, tokens, CONFIRM_RECURSION_LIMIT))
        .is_ok_and(|again| again.len() == 1 && again[0].to_string() == sql);
    if !stable {
        return Err(ToolError::malformed(
            Reason::TooComplex,
            "this statement cannot be checked reliably; please write it more simply",
        ));
    }

    Ok(CheckedStatement {
        sql,
        read_only,
        tables: checker.into_tables(),
    })
}

fn rendered(statements: &[Statement]) -> Vec<String> {
    statements.iter().map(ToString::to_string).collect()
}

fn one_statement() -> ToolError {
    ToolError::denied("exactly one statement, please")
        .suggest("Send one SQL statement per call, without `;` between statements.")
}

fn parse(dialect: Dialect, tokens: Vec<Token>, limit: usize) -> Result<Vec<Statement>, ToolError> {
    fn run(
        d: &dyn sqlparser::dialect::Dialect,
        tokens: Vec<Token>,
        limit: usize,
    ) -> Result<Vec<Statement>, ParserError> {
        Parser::new(d)
            .with_recursion_limit(limit)
            .with_tokens(tokens)
            .parse_statements()
    }
    match dialect {
        Dialect::Postgres => run(&PostgreSqlDialect {}, tokens, limit),
        Dialect::Sqlite => run(&SQLiteDialect {}, tokens, limit),
    }
    .map_err(parser_error)
}

/// Checks the statement kind and the parts of INSERT/UPDATE/DELETE the
/// visitor does not see as such. Returns whether the statement only reads.
fn check_kind(
    statement: &Statement,
    policy: &StatementPolicy<'_>,
    first_word: &str,
) -> Result<bool, ToolError> {
    let write = match statement {
        Statement::Query(_) => return Ok(true),
        Statement::Insert(i) => WriteKind::Insert(i),
        Statement::Update(u) => WriteKind::Update(u),
        Statement::Delete(d) => WriteKind::Delete(d),
        _ => {
            let allowed = if policy.allow_writes {
                "SELECT queries and INSERT, UPDATE and DELETE statements"
            } else {
                "SELECT queries"
            };
            return Err(ToolError::denied(format!(
                "`{first_word}` statements are not allowed; only {allowed} are"
            ))
            .suggest("Schema changes, settings, transactions, COPY, PRAGMA, ATTACH and the like are never run by this tool."));
        }
    };
    if !policy.allow_writes {
        return Err(
            ToolError::denied("this tool is read-only: only SELECT queries are allowed")
                .suggest("Ask the workflow author to enable writes, or only read data."),
        );
    }
    match write {
        WriteKind::Insert(i) => check_insert(i),
        WriteKind::Update(u) => check_update(u),
        WriteKind::Delete(d) => check_delete(d),
    }?;
    Ok(false)
}

enum WriteKind<'s> {
    Insert(&'s Insert),
    Update(&'s Update),
    Delete(&'s Delete),
}

/// Refuses string building in the body of a recursive CTE: `s || s` (or
/// `concat`, an aggregate of strings) doubles a value at every step, up to
/// PostgreSQL's 1 GB value limit, long before the statement timeout. The
/// check reads our rendering of the checked tree, so it errs on the side of
/// refusing (a `||` inside a string literal counts too).
fn no_growth(body: &Query) -> Result<(), ToolError> {
    const GROWING: [&str; 7] = [
        "||",
        "concat(",
        "string_agg(",
        "group_concat(",
        "array_agg(",
        "lpad(",
        "rpad(",
    ];
    let text = body.to_string().to_ascii_lowercase();
    if GROWING.iter().any(|g| text.contains(g)) {
        return Err(ToolError::denied(
            "string concatenation inside WITH RECURSIVE is not allowed: each step could double a value",
        ));
    }
    Ok(())
}

fn unsupported(what: &str) -> ToolError {
    ToolError::denied(format!("{what} is not supported by this tool"))
}

/// Refuses SQLite's conflict clauses (`INSERT OR REPLACE`, `REPLACE INTO`,
/// `UPDATE OR REPLACE`, ...): REPLACE deletes the rows a new value collides
/// with, rows the statement never named.
fn conflict_clause(or: Option<&SqliteOnConflict>, replace_into: bool) -> Result<(), ToolError> {
    if or.is_some() || replace_into {
        return Err(ToolError::denied(
            "conflict clauses (REPLACE, INSERT OR ..., UPDATE OR ...) are not allowed: they can change or delete rows the statement does not name",
        )
        .suggest("Use plain INSERT (ON CONFLICT DO NOTHING is allowed) or UPDATE ... WHERE."));
    }
    Ok(())
}

fn check_insert(i: &Insert) -> Result<(), ToolError> {
    if !matches!(i.table, TableObject::TableName(_)) {
        return Err(unsupported("inserting into a function or query"));
    }
    conflict_clause(i.or.as_ref(), i.replace_into)?;
    if let Some(OnInsert::OnConflict(c)) = &i.on
        && matches!(c.action, OnConflictAction::DoUpdate(_))
    {
        return Err(ToolError::denied(
            "ON CONFLICT ... DO UPDATE is not allowed: it updates rows the statement does not filter",
        )
        .suggest("Use ON CONFLICT DO NOTHING, or a separate UPDATE ... WHERE."));
    }
    let plain = i.optimizer_hints.is_empty()
        && !i.ignore
        && !i.overwrite
        && i.assignments.is_empty()
        && i.partitioned.is_none()
        && i.after_columns.is_empty()
        && !i.has_table_keyword
        && matches!(i.on, None | Some(OnInsert::OnConflict(_)))
        && i.output.is_none()
        && !i.replace_into
        && i.priority.is_none()
        && i.insert_alias.is_none()
        && i.settings.is_none()
        && i.format_clause.is_none()
        && i.multi_table_insert_type.is_none()
        && i.multi_table_into_clauses.is_empty()
        && i.multi_table_when_clauses.is_empty()
        && i.multi_table_else_clause.is_none();
    if plain {
        Ok(())
    } else {
        Err(unsupported("this form of INSERT"))
    }
}

fn check_update(u: &Update) -> Result<(), ToolError> {
    if !u.table.joins.is_empty() || !matches!(u.table.relation, TableFactor::Table { .. }) {
        return Err(unsupported("UPDATE of a join"));
    }
    conflict_clause(u.or.as_ref(), false)?;
    if let Some(UpdateTableFromKind::AfterSet(from) | UpdateTableFromKind::BeforeSet(from)) =
        &u.from
    {
        from.iter().try_for_each(check_joins)?;
    }
    if !u.optimizer_hints.is_empty()
        || u.output.is_some()
        || !u.order_by.is_empty()
        || u.limit.is_some()
    {
        return Err(unsupported("this form of UPDATE"));
    }
    if u.selection.is_none() {
        return Err(no_where("UPDATE"));
    }
    Ok(())
}

fn check_delete(d: &Delete) -> Result<(), ToolError> {
    let from = match &d.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    if !d.tables.is_empty()
        || from.len() != 1
        || !from[0].joins.is_empty()
        || !matches!(from[0].relation, TableFactor::Table { .. })
    {
        return Err(unsupported("DELETE from several tables or a join"));
    }
    if let Some(using) = &d.using {
        using.iter().try_for_each(check_joins)?;
    }
    if !d.optimizer_hints.is_empty()
        || d.output.is_some()
        || !d.order_by.is_empty()
        || d.limit.is_some()
    {
        return Err(unsupported("this form of DELETE"));
    }
    if d.selection.is_none() {
        return Err(no_where("DELETE"));
    }
    Ok(())
}

fn no_where(what: &str) -> ToolError {
    ToolError::denied(format!(
        "{what} needs a WHERE clause; changing every row is not allowed"
    ))
    .because(Reason::NoFilter)
}

/// The WHERE clause of UPDATE and DELETE must pick rows by a real column:
/// it must reference one of `policy.columns`, and so must each branch of
/// an OR (`id = 1 OR 1=1` is refused); no column may be compared with
/// itself (`id = id`, `name LIKE name`), and `LIKE '%'` is refused. Like
/// the filter tool's check this catches the usual tricks, not every
/// tautology: the runtime also refuses a change that touched every row.
fn require_where(
    dialect: Dialect,
    policy: &StatementPolicy<'_>,
    selection: Option<&Expr>,
    what: &str,
) -> Result<(), ToolError> {
    let Some(expr) = selection else {
        return Err(no_where(what));
    };
    let w = WhereCheck { dialect, policy };
    if let ControlFlow::Break(e) = sqlparser::ast::visit_expressions(expr, |e| brk(w.node(e, what)))
    {
        return Err(e);
    }
    if w.may_match_all(expr) {
        return Err(ToolError::denied(format!(
            "{what}'s WHERE clause must test a column in every branch; a constant condition would change every row"
        ))
        .suggest("Filter on a key column, e.g. WHERE id = 42"));
    }
    Ok(())
}

struct WhereCheck<'p> {
    dialect: Dialect,
    policy: &'p StatementPolicy<'p>,
}

impl WhereCheck<'_> {
    /// Refuses a comparison of an expression with itself and `LIKE '%'`.
    fn node(&self, e: &Expr, what: &str) -> Result<(), ToolError> {
        use sqlparser::ast::BinaryOperator as B;
        let same = |a: &Expr, b: &Expr| self.same(a, b);
        let selfish = match e {
            Expr::BinaryOp { left, op, right } => {
                matches!(
                    op,
                    B::Eq | B::NotEq | B::Lt | B::Gt | B::LtEq | B::GtEq | B::Spaceship
                ) && same(left, right)
            }
            Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => same(a, b),
            Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
                if let Expr::Value(ValueWithSpan {
                    value: Value::SingleQuotedString(p),
                    ..
                }) = strip(pattern)
                    && !p.is_empty()
                    && p.bytes().all(|b| b == b'%')
                {
                    return Err(ToolError::denied(format!(
                        "{what}'s WHERE clause uses LIKE '%', which matches every row"
                    )));
                }
                same(expr, pattern)
            }
            Expr::Between {
                expr, low, high, ..
            } => same(expr, low) || same(expr, high),
            Expr::InList { expr, list, .. } => list.iter().any(|x| same(expr, x)),
            _ => false,
        };
        if selfish {
            return Err(ToolError::denied(format!(
                "{what}'s WHERE clause compares a column with itself, which holds for every row"
            ))
            .suggest("Compare the column with a value, e.g. WHERE id = 42"));
        }
        Ok(())
    }

    /// Whether two sides of a comparison are the same: the same column
    /// (names compared as the database compares them; a bare name matches
    /// any qualified one ending in it), or the same rendering.
    fn same(&self, a: &Expr, b: &Expr) -> bool {
        let (a, b) = (strip(a), strip(b));
        match (ident_parts(a), ident_parts(b)) {
            (Some(x), Some(y)) => {
                let eq = |i: &Ident, j: &Ident| {
                    fold_ident(self.dialect, i) == fold_ident(self.dialect, j)
                };
                let (Some(lx), Some(ly)) = (x.last(), y.last()) else {
                    return false;
                };
                eq(lx, ly)
                    && (x.len() == 1
                        || y.len() == 1
                        || (x.len() == y.len() && x.iter().zip(y).all(|(i, j)| eq(i, j))))
            }
            _ => a.to_string() == b.to_string(),
        }
    }

    /// Whether the condition could hold for every row as far as its shape
    /// shows: a part without a real column may be constant-true, an OR is
    /// when either branch is, an AND when both are.
    fn may_match_all(&self, e: &Expr) -> bool {
        use sqlparser::ast::BinaryOperator as B;
        match strip(e) {
            Expr::BinaryOp {
                left,
                op: B::Or,
                right,
            } => self.may_match_all(left) || self.may_match_all(right),
            Expr::BinaryOp {
                left,
                op: B::And,
                right,
            } => self.may_match_all(left) && self.may_match_all(right),
            other => !self.has_column(other),
        }
    }

    /// Whether `e` references one of the policy's columns anywhere.
    fn has_column(&self, e: &Expr) -> bool {
        sqlparser::ast::visit_expressions(e, |x| {
            let found = ident_parts(x)
                .and_then(|p| p.last())
                .is_some_and(|i| is_column(self.dialect, self.policy.columns, i));
            if found {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .is_break()
    }
}

/// `e` without enclosing parentheses.
fn strip(mut e: &Expr) -> &Expr {
    while let Expr::Nested(inner) = e {
        e = inner;
    }
    e
}

/// The parts of a column reference (`a`, `t.a`, `s.t.a`).
fn ident_parts(e: &Expr) -> Option<&[Ident]> {
    match e {
        Expr::Identifier(i) => Some(std::slice::from_ref(i)),
        Expr::CompoundIdentifier(parts) => Some(parts),
        _ => None,
    }
}

/// An identifier as the database resolves it: PostgreSQL folds unquoted
/// names to lower case (ASCII only) and keeps quoted ones; SQLite compares
/// names case-insensitively (ASCII only) either way.
fn fold_ident(dialect: Dialect, ident: &Ident) -> String {
    match (dialect, ident.quote_style) {
        (Dialect::Postgres, Some(_)) => ident.value.clone(),
        _ => ident.value.to_ascii_lowercase(),
    }
}

/// Whether `ident` names one of `columns` (catalog spellings).
fn is_column(dialect: Dialect, columns: &[String], ident: &Ident) -> bool {
    match dialect {
        Dialect::Postgres => {
            let folded = fold_ident(dialect, ident);
            columns.contains(&folded)
        }
        Dialect::Sqlite => columns.iter().any(|c| c.eq_ignore_ascii_case(&ident.value)),
    }
}

/// Sets the top-level row limit of a query to at most `max_rows + 1`.
fn limit_rows(q: &mut Query, max_rows: u32) -> Result<(), ToolError> {
    let cap = u64::from(max_rows) + 1;
    let bad_limit = || {
        ToolError::malformed(
            Reason::OutOfRange,
            "LIMIT must be a non-negative whole number, e.g. LIMIT 100",
        )
    };
    let bad_offset = || {
        ToolError::malformed(
            Reason::OutOfRange,
            "OFFSET must be a non-negative whole number, e.g. OFFSET 20",
        )
    };

    // FETCH FIRST n ROWS ONLY becomes LIMIT n.
    let mut fetched = None;
    if let Some(fetch) = q.fetch.take() {
        if fetch.percent || fetch.with_ties {
            return Err(ToolError::denied(
                "FETCH ... PERCENT / WITH TIES is not supported; use LIMIT",
            ));
        }
        fetched = Some(match &fetch.quantity {
            None => 1,
            Some(e) => int_literal(e).ok_or_else(bad_limit)?,
        });
    }

    match &mut q.limit_clause {
        // A bare VALUES list is bounded by its own size, and SQLite refuses
        // a LIMIT after it.
        None if fetched.is_none() && matches!(*q.body, SetExpr::Values(_)) => {}
        None => {
            q.limit_clause = Some(LimitClause::LimitOffset {
                limit: Some(number(fetched.unwrap_or(cap).min(cap))),
                offset: None,
                limit_by: Vec::new(),
            });
        }
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(unsupported("LIMIT BY"));
            }
            if let Some(o) = offset {
                int_literal(&o.value).ok_or_else(bad_offset)?;
            }
            let n = match (limit.as_ref(), fetched) {
                (Some(_), Some(_)) => {
                    return Err(ToolError::malformed(
                        Reason::Malformed,
                        "use either LIMIT or FETCH, not both",
                    ));
                }
                (Some(e), None) => int_literal(e).ok_or_else(bad_limit)?,
                (None, Some(n)) => n,
                (None, None) => cap,
            };
            *limit = Some(number(n.min(cap)));
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            if fetched.is_some() {
                return Err(ToolError::malformed(
                    Reason::Malformed,
                    "use either LIMIT or FETCH, not both",
                ));
            }
            int_literal(offset).ok_or_else(bad_offset)?;
            let n = int_literal(limit).ok_or_else(bad_limit)?;
            *limit = number(n.min(cap));
        }
    }
    Ok(())
}

/// A non-negative integer literal's value.
fn int_literal(e: &Expr) -> Option<u64> {
    match e {
        Expr::Value(ValueWithSpan {
            value: Value::Number(n, false),
            ..
        }) if n.bytes().all(|b| b.is_ascii_digit()) => n.parse().ok(),
        _ => None,
    }
}

fn number(n: u64) -> Expr {
    Expr::Value(ValueWithSpan {
        value: Value::Number(n.to_string(), false),
        span: Span::empty(),
    })
}

#[cfg(test)]
mod tests;

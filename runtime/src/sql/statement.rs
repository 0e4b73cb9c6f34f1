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
    CastKind, CeilFloorKind, CharacterLength, DataType, DateTimeField, Delete, DuplicateTreatment,
    Expr, FromTable, Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause,
    FunctionArguments, GroupByExpr, Ident, Insert, JoinConstraint, JoinOperator, LimitClause,
    ObjectName, ObjectNamePart, OnConflictAction, OnInsert, OrderByKind, Query, Select,
    SelectFlavor, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, SqliteOnConflict,
    Statement, TableFactor, TableObject, TableWithJoins, UnaryOperator, Update,
    UpdateTableFromKind, Value, ValueWithSpan, Visit, VisitMut, Visitor, VisitorMut,
    WildcardAdditionalOptions,
};
use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token};

use super::filter::{check_text, parser_error, tokenize_checked};
use super::response::{ErrorType, ToolError};
use super::schema::Dialect;
use super::writer::clip;

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
/// (→ `InvalidInput`); tokens (comments, placeholders, dollar-quoted and
/// other special strings → `PermissionDenied`; a `;` followed by more SQL →
/// `PermissionDenied` "exactly one statement"; more than
/// [`MAX_STATEMENT_TOKENS`] → `InvalidInput`); parse (→ `SyntaxError`),
/// confirmed by a second parse with a higher recursion limit; the statement
/// kind (queries; INSERT/UPDATE/DELETE only with `allow_writes`, without
/// SQLite conflict clauses or `ON CONFLICT DO UPDATE`); a visitor over
/// every node (relations → `InvalidTable` listing only `policy.tables`;
/// table functions, functions, casts and expression kinds outside the
/// allow-lists → `PermissionDenied`); on PostgreSQL, every name used as a
/// value must be a column in `policy.columns` or an alias the statement
/// defines (→ `InvalidColumn`); UPDATE and DELETE need a WHERE clause that
/// tests a real column and compares none with itself (→
/// `PermissionDenied`); the row limit of a query (→ `InvalidInput` for a
/// LIMIT/OFFSET that is not a non-negative integer literal; a bare VALUES
/// list gets none). Finally the rendered SQL is parsed again and must
/// render the same (a fixpoint), so what runs is what was checked.
pub fn check_statement(
    dialect: Dialect,
    sql: &str,
    policy: &StatementPolicy<'_>,
) -> Result<CheckedStatement, ToolError> {
    if sql.len() > MAX_STATEMENT_BYTES {
        return Err(ToolError::invalid_input(format!(
            "the statement is too long: at most {MAX_STATEMENT_BYTES} bytes"
        )));
    }
    check_text(sql, MAX_STATEMENT_BYTES, "the statement")?;
    let tokens = tokenize_checked(dialect, sql, "statements", true)?;
    let significant: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let Some(first) = significant.first() else {
        return Err(ToolError::invalid_input("empty statement"));
    };
    let first_word = clip(&first.to_string().to_ascii_uppercase());
    if significant.len() > MAX_STATEMENT_TOKENS {
        return Err(ToolError::invalid_input(format!(
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
        return Err(ToolError::invalid_input(
            "the statement is nested too deeply to be checked",
        ));
    }
    if statements.len() != 1 {
        return Err(if statements.is_empty() {
            ToolError::invalid_input("empty statement")
        } else {
            one_statement()
        });
    }
    let mut statement = statements.remove(0);

    let read_only = check_kind(&statement, policy, &first_word)?;

    let mut checker = Checker {
        dialect,
        policy,
        statements: 0,
        scopes: Vec::new(),
        pushed: Vec::new(),
        cte_bodies: Vec::new(),
        used: Vec::new(),
        defined: Defined::default(),
    };
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
        return Err(ToolError::invalid_input(
            "this statement cannot be checked reliably; please write it more simply",
        ));
    }

    Ok(CheckedStatement {
        sql,
        read_only,
        tables: checker.used,
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
    let bad_limit =
        || ToolError::invalid_input("LIMIT must be a non-negative whole number, e.g. LIMIT 100");
    let bad_offset =
        || ToolError::invalid_input("OFFSET must be a non-negative whole number, e.g. OFFSET 20");

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
                    return Err(ToolError::invalid_input(
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
                return Err(ToolError::invalid_input(
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

/// A name of the CTE scope, folded as the database folds it.
type Folded = String;

/// The CTE names visible in one part of the statement.
struct Scope {
    names: Vec<Folded>,
    /// The scope of a CTE body: its names are the CTEs of the enclosing WITH
    /// this body may see; the scope below it (that WITH's full list) is
    /// skipped.
    barrier: bool,
}

/// The visitor: checks every node, rewrites relations to their catalog
/// names, and records the tables used.
struct Checker<'p> {
    dialect: Dialect,
    policy: &'p StatementPolicy<'p>,
    /// Statements seen: the first is the top level; any other is a
    /// data-modifying statement inside a query.
    statements: usize,
    scopes: Vec<Scope>,
    /// How many scopes each query pushed (popped in `post_visit_query`).
    pushed: Vec<usize>,
    /// CTE bodies not yet visited, identified by address, with the CTE
    /// names each may see.
    cte_bodies: Vec<(*const Query, Vec<Folded>)>,
    used: Vec<String>,
    defined: Defined,
}

/// The names a statement defines besides the catalog's columns, for the
/// PostgreSQL column check (folded; collected over the whole statement,
/// scopes ignored).
#[derive(Default)]
struct Defined {
    /// Output names: select-item aliases, CTE column lists, table-alias
    /// column lists.
    aliases: Vec<Folded>,
    /// Names of FROM items whose columns are the statement's own: CTEs,
    /// references to them, and derived tables.
    derived: Vec<Folded>,
    /// Names a catalog table is known by (its name and alias).
    base: Vec<Folded>,
}

impl Checker<'_> {
    /// An identifier as the database resolves it: PostgreSQL folds unquoted
    /// names to lower case (ASCII only) and keeps quoted ones; SQLite
    /// compares names case-insensitively (ASCII only) either way.
    fn fold(&self, ident: &Ident) -> Folded {
        fold_ident(self.dialect, ident)
    }

    /// Whether a catalog name is what `ident` resolves to.
    fn names(&self, ident: &Ident, catalog: &str) -> bool {
        match self.dialect {
            Dialect::Postgres => self.fold(ident) == catalog,
            Dialect::Sqlite => ident.value.eq_ignore_ascii_case(catalog),
        }
    }

    fn is_cte(&self, name: &Folded) -> bool {
        let mut skip = false;
        for scope in self.scopes.iter().rev() {
            if skip {
                skip = false;
                continue;
            }
            if scope.names.contains(name) {
                return true;
            }
            skip = scope.barrier;
        }
        false
    }

    fn relation(&mut self, name: &mut ObjectName) -> Result<(), ToolError> {
        let mut parts = Vec::with_capacity(name.0.len());
        for p in &name.0 {
            match p {
                ObjectNamePart::Identifier(i) => parts.push(i.clone()),
                ObjectNamePart::Function(_) => return Err(self.unknown_table(name)),
            }
        }
        let table = match parts.as_slice() {
            [t] => {
                if self.is_cte(&self.fold(t)) {
                    return Ok(());
                }
                t
            }
            [s, t] if !self.policy.schema.is_empty() && self.names(s, self.policy.schema) => t,
            _ => return Err(self.unknown_table(name)),
        };
        let Some(catalog) = self
            .policy
            .tables
            .iter()
            .find(|c| self.names(table, c))
            .cloned()
        else {
            return Err(self.unknown_table(name));
        };
        if !self.used.contains(&catalog) {
            self.used.push(catalog.clone());
        }
        // Rewrite to the qualified catalog name: the database then resolves
        // exactly the allowed table, whatever its search_path or temporary
        // tables say.
        let mut canonical = Vec::with_capacity(2);
        if !self.policy.schema.is_empty() {
            canonical.push(ObjectNamePart::Identifier(Ident::with_quote(
                '"',
                self.policy.schema,
            )));
        }
        canonical.push(ObjectNamePart::Identifier(Ident::with_quote('"', catalog)));
        name.0 = canonical;
        Ok(())
    }

    fn unknown_table(&self, name: &ObjectName) -> ToolError {
        let mut message = format!(
            "table `{}` does not exist or is not available to this tool",
            clip(&name.to_string())
        );
        // PostgreSQL folds unquoted names to lower case: a mixed-case
        // catalog name must be quoted.
        if let (Dialect::Postgres, Some(ObjectNamePart::Identifier(last))) =
            (self.dialect, name.0.last())
        {
            let folded = self.fold(last);
            if let Some(t) = self
                .policy
                .tables
                .iter()
                .find(|t| t.eq_ignore_ascii_case(&last.value) && **t != folded)
            {
                message.push_str(&format!(
                    "; names are case-sensitive in double quotes: write \"{}\"",
                    clip(&t.replace('"', "\"\""))
                ));
            }
        }
        let e = ToolError::new(ErrorType::InvalidTable, message);
        if self.policy.tables.is_empty() {
            e.suggest("No tables are available to this tool.")
        } else {
            e.suggest(format!(
                "Tables you can use: {}",
                self.policy.tables.join(", ")
            ))
        }
    }

    fn query(&mut self, q: &Query) -> Result<(), ToolError> {
        if !q.locks.is_empty() {
            return Err(ToolError::denied(
                "locking clauses (FOR UPDATE / FOR SHARE) are not allowed",
            ));
        }
        if q.for_clause.is_some()
            || q.settings.is_some()
            || q.format_clause.is_some()
            || !q.pipe_operators.is_empty()
        {
            return Err(unsupported("this query clause"));
        }
        if let Some(o) = &q.order_by {
            if o.interpolate.is_some() || !matches!(o.kind, OrderByKind::Expressions(_)) {
                return Err(unsupported("this ORDER BY form"));
            }
            if let OrderByKind::Expressions(exprs) = &o.kind
                && exprs.iter().any(|e| e.with_fill.is_some())
            {
                return Err(unsupported("ORDER BY ... WITH FILL"));
            }
        }
        check_set_expr(&q.body)?;

        let mut pushed = 0;
        let me: *const Query = q;
        if let Some(i) = self
            .cte_bodies
            .iter()
            .position(|(p, _)| std::ptr::eq(*p, me))
        {
            let (_, names) = self.cte_bodies.swap_remove(i);
            self.scopes.push(Scope {
                names,
                barrier: true,
            });
            pushed += 1;
        }
        if let Some(with) = &q.with {
            if with.recursive {
                with.cte_tables
                    .iter()
                    .try_for_each(|c| no_growth(&c.query))?;
            }
            let names: Vec<Folded> = with
                .cte_tables
                .iter()
                .map(|c| self.fold(&c.alias.name))
                .collect();
            for cte in &with.cte_tables {
                for c in &cte.alias.columns {
                    let f = self.fold(&c.name);
                    self.defined.aliases.push(f);
                }
            }
            self.defined.derived.extend(names.iter().cloned());
            for (i, cte) in with.cte_tables.iter().enumerate() {
                if cte.from.is_some() {
                    return Err(unsupported("this WITH form"));
                }
                // A CTE body sees the CTEs before it, and itself when the
                // WITH is RECURSIVE. PostgreSQL lets a RECURSIVE body see
                // later ones too; treating those as tables is the safe
                // side (they must then be allowed tables).
                let upto = if with.recursive { i + 1 } else { i };
                let me: *const Query = &*cte.query;
                self.cte_bodies.push((me, names[..upto].to_vec()));
            }
            self.scopes.push(Scope {
                names,
                barrier: false,
            });
            pushed += 1;
        }
        self.pushed.push(pushed);
        Ok(())
    }

    fn select(&self, s: &Select) -> Result<(), ToolError> {
        if s.into.is_some() {
            return Err(ToolError::denied(
                "SELECT INTO is not allowed: it creates a table",
            ));
        }
        let plain = s.optimizer_hints.is_empty()
            && s.select_modifiers.is_none()
            && s.top.is_none()
            && s.exclude.is_none()
            && s.lateral_views.is_empty()
            && s.prewhere.is_none()
            && s.connect_by.is_empty()
            && s.cluster_by.is_empty()
            && s.distribute_by.is_empty()
            && s.sort_by.is_empty()
            && s.qualify.is_none()
            && s.value_table_mode.is_none()
            && matches!(s.flavor, SelectFlavor::Standard);
        if !plain {
            return Err(unsupported("this SELECT clause"));
        }
        match &s.group_by {
            GroupByExpr::Expressions(_, modifiers) if modifiers.is_empty() => {}
            _ => return Err(unsupported("this GROUP BY form (ALL, ROLLUP, CUBE, ...)")),
        }
        let default_opts = WildcardAdditionalOptions::default();
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(o) | SelectItem::QualifiedWildcard(_, o)
                    if *o != default_opts =>
                {
                    return Err(unsupported("`*` with EXCEPT/REPLACE/EXCLUDE options"));
                }
                SelectItem::ExprWithAliases { .. } => {
                    return Err(unsupported("several aliases for one expression"));
                }
                _ => {}
            }
        }
        for t in &s.from {
            check_joins(t)?;
        }
        Ok(())
    }

    /// Records the names a FROM item defines.
    fn define(&mut self, t: &TableFactor) {
        let alias = match t {
            TableFactor::Table { alias, .. }
            | TableFactor::Derived { alias, .. }
            | TableFactor::NestedJoin { alias, .. } => alias.as_ref(),
            _ => None,
        };
        if let Some(a) = alias {
            for c in &a.columns {
                let f = self.fold(&c.name);
                self.defined.aliases.push(f);
            }
        }
        let alias = alias.map(|a| self.fold(&a.name));
        match t {
            TableFactor::Table { name, .. } => {
                let last = match name.0.last() {
                    Some(ObjectNamePart::Identifier(i)) => Some(self.fold(i)),
                    _ => None,
                };
                let cte = name.0.len() == 1 && last.as_ref().is_some_and(|l| self.is_cte(l));
                let names = alias.into_iter().chain(last);
                if cte {
                    self.defined.derived.extend(names);
                } else {
                    self.defined.base.extend(names);
                }
            }
            TableFactor::Derived { .. } => self.defined.derived.extend(alias),
            _ => {}
        }
    }

    fn table_factor(&self, t: &TableFactor) -> Result<(), ToolError> {
        match t {
            TableFactor::Table {
                name,
                args,
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_hints,
                alias: _,
            } => {
                if args.is_some() {
                    return Err(table_function(&name.to_string()));
                }
                if !with_hints.is_empty()
                    || version.is_some()
                    || *with_ordinality
                    || !partitions.is_empty()
                    || json_path.is_some()
                    || sample.is_some()
                    || !index_hints.is_empty()
                {
                    return Err(unsupported("this table option (hints, sampling, ...)"));
                }
                Ok(())
            }
            TableFactor::Derived { sample: None, .. } => Ok(()),
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => check_joins(table_with_joins),
            TableFactor::Function { name, .. } => Err(table_function(&name.to_string())),
            TableFactor::UNNEST { .. } => Err(table_function("UNNEST")),
            TableFactor::JsonTable { .. } | TableFactor::OpenJsonTable { .. } => {
                Err(table_function("JSON_TABLE"))
            }
            TableFactor::TableFunction { .. } => Err(table_function("TABLE(...)")),
            TableFactor::XmlTable { .. } => Err(table_function("XMLTABLE")),
            _ => Err(unsupported(
                "this FROM item (PIVOT, MATCH_RECOGNIZE, sampling, ...)",
            )),
        }
    }

    /// On PostgreSQL, every name used as a value must be a column of the
    /// tables the tool may use or a name the statement defines. PostgreSQL
    /// reads `t.f`, when `t` has no column `f`, as the call `f(t)` (so
    /// `c.to_json`, `c.pg_column_size` or a user function would bypass the
    /// function allow-list), and a bare table name or alias as its whole
    /// row. Runs after the visitor, when every alias is known.
    fn check_columns(&self, statement: &Statement) -> Result<(), ToolError> {
        if self.dialect != Dialect::Postgres {
            return Ok(());
        }
        match Visit::visit(statement, &mut ColumnPass(self)) {
            ControlFlow::Break(e) => Err(e),
            ControlFlow::Continue(()) => Ok(()),
        }
    }

    /// `t.*` as a select item expands `t`'s columns; `t` must be a FROM
    /// item (`t.f.*` would expand the result of `f(t)`).
    fn select_items(&self, items: &[SelectItem]) -> Result<(), ToolError> {
        for item in items {
            if let SelectItem::QualifiedWildcard(
                SelectItemQualifiedWildcardKind::ObjectName(n),
                _,
            ) = item
            {
                let relation = match n.0.last() {
                    Some(ObjectNamePart::Identifier(i)) => {
                        let f = self.fold(i);
                        self.defined.base.contains(&f) || self.defined.derived.contains(&f)
                    }
                    _ => false,
                };
                if !relation {
                    return Err(ToolError::new(
                        ErrorType::InvalidColumn,
                        format!(
                            "`{}.*`: `.*` may only follow a table name or alias of the FROM clause",
                            clip(&n.to_string())
                        ),
                    )
                    .suggest(self.columns_hint()));
                }
            }
        }
        Ok(())
    }

    /// `*` or `t.*` inside an expression (not as a select item or in
    /// `count(...)`): on PostgreSQL a whole-row value.
    fn whole_row(&self, shown: &str) -> ToolError {
        ToolError::new(
            ErrorType::InvalidColumn,
            format!(
                "`{}` is a whole row, which cannot be used as a value",
                clip(shown)
            ),
        )
        .suggest(format!(
            "Name the columns you need, or use `*` only as a select item. {}",
            self.columns_hint()
        ))
    }

    fn is_column(&self, i: &Ident) -> bool {
        is_column(self.dialect, self.policy.columns, i)
    }

    fn bare_name(&self, i: &Ident) -> Result<(), ToolError> {
        // `DEFAULT` in VALUES and SET: a keyword, never a column or call.
        if self.is_column(i) || (i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
        {
            return Ok(());
        }
        let f = self.fold(i);
        let relation = self.defined.base.contains(&f) || self.defined.derived.contains(&f);
        if relation {
            return Err(ToolError::new(
                ErrorType::InvalidColumn,
                format!(
                    "`{}` is a table or alias, not a column: a whole row cannot be used as a value",
                    clip(&i.to_string())
                ),
            )
            .suggest(format!(
                "Name the columns you need, e.g. {}.id. {}",
                clip(&i.to_string()),
                self.columns_hint()
            )));
        }
        if self.defined.aliases.contains(&f) {
            return Ok(());
        }
        Err(self.unknown_column(&i.to_string(), i))
    }

    fn qualified_name(&self, parts: &[Ident]) -> Result<(), ToolError> {
        let (Some(last), Some(qualifier)) = (parts.last(), parts.len().checked_sub(2)) else {
            return Ok(());
        };
        if self.is_column(last) {
            return Ok(());
        }
        // An output name of a CTE or derived table, qualified by its name.
        let q = self.fold(&parts[qualifier]);
        if parts.len() == 2
            && self.defined.derived.contains(&q)
            && !self.defined.base.contains(&q)
            && self.defined.aliases.contains(&self.fold(last))
        {
            return Ok(());
        }
        let full = parts
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(".");
        Err(self.unknown_column(&full, last))
    }

    fn unknown_column(&self, shown: &str, last: &Ident) -> ToolError {
        let mut message = format!(
            "column `{}` does not exist in the tables this tool can use",
            clip(shown)
        );
        let folded = self.fold(last);
        if let Some(c) = self
            .policy
            .columns
            .iter()
            .find(|c| c.eq_ignore_ascii_case(&last.value) && **c != folded)
        {
            message.push_str(&format!(
                "; names are case-sensitive in double quotes: write \"{}\"",
                clip(&c.replace('"', "\"\""))
            ));
        }
        ToolError::new(ErrorType::InvalidColumn, message).suggest(format!(
            "{} Name computed values with AS to refer to them.",
            self.columns_hint()
        ))
    }

    fn columns_hint(&self) -> String {
        const SHOWN: usize = 60;
        let cols = self.policy.columns;
        if cols.is_empty() {
            return "No columns are available to this tool.".to_string();
        }
        let mut list = cols
            .iter()
            .take(SHOWN)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        if cols.len() > SHOWN {
            list.push_str(", ...");
        }
        format!("Columns of the tables you can use: {list}.")
    }

    fn expr(&self, e: &Expr) -> Result<(), ToolError> {
        match e {
            Expr::Identifier(i) => {
                // PostgreSQL reads these bare keywords as function calls.
                if self.dialect == Dialect::Postgres
                    && i.quote_style.is_none()
                    && PG_SPECIAL_IDENTIFIERS.contains(&i.value.to_ascii_lowercase().as_str())
                {
                    return Err(function_refusal(&i.value));
                }
                Ok(())
            }
            Expr::CompoundIdentifier(_)
            | Expr::Wildcard(_)
            | Expr::QualifiedWildcard(..)
            | Expr::IsFalse(_)
            | Expr::IsNotFalse(_)
            | Expr::IsTrue(_)
            | Expr::IsNotTrue(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::IsDistinctFrom(..)
            | Expr::IsNotDistinctFrom(..)
            | Expr::InList { .. }
            | Expr::InSubquery { .. }
            | Expr::Between { .. }
            | Expr::Nested(_)
            | Expr::Value(_)
            | Expr::Exists { .. }
            | Expr::Subquery(_)
            | Expr::Case { .. }
            | Expr::Tuple(_)
            | Expr::Extract { .. }
            | Expr::Position { .. }
            | Expr::Substring { .. } => Ok(()),
            Expr::Like { any: false, .. } | Expr::ILike { any: false, .. } => Ok(()),
            Expr::Trim {
                trim_characters: None,
                ..
            } => Ok(()),
            Expr::Ceil { field, .. } | Expr::Floor { field, .. } => match field {
                CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => Ok(()),
                _ => Err(unsupported("CEIL/FLOOR with a unit or scale")),
            },
            Expr::BinaryOp { op, .. } => {
                use sqlparser::ast::BinaryOperator as B;
                match op {
                    B::Plus
                    | B::Minus
                    | B::Multiply
                    | B::Divide
                    | B::Modulo
                    | B::StringConcat
                    | B::Gt
                    | B::Lt
                    | B::GtEq
                    | B::LtEq
                    | B::Eq
                    | B::NotEq
                    | B::And
                    | B::Or => Ok(()),
                    other => Err(ToolError::denied(format!(
                        "operator `{}` is not allowed",
                        clip(&other.to_string())
                    ))),
                }
            }
            Expr::UnaryOp { op, .. } => match op {
                UnaryOperator::Plus | UnaryOperator::Minus | UnaryOperator::Not => Ok(()),
                other => Err(ToolError::denied(format!(
                    "operator `{other}` is not allowed"
                ))),
            },
            Expr::Cast {
                kind: CastKind::Cast | CastKind::DoubleColon,
                data_type,
                format: None,
                ..
            } => {
                if cast_type_allowed(data_type) {
                    match char_length(data_type) {
                        Some(n) if n > MAX_CAST_LENGTH => Err(ToolError::denied(format!(
                            "casts to `{}` are not allowed: the longest char/varchar length is {MAX_CAST_LENGTH}",
                            clip(&data_type.to_string())
                        ))
                        .suggest("Cast to text, which has no length.")),
                        _ => Ok(()),
                    }
                } else {
                    Err(ToolError::denied(format!(
                        "casts to `{}` are not allowed; allowed: {}",
                        clip(&data_type.to_string()),
                        CAST_TYPES
                    )))
                }
            }
            Expr::TypedString(ts) => {
                let temporal = matches!(
                    ts.data_type,
                    DataType::Date | DataType::Time(..) | DataType::Timestamp(..)
                );
                if temporal && !ts.uses_odbc_syntax {
                    Ok(())
                } else {
                    Err(ToolError::denied(format!(
                        "typed literals of type `{}` are not allowed",
                        clip(&ts.data_type.to_string())
                    )))
                }
            }
            Expr::Interval(_) => Ok(()),
            Expr::Function(f) => self.function(f),
            other => Err(ToolError::denied(format!(
                "{} not allowed",
                expr_kind(other)
            ))),
        }
    }

    fn function(&self, f: &Function) -> Result<(), ToolError> {
        let ident = match f.name.0.as_slice() {
            [ObjectNamePart::Identifier(i)] => i,
            _ => {
                return Err(ToolError::denied(format!(
                    "function `{}` is not allowed: schema-qualified functions are refused",
                    clip(&f.name.to_string())
                )));
            }
        };
        // Quoted names are matched exactly (PostgreSQL looks them up
        // case-sensitively); unquoted ones case-insensitively.
        let name = if ident.quote_style.is_some() {
            ident.value.clone()
        } else {
            ident.value.to_ascii_lowercase()
        };
        let name = name.as_str();
        let is_aggregate = AGGREGATE_FUNCTIONS.contains(&name)
            || (self.dialect == Dialect::Postgres && POSTGRES_FUNCTIONS.contains(&name));
        let is_window = WINDOW_FUNCTIONS.contains(&name);
        let allowed = is_aggregate
            || is_window
            || SCALAR_FUNCTIONS.contains(&name)
            || match self.dialect {
                Dialect::Postgres => POSTGRES_FUNCTIONS.contains(&name),
                Dialect::Sqlite => SQLITE_FUNCTIONS.contains(&name),
            };
        if !allowed {
            return Err(function_refusal(&ident.value));
        }
        if f.uses_odbc_syntax
            || !matches!(f.parameters, FunctionArguments::None)
            || !f.within_group.is_empty()
            || f.null_treatment.is_some()
        {
            return Err(unsupported("this function call syntax"));
        }
        if f.over.is_some() && !(is_aggregate || is_window) {
            return Err(ToolError::denied(format!(
                "`{name}` cannot be used as a window function"
            )));
        }
        if is_window && f.over.is_none() {
            return Err(ToolError::invalid_input(format!(
                "`{name}` needs an OVER (...) clause"
            )));
        }
        if f.filter.is_some() && !is_aggregate {
            return Err(unsupported("FILTER on a non-aggregate function"));
        }
        match &f.args {
            FunctionArguments::None => {
                if !NILADIC_FUNCTIONS.contains(&name) {
                    return Err(function_refusal(&ident.value));
                }
            }
            FunctionArguments::Subquery(_) => {
                return Err(unsupported("a subquery as the only function argument"));
            }
            FunctionArguments::List(list) => {
                if list.duplicate_treatment == Some(DuplicateTreatment::Distinct) && !is_aggregate {
                    return Err(unsupported("DISTINCT in a non-aggregate call"));
                }
                for c in &list.clauses {
                    if !matches!(c, FunctionArgumentClause::OrderBy(_)) || !is_aggregate {
                        return Err(unsupported("this clause inside a function call"));
                    }
                }
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(_)) => {}
                        FunctionArg::Unnamed(
                            FunctionArgExpr::Wildcard | FunctionArgExpr::QualifiedWildcard(_),
                        ) if name == "count" => {}
                        _ => return Err(unsupported("named arguments and `*` in this call")),
                    }
                }
            }
        }
        Ok(())
    }
}

/// Bare keywords PostgreSQL evaluates as functions: they reveal the user,
/// schema or database and are not needed to read data.
const PG_SPECIAL_IDENTIFIERS: &[&str] = &[
    "current_user",
    "session_user",
    "user",
    "current_role",
    "current_schema",
    "current_catalog",
    "system_user",
];

const CAST_TYPES: &str = "integer, bigint, smallint, numeric/decimal, real, double precision, \
text, varchar, char, boolean, date, timestamp, time";

/// The types a CAST may target: plain scalar types whose input functions
/// only parse text.
fn cast_type_allowed(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int(_)
            | DataType::Integer(_)
            | DataType::Int2(_)
            | DataType::Int4(_)
            | DataType::Int8(_)
            | DataType::BigInt(_)
            | DataType::SmallInt(_)
            | DataType::Numeric(_)
            | DataType::Decimal(_)
            | DataType::Real
            | DataType::Float4
            | DataType::Float8
            | DataType::Float(_)
            | DataType::DoublePrecision
            | DataType::Text
            | DataType::Varchar(_)
            | DataType::CharacterVarying(_)
            | DataType::CharVarying(_)
            | DataType::Char(_)
            | DataType::Character(_)
            | DataType::Bool
            | DataType::Boolean
            | DataType::Date
            | DataType::Timestamp(..)
            | DataType::Time(..)
    )
}

/// The declared length of a `char`/`varchar` type (`MAX` as the largest).
fn char_length(t: &DataType) -> Option<u64> {
    match t {
        DataType::Varchar(l)
        | DataType::CharacterVarying(l)
        | DataType::CharVarying(l)
        | DataType::Char(l)
        | DataType::Character(l) => match l.as_ref()? {
            CharacterLength::IntegerLength { length, .. } => Some(*length),
            CharacterLength::Max => Some(u64::MAX),
        },
        _ => None,
    }
}

fn all_functions_hint() -> String {
    format!(
        "Allowed functions: {}, {}; window: {}; PostgreSQL only: {}; SQLite only: {}.",
        AGGREGATE_FUNCTIONS.join(", "),
        SCALAR_FUNCTIONS.join(", "),
        WINDOW_FUNCTIONS.join(", "),
        POSTGRES_FUNCTIONS.join(", "),
        SQLITE_FUNCTIONS.join(", ")
    )
}

fn function_refusal(name: &str) -> ToolError {
    ToolError::denied(format!("function `{}` is not allowed", clip(name)))
        .suggest(all_functions_hint())
}

fn table_function(name: &str) -> ToolError {
    ToolError::denied(format!(
        "table functions such as `{}` are not allowed in FROM",
        clip(name)
    ))
    .suggest("Read from the tables you can use, or from subqueries over them.")
}

/// The kind of a refused expression, for the message ("... not allowed").
fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::Cast { .. } | Expr::Convert { .. } => {
            "TRY_CAST, SAFE_CAST, CONVERT and formatted casts are"
        }
        Expr::Collate { .. } => "COLLATE is",
        Expr::Array(_) | Expr::AnyOp { .. } | Expr::AllOp { .. } | Expr::InUnnest { .. } => {
            "arrays and ANY/ALL are"
        }
        Expr::JsonAccess { .. } | Expr::CompoundFieldAccess { .. } => {
            "JSON, array and field access is"
        }
        Expr::SimilarTo { .. } | Expr::RLike { .. } => "regular expressions are",
        Expr::Like { .. } | Expr::ILike { .. } => "LIKE ANY/ALL is",
        Expr::AtTimeZone { .. } => "AT TIME ZONE is",
        Expr::Overlay { .. } => "OVERLAY is",
        Expr::Trim { .. } => "TRIM with a list of characters is",
        Expr::IsUnknown(_) | Expr::IsNotUnknown(_) => "IS UNKNOWN is",
        Expr::IsJson { .. } | Expr::IsNormalized { .. } => "IS JSON / IS NORMALIZED is",
        Expr::GroupingSets(_) | Expr::Cube(_) | Expr::Rollup(_) => {
            "GROUPING SETS, CUBE and ROLLUP are"
        }
        Expr::Struct { .. } | Expr::Map(_) | Expr::Dictionary(_) | Expr::Named { .. } => {
            "struct and map values are"
        }
        Expr::MatchAgainst { .. } => "MATCH ... AGAINST is",
        Expr::Lambda(_) => "lambda functions are",
        Expr::Prefixed { .. } => "prefixed literals are",
        _ => "this kind of expression is",
    }
}

/// Only plain queries may appear as a query body: no INSERT/UPDATE/DELETE/
/// MERGE (data-modifying CTEs, `WITH ... DELETE`) and no `TABLE name`.
fn check_set_expr(body: &SetExpr) -> Result<(), ToolError> {
    match body {
        SetExpr::Select(_) | SetExpr::Query(_) | SetExpr::Values(_) => Ok(()),
        SetExpr::SetOperation { left, right, .. } => {
            check_set_expr(left)?;
            check_set_expr(right)
        }
        SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) => {
            Err(nested_write())
        }
        SetExpr::Table(_) => Err(unsupported("`TABLE name`; write SELECT * FROM name")),
    }
}

fn nested_write() -> ToolError {
    ToolError::denied(
        "data-modifying statements inside a query (WITH ... INSERT/UPDATE/DELETE) are not allowed",
    )
}

fn check_joins(t: &TableWithJoins) -> Result<(), ToolError> {
    for j in &t.joins {
        let constraint = match &j.join_operator {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c)
            | JoinOperator::CrossJoin(c) => c,
            _ => return Err(unsupported("this kind of join")),
        };
        if j.global {
            return Err(unsupported("GLOBAL joins"));
        }
        if !matches!(
            constraint,
            JoinConstraint::On(_)
                | JoinConstraint::Using(_)
                | JoinConstraint::Natural
                | JoinConstraint::None
        ) {
            return Err(unsupported("this join condition"));
        }
    }
    Ok(())
}

/// The PostgreSQL column check over a checked statement (see
/// [`Checker::check_columns`]).
struct ColumnPass<'c, 'p>(&'c Checker<'p>);

impl Visitor for ColumnPass<'_, '_> {
    type Break = ToolError;

    fn pre_visit_statement(&mut self, s: &Statement) -> ControlFlow<ToolError> {
        let returning = match s {
            Statement::Insert(i) => i.returning.as_deref(),
            Statement::Update(u) => u.returning.as_deref(),
            Statement::Delete(d) => d.returning.as_deref(),
            _ => None,
        };
        brk(self.0.select_items(returning.unwrap_or_default()))
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<ToolError> {
        brk(self.0.select_items(&s.projection))
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<ToolError> {
        brk(match e {
            Expr::Identifier(i) => self.0.bare_name(i),
            Expr::CompoundIdentifier(parts) => self.0.qualified_name(parts),
            Expr::Wildcard(_) | Expr::QualifiedWildcard(..) => {
                Err(self.0.whole_row(&e.to_string()))
            }
            _ => Ok(()),
        })
    }
}

fn brk(r: Result<(), ToolError>) -> ControlFlow<ToolError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

impl VisitorMut for Checker<'_> {
    type Break = ToolError;

    fn pre_visit_statement(&mut self, s: &mut Statement) -> ControlFlow<ToolError> {
        self.statements += 1;
        if self.statements > 1 {
            return ControlFlow::Break(nested_write());
        }
        // The INSERT target is no FROM item, but RETURNING can name it.
        if let Statement::Insert(i) = s {
            if let TableObject::TableName(name) = &i.table
                && let Some(ObjectNamePart::Identifier(last)) = name.0.last()
            {
                let f = self.fold(last);
                self.defined.base.push(f);
            }
            if let Some(a) = &i.table_alias {
                let f = self.fold(&a.alias);
                self.defined.base.push(f);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<ToolError> {
        brk(self.query(q))
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<ToolError> {
        let n = self.pushed.pop().unwrap_or(0);
        for _ in 0..n {
            self.scopes.pop();
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &mut Select) -> ControlFlow<ToolError> {
        for item in &s.projection {
            if let SelectItem::ExprWithAlias { alias, .. } = item {
                let f = self.fold(alias);
                self.defined.aliases.push(f);
            }
        }
        brk(self.select(s))
    }

    fn pre_visit_relation(&mut self, r: &mut ObjectName) -> ControlFlow<ToolError> {
        brk(self.relation(r))
    }

    fn pre_visit_table_factor(&mut self, t: &mut TableFactor) -> ControlFlow<ToolError> {
        self.define(t);
        brk(self.table_factor(t))
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<ToolError> {
        brk(self.expr(e))
    }

    fn pre_visit_value(&mut self, v: &mut ValueWithSpan) -> ControlFlow<ToolError> {
        brk(match &v.value {
            Value::Number(_, false)
            | Value::SingleQuotedString(_)
            | Value::Boolean(_)
            | Value::Null => Ok(()),
            Value::Placeholder(_) => Err(ToolError::denied("placeholders are not allowed")),
            _ => Err(ToolError::denied(
                "only plain numbers, 'single-quoted' strings, TRUE, FALSE and NULL are allowed as literals",
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let e =
                check_with(d, sql, allow_writes).expect_err(&format!("{d:?} must refuse {sql:?}"));
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

        refused("SELECT * FROM users LIMIT -1", ErrorType::InvalidInput);
        refused(
            "SELECT * FROM users LIMIT (SELECT 1)",
            ErrorType::InvalidInput,
        );
        refused("SELECT * FROM users LIMIT 1+1", ErrorType::InvalidInput);
        refused("SELECT * FROM users LIMIT NULL", ErrorType::InvalidInput);
        refused("SELECT * FROM users LIMIT '5'", ErrorType::InvalidInput);
        refused("SELECT * FROM users LIMIT 1e9", ErrorType::InvalidInput);
        refused(
            "SELECT * FROM users LIMIT 5 OFFSET -1",
            ErrorType::InvalidInput,
        );
        let e = lite("SELECT * FROM users LIMIT -1, 5").unwrap_err();
        assert_eq!(e.error_type, ErrorType::InvalidInput);
        let e = pg("SELECT * FROM users LIMIT 99999999999999999999999").unwrap_err();
        assert_eq!(e.error_type, ErrorType::InvalidInput);
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
        let c = pg(
            "SELECT * FROM users u JOIN orders o ON o.user_id = u.id JOIN users u2 ON u2.id = u.id",
        )
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
        refused(";", ErrorType::InvalidInput);
        refused("", ErrorType::InvalidInput);
        refused("   ", ErrorType::InvalidInput);
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
            pg_rw("INSERT INTO users (id) SELECT id FROM orders ON CONFLICT (id) DO NOTHING")
                .is_ok()
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
        refused(&long, ErrorType::InvalidInput);
        refused("SELECT 1\0", ErrorType::InvalidInput);
        refused("SELECT\u{8} 1", ErrorType::InvalidInput);
        let deep = format!("SELECT {}1{}", "(".repeat(100), ")".repeat(100));
        refused(&deep, ErrorType::InvalidInput);
        let deep_q = format!(
            "SELECT * FROM {}users{}",
            "(SELECT * FROM ".repeat(60),
            ") s".repeat(60)
        );
        refused(&deep_q, ErrorType::InvalidInput);
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
                        ErrorType::PermissionDenied
                            | ErrorType::InvalidTable
                            | ErrorType::InvalidInput
                            | ErrorType::SyntaxError
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
                        ErrorType::PermissionDenied
                            | ErrorType::InvalidTable
                            | ErrorType::InvalidInput
                            | ErrorType::SyntaxError
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
        let e = refused(&chain, ErrorType::InvalidInput);
        assert!(e.message.contains("tokens"), "{}", e.message);
        let just_over = format!("SELECT {}1", "1+".repeat(MAX_STATEMENT_TOKENS / 2));
        refused(&just_over, ErrorType::InvalidInput);
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
}

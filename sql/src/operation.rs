//! One call of a SQL tool, from request to response: arguments checked,
//! the table resolved against the live schema and the tool's allow and deny
//! lists, the statement written by us, run with the tool's limits, and the
//! outcome (or the error) in the tools' response shape.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::catalog::{COUNT_CAP, RelationKind};
use super::database::{Database, Limits, MAX_ANSWER_BYTES, Outcome, Session};
use super::filter::Filter;
use super::names::{check_identifier, parse_columns, parse_order_by, parse_table_list};
use super::request::{HARD_MAX_ROWS, Request, ToolOptions};
use super::response::{ErrorType, Reason, ToolError};
use super::schema::{Column, ColumnKind, Dialect, Table};
use super::statement::{StatementPolicy, check_statement};
use super::transaction;
use super::writer::{Bind, SqlWriter, clip};

/// Most rows one insert call adds.
pub const MAX_INSERT_ROWS: usize = 1000;
/// Most placeholders in one statement (SQLite allows 32,766, PostgreSQL 65,535).
const MAX_BINDS: usize = 30_000;
/// Most rows an offset may skip.
const MAX_OFFSET: i64 = 1_000_000;
/// Longest text of any single value the model sends.
const MAX_VALUE_BYTES: usize = 1 << 20;

/// The settings of one call, resolved against the database.
#[derive(Debug, Clone)]
struct Settings {
    allowed: Vec<String>,
    denied: Vec<String>,
    max_rows: usize,
    timeout: Duration,
    schema: String,
    allow_writes: bool,
}

impl Settings {
    fn new(options: &ToolOptions, db: &Database) -> Settings {
        let schema = options.schema.trim();
        Settings {
            allowed: parse_table_list(&options.allowed_tables),
            denied: parse_table_list(&options.denied_tables),
            max_rows: options.max_rows.clamp(1, HARD_MAX_ROWS) as usize,
            timeout: Duration::from_secs(options.timeout.max(1).into()),
            schema: if schema.is_empty() {
                db.default_schema().to_owned()
            } else {
                schema.to_owned()
            },
            allow_writes: options.allow_writes,
        }
    }

    /// Whether the tool may use `table`. Lists match case-insensitively, so
    /// a denied `Secrets` also denies `secrets`.
    fn may_use(&self, table: &str) -> bool {
        let listed = |list: &[String]| list.iter().any(|t| t.eq_ignore_ascii_case(table));
        (self.allowed.is_empty() || listed(&self.allowed)) && !listed(&self.denied)
    }
}

/// Runs `request` on `db` and answers in the tools' response shape. A
/// refused request is an answer too (`success: false`), never an `Err`.
pub async fn run(db: &Database, request: &Request, options: &ToolOptions) -> Value {
    let start = Instant::now();
    let settings = Settings::new(options, db);
    let operation = request.operation();
    let result = match request {
        Request::Transaction(t) => transaction::act(db, &settings.schema, &t.action, t.time_limit)
            .await
            .map(|(action, message)| {
                let mut extra = Map::new();
                extra.insert("action".into(), action.into());
                extra.insert("message".into(), message.into());
                Done::answer(None, Vec::new(), extra, None)
            }),
        _ => execute(db, request, &settings).await,
    };
    match result {
        Ok(done) => {
            let mut out = Map::new();
            out.insert("success".into(), true.into());
            out.insert("operation".into(), operation.into());
            if let Some(table) = done.table {
                out.insert("table".into(), table.into());
            }
            let count = if done.modifies {
                "affectedRows"
            } else {
                "rowCount"
            };
            let kept = done.outcome.rows.len();
            // A read counts the rows it shows; a change counts every row it touched.
            let n = if done.modifies {
                done.outcome.count
            } else {
                kept as u64
            };
            out.insert(count.into(), n.into());
            out.insert(
                "data".into(),
                Value::Array(done.outcome.rows.into_iter().map(Value::Object).collect()),
            );
            out.extend(done.extra);
            out.insert(
                "executionTime".into(),
                format!("{}ms", start.elapsed().as_millis()).into(),
            );
            let mut warnings: Vec<String> = done.note.into_iter().collect();
            if done.outcome.truncated {
                out.insert("truncated".into(), true.into());
                warnings.push(if done.outcome.too_large {
                    format!(
                        "Only the first {kept} rows are shown: an answer holds at most {} MiB. Select fewer or shorter columns, or narrow the filter.",
                        MAX_ANSWER_BYTES >> 20
                    )
                } else {
                    format!(
                        "Only the first {kept} rows are shown; narrow the filter, or page with limit and offset."
                    )
                });
            }
            if !warnings.is_empty() {
                out.insert("warning".into(), warnings.join(" ").into());
            }
            Value::Object(out)
        }
        Err(e) => error_response(operation, &e),
    }
}

/// The tools' error response.
pub fn error_response(operation: &str, e: &ToolError) -> Value {
    let mut out = json!({
        "success": false,
        "operation": operation,
        "error": e.message,
        "errorType": e.error_type,
    });
    if let Some(r) = e.reason {
        out["reason"] = json!(r);
    }
    if let Some(s) = &e.suggestion {
        out["suggestion"] = s.clone().into();
    }
    if let Some(s) = &e.sql_state {
        out["sqlState"] = s.clone().into();
    }
    out
}

/// What a successful call did.
struct Done {
    table: Option<String>,
    modifies: bool,
    outcome: Outcome,
    /// A warning for the answer, whatever the rows.
    note: Option<String>,
    /// Keys of the answer beside `data` (the describe tool's table facts,
    /// the transaction tool's action).
    extra: Map<String, Value>,
}

impl Done {
    /// An answer the tool makes itself, without a statement of the model's:
    /// `rows` (JSON objects) as `data`, and `extra` beside them.
    fn answer(
        table: Option<String>,
        rows: Vec<Value>,
        extra: Map<String, Value>,
        note: Option<String>,
    ) -> Done {
        let rows: Vec<Map<String, Value>> = rows
            .into_iter()
            .filter_map(|r| match r {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .collect();
        Done {
            table,
            modifies: false,
            outcome: Outcome {
                count: rows.len() as u64,
                rows,
                ..Outcome::default()
            },
            note,
            extra,
        }
    }
}

async fn execute(db: &Database, request: &Request, s: &Settings) -> Result<Done, ToolError> {
    let read_only = match request {
        Request::Template(t) => t.read_only,
        Request::Select(_) => true,
        Request::Execute(_) => !s.allow_writes,
        Request::Describe(_) => true,
        Request::Insert(_)
        | Request::Update(_)
        | Request::Delete(_)
        | Request::Upsert(_)
        | Request::Transaction(_) => false,
    };
    // Arguments are checked before any connection is made.
    if let Some(table) = table_argument(request) {
        check_identifier("table", table)?;
    }
    let dialect = db.dialect();
    // Inside the agent run's open transaction on this database: a read is
    // undone whatever it ran, a write kept until the run commits.
    let joined = transaction::in_open(db, &s.schema, s.timeout, read_only, async |session| {
        call(session, dialect, request, s).await
    })
    .await;
    let result = match joined {
        Some(result) => result,
        None => {
            let limits = Limits {
                timeout: s.timeout,
                read_only,
            };
            let mut session = db.session(&s.schema, limits).await?;
            match call(&mut session, dialect, request, s).await {
                Ok(done) => {
                    session.commit().await?;
                    Ok(done)
                }
                Err(e) => {
                    session.rollback().await;
                    Err(e)
                }
            }
        }
    };
    if let Ok(done) = &result
        && done.modifies
    {
        tracing::info!(
            table = done.table.as_deref().unwrap_or(""),
            affected_rows = done.outcome.count,
            "SQL tool changed rows"
        );
    }
    result
}

/// One call's work on `session`: the statement written and run, with its guard.
async fn call(
    session: &mut Session,
    dialect: Dialect,
    request: &Request,
    s: &Settings,
) -> Result<Done, ToolError> {
    if let Request::Describe(r) = request {
        return describe(session, s, &r.table).await;
    }
    let plan = statement(session, dialect, request, s).await?;
    let guard = plan.guard.clone();
    let done = run_plan(session, plan, s.max_rows).await?;
    if let Some(guard) = guard {
        guard.check(session, done.outcome.count).await?;
    }
    Ok(done)
}

/// Statements of one call (several for an insert of rows with different keys).
struct Plan {
    table: Option<String>,
    modifies: bool,
    statements: Vec<(String, Vec<Bind>)>,
    /// Rows to keep when the statement has its own smaller limit.
    keep: Option<usize>,
    /// For an update or delete: the check that it did not touch every row.
    guard: Option<EveryRowGuard>,
    /// A warning for the answer (a limit that was lowered).
    note: Option<String>,
}

/// The last line of defence of update and delete: the static checks catch
/// the usual always-true filters, but `id IS NOT NULL` on a key column
/// matches every row just as well, and only the database knows. After the
/// statement, inside its transaction, the table's rows are counted; if it
/// changed all of them (more than one), the call is rolled back.
#[derive(Debug, Clone)]
struct EveryRowGuard {
    table: String,
    delete: bool,
}

impl EveryRowGuard {
    async fn check(&self, session: &mut Session, affected: u64) -> Result<(), ToolError> {
        if affected <= 1 {
            return Ok(());
        }
        let rows = session.count(&self.table, None).await?;
        // After a delete the count is what is left; after an update, the whole table.
        let every = if self.delete {
            rows == 0
        } else {
            affected >= u64::try_from(rows).unwrap_or(0)
        };
        if !every {
            return Ok(());
        }
        let operation = if self.delete { "delete" } else { "update" };
        Err(ToolError::denied(format!(
            "the filter matched every row of \"{}\" ({affected} rows); {operation} must name the rows it changes, so nothing was changed",
            self.table
        ))
        .suggest("Filter on the rows you mean, e.g. id = 42"))
    }
}

async fn run_plan(session: &mut Session, plan: Plan, max_rows: usize) -> Result<Done, ToolError> {
    let keep = plan.keep.unwrap_or(max_rows);
    let mut outcome = Outcome::default();
    for (sql, binds) in plan.statements {
        let part = session
            .run(sql, binds, keep - outcome.rows.len().min(keep))
            .await?;
        outcome.count += part.count;
        outcome.truncated |= part.truncated;
        outcome.too_large |= part.too_large;
        outcome.rows.extend(part.rows);
    }
    Ok(Done {
        table: plan.table,
        modifies: plan.modifies,
        outcome,
        note: plan.note,
        extra: Map::new(),
    })
}

/// The describe tool: the tables the tool may use, or one of them with its
/// columns, keys, the foreign keys to tables the tool may use, and about
/// how many rows it holds. A table the tool may not use appears nowhere,
/// not even as the target of a foreign key.
async fn describe(session: &mut Session, s: &Settings, name: &str) -> Result<Done, ToolError> {
    if name.trim().is_empty() {
        let rows = session
            .relations()
            .await?
            .into_iter()
            .filter(|(table, _)| s.may_use(table))
            .map(|(table, kind)| json!({"table": table, "type": kind.as_str()}))
            .collect();
        return Ok(Done::answer(None, rows, Map::new(), None));
    }
    let table = resolve(session, s, name).await?;
    let d = session
        .describe(&table.name)
        .await?
        .ok_or_else(|| unknown_table(&table.name))?;
    let rows = d
        .columns
        .iter()
        .map(|c| {
            json!({
                "column": c.name,
                "type": c.sql_type,
                "nullable": c.nullable,
                "default": c.default,
                "primaryKey": d.primary_key.contains(&c.name),
            })
        })
        .collect();
    let foreign: Vec<Value> = d
        .foreign_keys
        .iter()
        .filter(|k| k.schema.as_deref().is_none_or(|schema| schema == s.schema))
        .filter(|k| s.may_use(&k.table))
        .map(|k| json!({"columns": k.columns, "references": {"table": k.table, "columns": k.references}}))
        .collect();
    let mut extra = Map::new();
    extra.insert("type".into(), d.kind.as_str().into());
    extra.insert("primaryKey".into(), json!(d.primary_key));
    extra.insert("uniqueKeys".into(), json!(d.unique));
    extra.insert("foreignKeys".into(), Value::Array(foreign));
    let mut note = None;
    if d.kind == RelationKind::Table {
        let (rows, at_least) = session.approximate_rows(&table.name).await?;
        extra.insert("approximateRows".into(), rows.into());
        if at_least {
            note = Some(format!(
                "The table holds at least {COUNT_CAP} rows; approximateRows stops counting there."
            ));
        }
    }
    Ok(Done::answer(Some(table.name), rows, extra, note))
}

fn table_argument(request: &Request) -> Option<&str> {
    match request {
        Request::Select(r) => Some(&r.table),
        Request::Insert(r) => Some(&r.table),
        Request::Update(r) => Some(&r.table),
        Request::Delete(r) => Some(&r.table),
        Request::Upsert(r) => Some(&r.table),
        // No table: the list of tables.
        Request::Describe(r) => Some(r.table.as_str()).filter(|t| !t.trim().is_empty()),
        Request::Template(_) | Request::Execute(_) | Request::Transaction(_) => None,
    }
}

/// Writes the call's statements from checked arguments.
async fn statement(
    session: &mut Session,
    dialect: Dialect,
    request: &Request,
    s: &Settings,
) -> Result<Plan, ToolError> {
    let plan = |table: &Table, modifies, statements| Plan {
        table: Some(table.name.clone()),
        modifies,
        statements,
        keep: None,
        guard: None,
        note: None,
    };
    let guarded = |table: &Table, delete, statements| Plan {
        guard: Some(EveryRowGuard {
            table: table.name.clone(),
            delete,
        }),
        ..plan(table, true, statements)
    };
    match request {
        Request::Template(t) => Ok(Plan {
            table: None,
            modifies: !t.read_only,
            statements: vec![(template_sql(dialect, t.sql), t.binds.clone())],
            keep: None,
            guard: None,
            note: None,
        }),
        Request::Select(r) => {
            let table = resolve(session, s, &r.table).await?;
            let columns = parse_columns(&table, &r.columns)?;
            let order = parse_order_by(&table, &r.order_by)?;
            // A limit over the cap is lowered to it, and rows past the cap
            // are cut with the `truncated` flag, as past the tool's maximum.
            let cap = i64::from(HARD_MAX_ROWS);
            let (limit, note) = match r.limit {
                None => (s.max_rows as i64, None),
                Some(n) if (1..=cap).contains(&n) => (n, None),
                Some(n) if n > cap => (
                    cap + 1,
                    Some(format!(
                        "The limit {n} is above the most rows a call returns ({cap}); it was lowered to {cap}."
                    )),
                ),
                Some(n) => {
                    return Err(ToolError::malformed(
                        Reason::OutOfRange,
                        format!("limit {n} is out of range: use 1 to {HARD_MAX_ROWS}"),
                    ));
                }
            };
            let offset = match r.offset {
                None => 0,
                Some(n) if (0..=MAX_OFFSET).contains(&n) => n,
                Some(n) => {
                    return Err(ToolError::malformed(
                        Reason::OutOfRange,
                        format!("offset {n} is out of range: use 0 to {MAX_OFFSET}"),
                    ));
                }
            };
            let keep = (limit as usize).min(s.max_rows);
            let mut w = SqlWriter::new(dialect);
            w.push("SELECT ");
            for (i, c) in columns.iter().enumerate() {
                if i > 0 {
                    w.push(", ");
                }
                w.push_ident(&c.name);
            }
            w.push(" FROM ");
            push_table(&mut w, session, &table);
            if !r.filter.trim().is_empty() {
                let filter = Filter::parse(dialect, &table, &r.filter)?;
                w.push(" WHERE ");
                filter.write(&mut w);
            }
            for (i, o) in order.iter().enumerate() {
                w.push(if i == 0 { " ORDER BY " } else { ", " });
                w.push_ident(&o.column.name);
                if o.descending {
                    w.push(" DESC");
                }
            }
            // Asked for more than the tool's maximum: one row past it tells
            // whether rows were cut (the `truncated` flag). A smaller limit
            // is the model's own choice and cuts nothing.
            let fetch = if (limit as usize) > s.max_rows {
                keep + 1
            } else {
                keep
            };
            w.push(&format!(" LIMIT {fetch}"));
            if offset > 0 {
                w.push(&format!(" OFFSET {offset}"));
            }
            let mut p = plan(&table, false, vec![w.finish()]);
            p.keep = Some(keep);
            p.note = note;
            Ok(p)
        }
        Request::Insert(r) => {
            let table = resolve(session, s, &r.table).await?;
            let rows = insert_rows(&r.rows)?;
            let statements = insert_statements(dialect, session, &table, &rows, &[])?;
            Ok(plan(&table, true, statements))
        }
        Request::Upsert(r) => {
            let table = resolve(session, s, &r.table).await?;
            let rows = insert_rows(&r.rows)?;
            let target = conflict_target(session, &table, &r.conflict_columns).await?;
            check_conflict_values(&table, &rows, &target)?;
            let statements = insert_statements(dialect, session, &table, &rows, &target)?;
            Ok(plan(&table, true, statements))
        }
        Request::Update(r) => {
            let table = resolve(session, s, &r.table).await?;
            let filter = required_filter(dialect, &table, &r.filter, "update")?;
            let Value::Object(values) = &r.values else {
                return Err(ToolError::malformed(
                    Reason::Malformed,
                    "values must be a JSON object of column names and new values, e.g. {\"status\": \"shipped\"}",
                ));
            };
            if values.is_empty() {
                return Err(ToolError::malformed(
                    Reason::Empty,
                    "values names no column to change",
                ));
            }
            let mut w = SqlWriter::new(dialect);
            w.push("UPDATE ");
            push_table(&mut w, session, &table);
            w.push(" SET ");
            for (i, (name, value)) in values.iter().enumerate() {
                let column = column(&table, name)?;
                if i > 0 {
                    w.push(", ");
                }
                w.push_ident(&column.name).push(" = ");
                w.push_bind(json_bind(dialect, column, value)?, Some(column));
            }
            w.push(" WHERE ");
            filter.write(&mut w);
            w.push(" RETURNING *");
            Ok(guarded(&table, false, vec![w.finish()]))
        }
        Request::Delete(r) => {
            let table = resolve(session, s, &r.table).await?;
            let filter = required_filter(dialect, &table, &r.filter, "delete")?;
            let mut w = SqlWriter::new(dialect);
            w.push("DELETE FROM ");
            push_table(&mut w, session, &table);
            w.push(" WHERE ");
            filter.write(&mut w);
            w.push(" RETURNING *");
            Ok(guarded(&table, true, vec![w.finish()]))
        }
        Request::Describe(_) | Request::Transaction(_) => {
            unreachable!("the describe and transaction tools write no statement")
        }
        Request::Execute(r) => {
            // The usable tables and every column name of them, each once (on
            // PostgreSQL `t.f` is a function call when `f` is no column),
            // read in one catalog query.
            let mut tables: Vec<String> = Vec::new();
            let mut columns: Vec<String> = Vec::new();
            for (table, column) in session.schema_columns().await? {
                if !s.may_use(&table) {
                    continue;
                }
                if tables.last() != Some(&table) {
                    tables.push(table);
                }
                if !columns.contains(&column) {
                    columns.push(column);
                }
            }
            let checked = check_statement(
                dialect,
                &r.sql,
                &StatementPolicy {
                    schema: &s.schema,
                    tables: &tables,
                    columns: &columns,
                    allow_writes: s.allow_writes,
                    max_rows: s.max_rows as u32,
                },
            )?;
            // An UPDATE or DELETE the model wrote gets the same guard as the tools'.
            let verb = checked.sql.split_whitespace().next().unwrap_or("");
            let delete = verb.eq_ignore_ascii_case("DELETE");
            let guard = match checked.tables.as_slice() {
                [table] if delete || verb.eq_ignore_ascii_case("UPDATE") => Some(EveryRowGuard {
                    table: table.clone(),
                    delete,
                }),
                _ => None,
            };
            Ok(Plan {
                table: (checked.tables.len() == 1).then(|| checked.tables[0].clone()),
                modifies: !checked.read_only,
                statements: vec![(checked.sql, Vec::new())],
                keep: None,
                guard,
                note: None,
            })
        }
    }
}

/// `"schema"."table"` on PostgreSQL, `"table"` on SQLite.
fn push_table(w: &mut SqlWriter, session: &Session, table: &Table) {
    if let Some(schema) = session.schema() {
        w.push_ident(schema).push(".");
    }
    w.push_ident(&table.name);
}

/// The table named `name`, if it exists and the tool may use it. Exact names
/// win; otherwise the only case-insensitive match. Missing and forbidden
/// tables get the same answer, so the model learns nothing about the latter.
async fn resolve(session: &mut Session, s: &Settings, name: &str) -> Result<Table, ToolError> {
    let name = name.trim();
    if s.may_use(name)
        && let Some(table) = session.table(name).await?
    {
        return Ok(table);
    }
    let usable: Vec<String> = session
        .tables()
        .await?
        .into_iter()
        .filter(|t| s.may_use(t))
        .collect();
    let mut same = usable.iter().filter(|t| t.eq_ignore_ascii_case(name));
    if let (Some(t), None) = (same.next(), same.next())
        && t != name
        && let Some(table) = session.table(t).await?
    {
        return Ok(table);
    }
    let err = unknown_table(name);
    Err(if usable.is_empty() {
        err.suggest("This tool cannot use any table; ask the workflow author to allow one")
    } else {
        err.suggest(format!("Available tables: {}", usable.join(", ")))
    })
}

/// What a missing table and one the tool may not use both get.
fn unknown_table(name: &str) -> ToolError {
    ToolError::new(
        ErrorType::InvalidTable,
        format!(
            "Table \"{}\" does not exist or is not available to this tool",
            clip(name)
        ),
    )
}

fn column<'t>(table: &'t Table, name: &str) -> Result<&'t Column, ToolError> {
    table.column(name).ok_or_else(|| {
        ToolError::new(
            ErrorType::InvalidColumn,
            format!(
                "Column \"{}\" does not exist in table \"{}\"",
                clip(name),
                table.name
            ),
        )
        .suggest(format!("Available columns: {}", table.column_list()))
    })
}

/// A filter update and delete must have, and that must not match every row.
fn required_filter(
    dialect: Dialect,
    table: &Table,
    text: &str,
    operation: &str,
) -> Result<Filter, ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::denied(format!(
            "{operation} needs filter conditions that pick the rows, e.g. id = 42"
        ))
        .because(Reason::NoFilter));
    }
    let filter = Filter::parse(dialect, table, text)?;
    if filter.is_always_true() {
        return Err(ToolError::denied(format!(
            "the filter matches every row; {operation} must name the rows it changes"
        ))
        .suggest("Filter on a key column, e.g. id = 42"));
    }
    Ok(filter)
}

/// The rows of an insert: one object or an array of objects.
fn insert_rows(rows: &Value) -> Result<Vec<&Map<String, Value>>, ToolError> {
    let rows: Vec<&Value> = match rows {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![rows],
        Value::String(_) => {
            return Err(ToolError::malformed(
                Reason::Malformed,
                "rows must be JSON (an object or an array of objects), not text",
            ));
        }
        _ => {
            return Err(ToolError::malformed(
                Reason::Malformed,
                "rows must be an object or an array of objects",
            ));
        }
    };
    if rows.is_empty() {
        return Err(ToolError::malformed(
            Reason::Empty,
            "rows is empty: nothing to insert",
        ));
    }
    if rows.len() > MAX_INSERT_ROWS {
        return Err(ToolError::malformed(
            Reason::TooComplex,
            format!(
                "{} rows is too many for one call; insert at most {MAX_INSERT_ROWS}",
                rows.len()
            ),
        ));
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| match row {
            Value::Object(m) if !m.is_empty() => Ok(m),
            _ => Err(ToolError::malformed(
                Reason::Malformed,
                format!("row {i} must be an object of column names and values"),
            )),
        })
        .collect()
}

/// INSERT statements for `rows`: rows with the same keys share a statement
/// (SQLite has no `DEFAULT` in `VALUES`, so a missing key cannot be filled).
/// With a conflict `target` (an upsert), a row whose target columns match
/// a stored row updates that row's other columns instead, on PostgreSQL
/// and SQLite alike (`ON CONFLICT ... DO UPDATE`).
fn insert_statements(
    dialect: Dialect,
    session: &Session,
    table: &Table,
    rows: &[&Map<String, Value>],
    target: &[&Column],
) -> Result<Vec<(String, Vec<Bind>)>, ToolError> {
    type Row<'r> = &'r Map<String, Value>;
    let mut groups: Vec<(Vec<&str>, Vec<Row>)> = Vec::new();
    for row in rows {
        let keys: Vec<&str> = row.keys().map(String::as_str).collect();
        match groups.iter_mut().find(|(k, _)| *k == keys) {
            Some((_, members)) => members.push(row),
            None => groups.push((keys, vec![row])),
        }
    }
    let mut statements = Vec::new();
    for (keys, members) in groups {
        let columns: Vec<&Column> = keys
            .iter()
            .map(|k| column(table, k))
            .collect::<Result<_, _>>()?;
        for chunk in members.chunks((MAX_BINDS / columns.len()).max(1)) {
            let mut w = SqlWriter::new(dialect);
            w.push("INSERT INTO ");
            push_table(&mut w, session, table);
            w.push(" (");
            push_names(&mut w, &columns);
            w.push(") VALUES ");
            for (r, row) in chunk.iter().enumerate() {
                w.push(if r == 0 { "(" } else { ", (" });
                for (i, (c, k)) in columns.iter().zip(&keys).enumerate() {
                    if i > 0 {
                        w.push(", ");
                    }
                    w.push_bind(json_bind(dialect, c, &row[*k])?, Some(c));
                }
                w.push(")");
            }
            if !target.is_empty() {
                w.push(" ON CONFLICT (");
                push_names(&mut w, target);
                w.push(") DO UPDATE SET ");
                let changed: Vec<&Column> = columns
                    .iter()
                    .copied()
                    .filter(|c| !target.iter().any(|t| t.name == c.name))
                    .collect();
                // Nothing but the key: a no-op update, so the stored row is returned.
                let set = if changed.is_empty() {
                    &target[..1]
                } else {
                    &changed[..]
                };
                for (i, c) in set.iter().enumerate() {
                    if i > 0 {
                        w.push(", ");
                    }
                    w.push_ident(&c.name).push(" = excluded.");
                    w.push_ident(&c.name);
                }
            }
            w.push(" RETURNING *");
            statements.push(w.finish());
        }
    }
    Ok(statements)
}

fn push_names(w: &mut SqlWriter, columns: &[&Column]) {
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            w.push(", ");
        }
        w.push_ident(&c.name);
    }
}

/// The upsert tool's `conflictColumns`: columns of `table` that are, as a
/// set, its primary key or one of its unique constraints (checked in the
/// live catalog), in the order given.
async fn conflict_target<'t>(
    session: &mut Session,
    table: &'t Table,
    text: &str,
) -> Result<Vec<&'t Column>, ToolError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "*" {
        return Err(ToolError::malformed(
            Reason::Empty,
            "conflictColumns must name the columns of a primary key or unique constraint, e.g. id",
        ));
    }
    let target = parse_columns(table, text)?;
    let keys = session.keys(&table.name).await?;
    let mut wanted: Vec<&str> = target.iter().map(|c| c.name.as_str()).collect();
    wanted.sort_unstable();
    let unique = keys.all().any(|key| {
        let mut key: Vec<&str> = key.iter().map(String::as_str).collect();
        key.sort_unstable();
        key == wanted
    });
    if unique {
        return Ok(target);
    }
    let keys: Vec<String> = keys.all().map(|k| format!("({})", k.join(", "))).collect();
    let err = ToolError::new(
        ErrorType::InvalidColumn,
        format!(
            "the columns ({}) of table \"{}\" are not its primary key or a unique constraint, so they cannot pick the one row to update",
            target.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
            table.name
        ),
    )
    .because(Reason::NotUnique);
    Err(if keys.is_empty() {
        err.suggest(
            "This table has no primary key or unique constraint: add rows with the insert tool",
        )
    } else {
        err.suggest(format!("Use the columns of one of: {}", keys.join(", ")))
    })
}

/// Every row of an upsert names a value for each conflict column, and no
/// two rows the same values: a NULL never conflicts (the row would be
/// added again), and PostgreSQL refuses to update one row twice in one
/// statement where SQLite would keep the last.
fn check_conflict_values(
    table: &Table,
    rows: &[&Map<String, Value>],
    target: &[&Column],
) -> Result<(), ToolError> {
    let mut seen = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let mut values = vec![&Value::Null; target.len()];
        for (key, value) in row.iter() {
            let named = column(table, key)?;
            if let Some(at) = target.iter().position(|c| c.name == named.name) {
                values[at] = value;
            }
        }
        if let Some(at) = values.iter().position(|v| v.is_null()) {
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!(
                    "row {i} has no value for conflict column \"{}\": every row needs one",
                    target[at].name
                ),
            ));
        }
        if !seen.insert(serde_json::to_string(&values).unwrap_or_default()) {
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!(
                    "row {i} has the same conflict column values as an earlier row: send each row once"
                ),
            ));
        }
    }
    Ok(())
}

/// A JSON value from the model, bound for `column`. On PostgreSQL everything
/// but booleans and nulls goes as text cast to the column's type, so the
/// server's own parser types it (numeric precision is kept); on SQLite
/// numbers bind as numbers. Objects and arrays are refused for columns of
/// scalar kinds; JSON columns (and columns of kinds the tool does not
/// know, which the database checks) get their JSON text.
fn json_bind(dialect: Dialect, column: &Column, value: &Value) -> Result<Bind, ToolError> {
    let text = |s: String| {
        if s.len() > MAX_VALUE_BYTES {
            return Err(ToolError::malformed(
                Reason::TooLong,
                format!(
                    "the value for \"{}\" is longer than {MAX_VALUE_BYTES} bytes",
                    column.name
                ),
            ));
        }
        if s.contains('\0') {
            return Err(ToolError::malformed(
                Reason::ControlCharacter,
                format!("the value for \"{}\" contains a NUL character", column.name),
            ));
        }
        Ok(Bind::Text(s))
    };
    Ok(match (dialect, value) {
        (_, Value::Null) => Bind::Null,
        // Structures go only where the database keeps structure (or checks
        // the value itself, for types the tool does not know).
        (_, Value::Array(_) | Value::Object(_))
            if !matches!(column.kind, ColumnKind::Json | ColumnKind::Other) =>
        {
            return Err(mismatch(
                column,
                "a single value, not a JSON object or array (send JSON as a string to store its text)",
            ));
        }
        (Dialect::Postgres, Value::Bool(b)) if column.kind == ColumnKind::Boolean => Bind::Bool(*b),
        (Dialect::Postgres, Value::Bool(b)) => text(b.to_string())?,
        (Dialect::Sqlite, Value::Bool(b)) => Bind::Int(i64::from(*b)),
        // SQLite stores any value in any column; the column's declared type
        // decides what the model may put there, as PostgreSQL's would.
        (Dialect::Sqlite, Value::String(s)) if !s.is_empty() => match column.kind {
            ColumnKind::Integer => Bind::Int(
                s.trim()
                    .parse()
                    .map_err(|_| mismatch(column, "an integer"))?,
            ),
            ColumnKind::Float | ColumnKind::Numeric => {
                Bind::Float(s.trim().parse().map_err(|_| mismatch(column, "a number"))?)
            }
            ColumnKind::Boolean => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "t" | "1" => Bind::Int(1),
                "false" | "f" | "0" => Bind::Int(0),
                _ => return Err(mismatch(column, "true or false")),
            },
            _ => text(s.clone())?,
        },
        (Dialect::Postgres, Value::Number(n)) => text(n.to_string())?,
        (Dialect::Sqlite, Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Bind::Int(i),
            (None, Some(f)) => Bind::Float(f),
            _ => text(n.to_string())?,
        },
        (_, Value::String(s)) => text(s.clone())?,
        (_, other) => text(other.to_string())?,
    })
}

fn mismatch(column: &Column, expected: &str) -> ToolError {
    ToolError::new(
        ErrorType::ConstraintViolation,
        format!(
            "column \"{}\" is {}: its value must be {expected}",
            column.name, column.sql_type
        ),
    )
    .because(Reason::WrongType)
}

/// A template's SQL in `dialect`: SQLite numbers placeholders `?N`, not `$N`.
fn template_sql(dialect: Dialect, sql: &str) -> String {
    match dialect {
        Dialect::Postgres => sql.to_owned(),
        Dialect::Sqlite => {
            use sqlparser::tokenizer::{Token, Tokenizer};
            let dialect = sqlparser::dialect::PostgreSqlDialect {};
            match Tokenizer::new(&dialect, sql).tokenize() {
                Ok(tokens) => tokens
                    .into_iter()
                    .map(|t| match t {
                        Token::Placeholder(p) if p.starts_with('$') => format!("?{}", &p[1..]),
                        t => t.to_string(),
                    })
                    .collect(),
                // The macro parsed it at compile time; this cannot fail.
                Err(_) => sql.to_owned(),
            }
        }
    }
}

//! The visitor of the execute tool's statement: every relation, table
//! factor, expression, function and literal, in every position, checked
//! against the allow-lists; relations rewritten to their catalog names; on
//! PostgreSQL, every name used as a value checked against the known columns
//! and the aliases the statement defines.

use std::ops::ControlFlow;

use sqlparser::ast::{
    CastKind, CeilFloorKind, CharacterLength, DataType, DateTimeField, DuplicateTreatment, Expr,
    Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments, GroupByExpr,
    Ident, JoinConstraint, JoinOperator, ObjectName, ObjectNamePart, OrderByKind, Query, Select,
    SelectFlavor, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement, TableFactor,
    TableObject, TableWithJoins, UnaryOperator, Value, ValueWithSpan, Visit, Visitor, VisitorMut,
    WildcardAdditionalOptions,
};

use crate::response::{ErrorType, Reason, ToolError};
use crate::schema::Dialect;
use crate::writer::clip;

use super::{
    AGGREGATE_FUNCTIONS, MAX_CAST_LENGTH, NILADIC_FUNCTIONS, POSTGRES_FUNCTIONS, SCALAR_FUNCTIONS,
    SQLITE_FUNCTIONS, StatementPolicy, WINDOW_FUNCTIONS, fold_ident, is_column, no_growth,
    unsupported,
};

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
pub(super) struct Checker<'p> {
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

impl<'p> Checker<'p> {
    /// A checker for one statement under `policy`.
    pub(super) fn new(dialect: Dialect, policy: &'p StatementPolicy<'p>) -> Self {
        Checker {
            dialect,
            policy,
            statements: 0,
            scopes: Vec::new(),
            pushed: Vec::new(),
            cte_bodies: Vec::new(),
            used: Vec::new(),
            defined: Defined::default(),
        }
    }

    /// The tables the statement uses (catalog names), once it is checked.
    pub(super) fn into_tables(self) -> Vec<String> {
        self.used
    }

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
    pub(super) fn check_columns(&self, statement: &Statement) -> Result<(), ToolError> {
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
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!("`{name}` needs an OVER (...) clause"),
            ));
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

pub(super) fn check_joins(t: &TableWithJoins) -> Result<(), ToolError> {
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

pub(super) fn brk(r: Result<(), ToolError>) -> ControlFlow<ToolError> {
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

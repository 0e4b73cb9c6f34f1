//! The filter conditions the model writes for select, update and delete: a
//! `WHERE` clause without the `WHERE` keyword, e.g.
//! `age > 18 AND status = 'active'`.
//!
//! The text is never passed to the database. It is size-checked, tokenized
//! and parsed as exactly one SQL expression by sqlparser, the tree is walked
//! against an allow-list and converted into our own small tree ([`Filter`]),
//! and [`Filter::write`] writes SQL from that tree: identifiers quoted by the
//! writer, every literal a bound parameter, every sub-expression in
//! parentheses. Anything the allow-list does not name is refused, so a
//! construct sqlparser learns to parse tomorrow is refused too.
//!
//! Arithmetic (`+ - * / %`) is refused: filters compare columns with values,
//! and leaving arithmetic out keeps the literal typing (each literal is typed
//! from the column it is compared with) exact. `ILIKE` is accepted on both
//! databases and written as `LIKE` on SQLite, whose `LIKE` already ignores
//! ASCII case.

use sqlparser::ast::{
    BinaryOperator, DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments, ObjectNamePart, UnaryOperator, Value,
};
use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::lexical::{check_text, parser_error, tokenize_checked};
use super::response::{ErrorType, Reason, ToolError};
use super::schema::{Column, ColumnKind, Dialect, Table};
use super::writer::{Bind, SqlWriter, clip};
use truth::{Truth, has_column, truth};

/// Longest filter accepted, in characters.
pub const MAX_FILTER_CHARS: usize = 4096;
/// Most nodes (columns, literals, operators, calls) a filter may have.
pub const MAX_FILTER_NODES: usize = 256;
/// Most values in one `IN (...)` list.
pub const MAX_IN_LIST: usize = 1000;
/// The functions a filter may call (case-insensitive); each is written from
/// this list, never from the model's spelling.
pub const FILTER_FUNCTIONS: &[&str] = &[
    "lower", "upper", "length", "trim", "abs", "round", "coalesce",
];

/// Most significant tokens a filter may have. Bounds the work before the
/// node cap applies: operator chains such as `a=1 AND a=1 AND ...` are built
/// by the parser in a loop, so its recursion limit does not bound them.
const MAX_TOKENS: usize = 2048;
/// The parser's recursion limit: nested parentheses, NOT, function calls.
const RECURSION_LIMIT: usize = 32;
/// Deepest tree our own walk descends into (left-deep AND/OR chains are not
/// limited by the parser's recursion counter).
const MAX_DEPTH: usize = 64;
/// Largest `round(x, n)` precision accepted.
const MAX_ROUND_DIGITS: u32 = 16;
/// Most arguments of `coalesce`.
const MAX_COALESCE_ARGS: usize = 16;

const FILTER_HELP: &str = "Write conditions on this table's columns with =, <>, <, <=, >, >=, \
AND, OR, NOT, IN (...), BETWEEN, LIKE, IS [NOT] NULL and the functions lower, upper, length, \
trim, abs, round, coalesce; values as numbers, 'single-quoted strings', TRUE, FALSE or NULL.";

/// Longest `LIKE` pattern a filter may use (SQLite's connections refuse longer ones too).
pub const MAX_LIKE_PATTERN: usize = 100;

/// A checked filter: our own tree, built only from allowed constructs, with
/// every column resolved against the table. Write it with [`Filter::write`].
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    dialect: Dialect,
    root: Node,
}

/// A node of the checked tree.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// A column of the table (owned, so a filter outlives the schema read).
    Column(Column),
    /// A literal value; always written as a bound parameter.
    Literal(Literal),
    /// `round`'s precision: a small integer we parsed and write ourselves,
    /// because the function needs an `integer` where a bound value would be
    /// typed `bigint` or `text`.
    Digits(u32),
    /// A call of an allowed function.
    Call {
        func: Func,
        args: Vec<Node>,
    },
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Compare {
        left: Box<Node>,
        op: CmpOp,
        right: Box<Node>,
    },
    IsNull {
        expr: Box<Node>,
        negated: bool,
    },
    IsBool {
        expr: Box<Node>,
        value: bool,
        negated: bool,
    },
    InList {
        expr: Box<Node>,
        list: Vec<Node>,
        negated: bool,
    },
    Between {
        expr: Box<Node>,
        low: Box<Node>,
        high: Box<Node>,
        negated: bool,
    },
    Like {
        expr: Box<Node>,
        pattern: Box<Node>,
        escape: Option<String>,
        negated: bool,
        case_insensitive: bool,
    },
}

/// A literal as written; typed only when written, from the column beside it.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Null,
    Bool(bool),
    /// The number's text, with a leading `-` for a negated number.
    Number(String),
    Text(String),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl CmpOp {
    fn sql(self) -> &'static str {
        match self {
            CmpOp::Eq => " = ",
            CmpOp::NotEq => " <> ",
            CmpOp::Lt => " < ",
            CmpOp::LtEq => " <= ",
            CmpOp::Gt => " > ",
            CmpOp::GtEq => " >= ",
        }
    }

    /// The operator that is true exactly when this one is false (for
    /// non-null operands): `a < b OR a >= b` covers every row.
    fn negation(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::NotEq,
            CmpOp::NotEq => CmpOp::Eq,
            CmpOp::Lt => CmpOp::GtEq,
            CmpOp::LtEq => CmpOp::Gt,
            CmpOp::Gt => CmpOp::LtEq,
            CmpOp::GtEq => CmpOp::Lt,
        }
    }
}

/// An allowed function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Lower,
    Upper,
    Length,
    Trim,
    Abs,
    Round,
    Coalesce,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        let f = match name.to_ascii_lowercase().as_str() {
            "lower" => Func::Lower,
            "upper" => Func::Upper,
            "length" => Func::Length,
            "trim" => Func::Trim,
            "abs" => Func::Abs,
            "round" => Func::Round,
            "coalesce" => Func::Coalesce,
            _ => return None,
        };
        Some(f)
    }

    /// The name written into the SQL: from this constant, never the input.
    fn sql_name(self) -> &'static str {
        match self {
            Func::Lower => "lower",
            Func::Upper => "upper",
            Func::Length => "length",
            Func::Trim => "trim",
            Func::Abs => "abs",
            Func::Round => "round",
            Func::Coalesce => "coalesce",
        }
    }
}

impl Filter {
    /// Parses and checks `text` as a filter on `table`.
    ///
    /// Errors: [`ErrorType::SyntaxError`] for oversized input, control
    /// characters, an empty filter or one with too many nodes;
    /// [`ErrorType::SyntaxError`] when it is not one SQL expression;
    /// [`ErrorType::InvalidColumn`] for an unknown column (the suggestion
    /// lists the table's columns); [`ErrorType::PermissionDenied`] for any
    /// construct outside the allow-list, naming it.
    pub fn parse(dialect: Dialect, table: &Table, text: &str) -> Result<Filter, ToolError> {
        check_text(text, MAX_FILTER_CHARS, "filter")?;
        if text.trim().is_empty() {
            return Err(ToolError::malformed(Reason::Empty, "empty filter"));
        }
        let tokens = tokenize_checked(dialect, text, "filters", false)?;
        let significant = tokens
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .count();
        if significant > MAX_TOKENS {
            return Err(ToolError::malformed(
                Reason::TooComplex,
                format!("filter is too complex: more than {MAX_TOKENS} tokens"),
            ));
        }
        let expr = parse_one_expr(dialect, tokens)?;
        let mut builder = Builder { table, nodes: 0 };
        let root = builder.node(&expr, 0)?;
        Ok(Filter { dialect, root })
    }

    /// Whether the filter matches every row, as far as its structure shows:
    /// it references no column at all (`1=1`, `'a'='a'`, `TRUE`,
    /// `NOT FALSE`), or it contains an OR with a branch that is always true
    /// (`id > 1 OR 1=1`), a column compared with itself (`id = id`,
    /// `id >= id`), a condition OR'ed with its complement
    /// (`x IS NULL OR x IS NOT NULL`, `a = 1 OR a <> 1`, `p OR NOT p`), or
    /// `col LIKE '%'`. Sub-expressions without columns are constant-folded;
    /// one that cannot be folded counts as true.
    ///
    /// This is conservative, not complete: it catches the usual tricks, but
    /// cannot decide every tautology (`id > 0 OR id < 10`,
    /// `id IS NOT NULL` on a primary key). Update and delete refuse filters
    /// for which it returns true.
    pub fn is_always_true(&self) -> bool {
        !has_column(&self.root) || truth(&self.root) == Truth::True
    }

    /// Appends the filter's SQL to `w`: columns quoted by the writer, every
    /// literal a placeholder bound to a value typed from the column it is
    /// compared with, every sub-expression in parentheses.
    pub fn write(&self, w: &mut SqlWriter) {
        self.write_node(&self.root, None, w);
    }

    fn write_node(&self, node: &Node, ctx: Option<&Column>, w: &mut SqlWriter) {
        match node {
            Node::Column(c) => {
                w.push_ident(&c.name);
            }
            Node::Literal(l) => {
                let bind = self.bind(l, ctx);
                w.push_bind(bind, ctx);
            }
            Node::Digits(d) => {
                w.push(&d.to_string());
            }
            Node::Call { func, args } => {
                // coalesce's arguments share one type: a literal among them
                // is typed like the column beside it.
                let arg_ctx = match func {
                    Func::Coalesce => context_of(node),
                    _ => None,
                };
                w.push(func.sql_name()).push("(");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        w.push(", ");
                    }
                    self.write_node(a, arg_ctx, w);
                }
                w.push(")");
            }
            Node::Not(inner) => {
                w.push("(NOT ");
                self.write_node(inner, None, w);
                w.push(")");
            }
            Node::And(a, b) | Node::Or(a, b) => {
                let op = if matches!(node, Node::And(..)) {
                    " AND "
                } else {
                    " OR "
                };
                w.push("(");
                self.write_node(a, None, w);
                w.push(op);
                self.write_node(b, None, w);
                w.push(")");
            }
            Node::Compare { left, op, right } => {
                w.push("(");
                self.write_node(left, context_of(right), w);
                w.push(op.sql());
                self.write_node(right, context_of(left), w);
                w.push(")");
            }
            Node::IsNull { expr, negated } => {
                w.push("(");
                self.write_node(expr, None, w);
                w.push(if *negated {
                    " IS NOT NULL)"
                } else {
                    " IS NULL)"
                });
            }
            Node::IsBool {
                expr,
                value,
                negated,
            } => {
                w.push("(");
                self.write_node(expr, None, w);
                w.push(match (negated, value) {
                    (false, true) => " IS TRUE)",
                    (false, false) => " IS FALSE)",
                    (true, true) => " IS NOT TRUE)",
                    (true, false) => " IS NOT FALSE)",
                });
            }
            Node::InList {
                expr,
                list,
                negated,
            } => {
                let ctx = context_of(expr);
                w.push("(");
                self.write_node(expr, None, w);
                w.push(if *negated { " NOT IN (" } else { " IN (" });
                for (i, item) in list.iter().enumerate() {
                    if i > 0 {
                        w.push(", ");
                    }
                    self.write_node(item, ctx, w);
                }
                w.push("))");
            }
            Node::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let ctx = context_of(expr);
                let subject_ctx = context_of(low).or_else(|| context_of(high));
                w.push("(");
                self.write_node(expr, subject_ctx, w);
                w.push(if *negated {
                    " NOT BETWEEN "
                } else {
                    " BETWEEN "
                });
                self.write_node(low, ctx, w);
                w.push(" AND ");
                self.write_node(high, ctx, w);
                w.push(")");
            }
            Node::Like {
                expr,
                pattern,
                escape,
                negated,
                case_insensitive,
            } => {
                // SQLite has no ILIKE; its LIKE already ignores ASCII case.
                let op = match (self.dialect, negated, case_insensitive) {
                    (Dialect::Postgres, false, true) => " ILIKE ",
                    (Dialect::Postgres, true, true) => " NOT ILIKE ",
                    (_, false, _) => " LIKE ",
                    (_, true, _) => " NOT LIKE ",
                };
                w.push("(");
                self.write_node(expr, None, w);
                w.push(op);
                self.write_node(pattern, context_of(expr), w);
                if let Some(e) = escape {
                    w.push(" ESCAPE ");
                    w.push_bind(Bind::Text(e.clone()), None);
                }
                w.push(")");
            }
        }
    }

    /// The bound value of a literal written beside `ctx` (the PostgreSQL
    /// cast to the column's type is added by [`SqlWriter::push_bind`]).
    fn bind(&self, lit: &Literal, ctx: Option<&Column>) -> Bind {
        let kind = ctx.map(|c| c.kind);
        match lit {
            Literal::Null => Bind::Null,
            Literal::Bool(b) => match (self.dialect, kind) {
                // SQLite stores booleans as 0/1.
                (Dialect::Sqlite, Some(ColumnKind::Boolean)) => Bind::Int(i64::from(*b)),
                _ => Bind::Bool(*b),
            },
            Literal::Number(s) | Literal::Text(s) => {
                let is_number = matches!(lit, Literal::Number(_));
                match (self.dialect, kind) {
                    // The writer casts text to the column's type, so
                    // PostgreSQL's own input function reads the literal.
                    (Dialect::Postgres, Some(_)) => Bind::Text(s.clone()),
                    (Dialect::Sqlite, Some(ColumnKind::Integer)) => int_bind(s)
                        .or_else(|| float_bind(s))
                        .unwrap_or_else(|| text(s)),
                    (Dialect::Sqlite, Some(ColumnKind::Float | ColumnKind::Numeric)) => {
                        float_bind(s).unwrap_or_else(|| text(s))
                    }
                    (Dialect::Sqlite, Some(ColumnKind::Boolean)) => {
                        match s.to_ascii_lowercase().as_str() {
                            "true" | "t" => Bind::Int(1),
                            "false" | "f" => Bind::Int(0),
                            _ => int_bind(s).unwrap_or_else(|| text(s)),
                        }
                    }
                    (Dialect::Sqlite, Some(ColumnKind::Text)) => text(s),
                    _ if is_number => int_bind(s)
                        .or_else(|| float_bind(s))
                        .unwrap_or_else(|| text(s)),
                    _ => text(s),
                }
            }
        }
    }
}

fn text(s: &str) -> Bind {
    Bind::Text(s.to_owned())
}

fn int_bind(s: &str) -> Option<Bind> {
    s.parse::<i64>().ok().map(Bind::Int)
}

fn float_bind(s: &str) -> Option<Bind> {
    // "NaN" and "inf" parse as f64 but are not numbers a filter means.
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Bind::Float)
}

/// The column whose type a literal beside `node` takes: the column itself, or
/// the column inside a function whose result has the column's type.
fn context_of(node: &Node) -> Option<&Column> {
    match node {
        Node::Column(c) => Some(c),
        Node::Call { func, args } => match func {
            // Text in, text out: only a text column's type carries over.
            Func::Lower | Func::Upper | Func::Trim => args
                .iter()
                .find_map(context_of)
                .filter(|c| c.kind == ColumnKind::Text),
            Func::Abs | Func::Coalesce => args.iter().find_map(context_of),
            Func::Length | Func::Round => None,
        },
        _ => None,
    }
}

/// Converts sqlparser's tree into ours, refusing what is not allowed.
struct Builder<'a> {
    table: &'a Table,
    nodes: usize,
}

impl Builder<'_> {
    fn node(&mut self, expr: &Expr, depth: usize) -> Result<Node, ToolError> {
        self.nodes += 1;
        if self.nodes > MAX_FILTER_NODES {
            return Err(ToolError::malformed(
                Reason::TooComplex,
                format!("filter is too complex: more than {MAX_FILTER_NODES} terms"),
            ));
        }
        if depth > MAX_DEPTH {
            return Err(ToolError::malformed(
                Reason::TooComplex,
                "filter is nested too deeply",
            ));
        }
        let d = depth + 1;
        let node = match expr {
            Expr::Nested(inner) => {
                // Parentheses are not a node of our tree (we write our own),
                // but they count towards the cap.
                return self.node(inner, d);
            }
            Expr::Identifier(ident) => Node::Column(self.column(&ident.value)?),
            Expr::CompoundIdentifier(parts) => {
                if parts.len() == 2 && names_table(&parts[0].value, &self.table.name) {
                    Node::Column(self.column(&parts[1].value)?)
                } else {
                    let name = parts
                        .iter()
                        .map(|p| p.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".");
                    return Err(denied(format!(
                        "`{}` is not a column of `{}`: other tables and qualified names are not allowed in filters",
                        clip(&name),
                        clip(&self.table.name)
                    )));
                }
            }
            Expr::Value(v) => Node::Literal(literal(&v.value)?),
            Expr::UnaryOp { op, expr: inner } => match op {
                UnaryOperator::Not => Node::Not(Box::new(self.node(inner, d)?)),
                UnaryOperator::Minus | UnaryOperator::Plus => {
                    let Expr::Value(v) = inner.as_ref() else {
                        return Err(denied_what("unary minus and plus on anything but a number"));
                    };
                    let Value::Number(n, false) = &v.value else {
                        return Err(denied_what("unary minus and plus on anything but a number"));
                    };
                    self.nodes += 1;
                    if *op == UnaryOperator::Minus {
                        Node::Literal(Literal::Number(format!("-{n}")))
                    } else {
                        Node::Literal(Literal::Number(n.clone()))
                    }
                }
                other => {
                    return Err(denied(format!(
                        "operator `{other}` is not allowed in filters"
                    )));
                }
            },
            Expr::BinaryOp { left, op, right } => {
                let make = |b: &mut Self,
                            l: &Expr,
                            r: &Expr|
                 -> Result<(Box<Node>, Box<Node>), ToolError> {
                    Ok((Box::new(b.node(l, d)?), Box::new(b.node(r, d)?)))
                };
                let cmp = match op {
                    BinaryOperator::And => {
                        let (a, b) = make(self, left, right)?;
                        return Ok(Node::And(a, b));
                    }
                    BinaryOperator::Or => {
                        let (a, b) = make(self, left, right)?;
                        return Ok(Node::Or(a, b));
                    }
                    BinaryOperator::Eq => CmpOp::Eq,
                    BinaryOperator::NotEq => CmpOp::NotEq,
                    BinaryOperator::Lt => CmpOp::Lt,
                    BinaryOperator::LtEq => CmpOp::LtEq,
                    BinaryOperator::Gt => CmpOp::Gt,
                    BinaryOperator::GtEq => CmpOp::GtEq,
                    other => return Err(binary_op_refusal(other)),
                };
                let (l, r) = make(self, left, right)?;
                Node::Compare {
                    left: l,
                    op: cmp,
                    right: r,
                }
            }
            Expr::IsNull(e) | Expr::IsNotNull(e) => Node::IsNull {
                expr: Box::new(self.node(e, d)?),
                negated: matches!(expr, Expr::IsNotNull(_)),
            },
            Expr::IsTrue(e) | Expr::IsNotTrue(e) | Expr::IsFalse(e) | Expr::IsNotFalse(e) => {
                Node::IsBool {
                    expr: Box::new(self.node(e, d)?),
                    value: matches!(expr, Expr::IsTrue(_) | Expr::IsNotTrue(_)),
                    negated: matches!(expr, Expr::IsNotTrue(_) | Expr::IsNotFalse(_)),
                }
            }
            Expr::InList {
                expr: subject,
                list,
                negated,
            } => {
                if list.len() > MAX_IN_LIST {
                    return Err(ToolError::malformed(
                        Reason::TooComplex,
                        format!("IN lists may have at most {MAX_IN_LIST} values"),
                    ));
                }
                let subject = Box::new(self.node(subject, d)?);
                let mut items = Vec::with_capacity(list.len());
                for item in list {
                    let n = self.node(item, d)?;
                    if !matches!(n, Node::Literal(_)) {
                        return Err(denied_what(
                            "IN lists of anything but values (numbers, strings, TRUE, FALSE, NULL)",
                        ));
                    }
                    items.push(n);
                }
                Node::InList {
                    expr: subject,
                    list: items,
                    negated: *negated,
                }
            }
            Expr::Between {
                expr: subject,
                negated,
                low,
                high,
            } => Node::Between {
                expr: Box::new(self.value(subject, d)?),
                low: Box::new(self.value(low, d)?),
                high: Box::new(self.value(high, d)?),
                negated: *negated,
            },
            Expr::Like {
                negated,
                any,
                expr: subject,
                pattern,
                escape_char,
            }
            | Expr::ILike {
                negated,
                any,
                expr: subject,
                pattern,
                escape_char,
            } => {
                if *any {
                    return Err(denied_what("LIKE ANY"));
                }
                let subject = self.value(subject, d)?;
                check_like_subject(&subject)?;
                let pattern = self.value(pattern, d)?;
                // One LIKE costs about subject × pattern inside one database
                // step, where SQLite's deadline check cannot interrupt it.
                if let Node::Literal(Literal::Text(p)) = &pattern
                    && p.chars().count() > MAX_LIKE_PATTERN
                {
                    return Err(ToolError::malformed(
                        Reason::TooLong,
                        format!("a LIKE pattern may have at most {MAX_LIKE_PATTERN} characters"),
                    ));
                }
                let escape = match escape_char {
                    None => None,
                    Some(e) => Some(escape_literal(e)?),
                };
                Node::Like {
                    expr: Box::new(subject),
                    pattern: Box::new(pattern),
                    escape,
                    negated: *negated,
                    case_insensitive: matches!(expr, Expr::ILike { .. }),
                }
            }
            Expr::Function(f) => self.function(f, d)?,
            Expr::Trim {
                trim_where: None,
                trim_what: None,
                expr: inner,
                trim_characters: None,
            } => Node::Call {
                func: Func::Trim,
                args: vec![self.value(inner, d)?],
            },
            other => return Err(refusal(other)),
        };
        Ok(node)
    }

    /// A value: a column, a literal or a call (function arguments, BETWEEN
    /// bounds, LIKE operands), not a condition.
    fn value(&mut self, expr: &Expr, depth: usize) -> Result<Node, ToolError> {
        let n = self.node(expr, depth)?;
        match n {
            Node::Column(_) | Node::Literal(_) | Node::Call { .. } => Ok(n),
            _ => Err(denied_what(
                "conditions in value positions (function arguments, BETWEEN bounds, LIKE operands)",
            )),
        }
    }

    fn function(&mut self, f: &Function, depth: usize) -> Result<Node, ToolError> {
        let name = match f.name.0.as_slice() {
            [ObjectNamePart::Identifier(ident)] => ident.value.as_str(),
            _ => {
                return Err(denied(format!(
                    "function `{}` is not allowed in filters; allowed: {}",
                    clip(&f.name.to_string()),
                    FILTER_FUNCTIONS.join(", ")
                )));
            }
        };
        let Some(func) = Func::from_name(name) else {
            return Err(denied(format!(
                "function `{}` is not allowed in filters; allowed: {}",
                clip(name),
                FILTER_FUNCTIONS.join(", ")
            )));
        };
        if f.uses_odbc_syntax
            || !matches!(f.parameters, FunctionArguments::None)
            || !f.within_group.is_empty()
            || f.filter.is_some()
            || f.null_treatment.is_some()
            || f.over.is_some()
        {
            return Err(denied_what(
                "OVER, FILTER, WITHIN GROUP and other call clauses",
            ));
        }
        let FunctionArguments::List(list) = &f.args else {
            return Err(denied(format!(
                "`{}` must be called with arguments in parentheses",
                func.sql_name()
            )));
        };
        if matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct))
            || !list.clauses.is_empty()
        {
            return Err(denied_what(
                "DISTINCT, ORDER BY and other clauses inside calls",
            ));
        }
        let mut exprs = Vec::with_capacity(list.args.len());
        for a in &list.args {
            match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => exprs.push(e),
                _ => return Err(denied_what("named arguments and `*` in calls")),
            }
        }
        let (min, max) = match func {
            Func::Round => (1, 2),
            Func::Coalesce => (1, MAX_COALESCE_ARGS),
            _ => (1, 1),
        };
        if exprs.len() < min || exprs.len() > max {
            let want = if min == max {
                format!("{min} argument")
            } else {
                format!("{min} to {max} arguments")
            };
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!("`{}` takes {want}, got {}", func.sql_name(), exprs.len()),
            ));
        }
        let mut args = Vec::with_capacity(exprs.len());
        for (i, e) in exprs.into_iter().enumerate() {
            if func == Func::Round && i == 1 {
                args.push(Node::Digits(round_digits(e)?));
            } else {
                args.push(self.value(e, depth)?);
            }
        }
        Ok(Node::Call { func, args })
    }

    fn column(&self, name: &str) -> Result<Column, ToolError> {
        self.table.column(name).cloned().ok_or_else(|| {
            ToolError::new(
                ErrorType::InvalidColumn,
                format!(
                    "column `{}` does not exist in table `{}`",
                    clip(name),
                    clip(&self.table.name)
                ),
            )
            .suggest(format!("Available columns: {}", self.table.column_list()))
        })
    }
}

/// Whether a qualifier names the filtered table (quoted or not: the
/// qualifier is dropped when we write the SQL, so case cannot matter).
fn names_table(qualifier: &str, table: &str) -> bool {
    qualifier == table || qualifier.eq_ignore_ascii_case(table)
}

/// Refuses a LIKE subject that is not text: a non-text column, a numeric
/// function (`length`, `abs`, `round`), or `coalesce` over one. `lower`,
/// `upper` and `trim` return text whatever their argument.
fn check_like_subject(node: &Node) -> Result<(), ToolError> {
    let not_text = |what: String, is: &str| {
        Err(ToolError::malformed(
            Reason::Malformed,
            format!("LIKE works on text columns; {what} is {is}"),
        )
        .suggest("Compare non-text values with =, <, >, IN or BETWEEN."))
    };
    match node {
        Node::Column(c) if !c.kind.is_text() => {
            not_text(format!("`{}`", clip(&c.name)), kind_name(c.kind))
        }
        Node::Call { func, args } => match func {
            Func::Length | Func::Abs | Func::Round => {
                not_text(format!("`{}(...)`", func.sql_name()), "a number")
            }
            Func::Coalesce => args.iter().try_for_each(check_like_subject),
            Func::Lower | Func::Upper | Func::Trim => Ok(()),
        },
        _ => Ok(()),
    }
}

fn kind_name(kind: ColumnKind) -> &'static str {
    match kind {
        ColumnKind::Integer => "integer",
        ColumnKind::Float => "floating point",
        ColumnKind::Numeric => "numeric",
        ColumnKind::Text => "text",
        ColumnKind::Boolean => "boolean",
        ColumnKind::Temporal => "a date/time",
        ColumnKind::Json => "JSON",
        ColumnKind::Bytes => "binary",
        ColumnKind::Other => "not text",
    }
}

fn literal(v: &Value) -> Result<Literal, ToolError> {
    match v {
        Value::Number(n, false) => Ok(Literal::Number(n.clone())),
        Value::SingleQuotedString(s) => Ok(Literal::Text(s.clone())),
        Value::Boolean(b) => Ok(Literal::Bool(*b)),
        Value::Null => Ok(Literal::Null),
        Value::Placeholder(_) => Err(denied_what("placeholders")),
        Value::DollarQuotedString(_) => Err(denied_what("dollar-quoted strings")),
        _ => Err(denied_what(
            "special literals (escape, national, unicode, hex, byte, raw or long strings)",
        )),
    }
}

/// The ESCAPE character of a LIKE: one character in single quotes.
fn escape_literal(e: &Expr) -> Result<String, ToolError> {
    if let Expr::Value(v) = e
        && let Value::SingleQuotedString(s) = &v.value
        && s.chars().count() == 1
    {
        return Ok(s.clone());
    }
    Err(ToolError::malformed(
        Reason::Malformed,
        "ESCAPE takes one character in single quotes, e.g. ESCAPE '!'",
    ))
}

/// `round`'s precision: a small non-negative integer literal.
fn round_digits(e: &Expr) -> Result<u32, ToolError> {
    if let Expr::Value(v) = e
        && let Value::Number(n, false) = &v.value
        && n.bytes().all(|b| b.is_ascii_digit())
        && let Ok(d) = n.parse::<u32>()
        && d <= MAX_ROUND_DIGITS
    {
        return Ok(d);
    }
    Err(ToolError::malformed(
        Reason::OutOfRange,
        format!("round's second argument must be a whole number from 0 to {MAX_ROUND_DIGITS}"),
    ))
}

fn denied(message: String) -> ToolError {
    ToolError::denied(message).suggest(FILTER_HELP)
}

fn denied_what(what: &str) -> ToolError {
    denied(format!("{what} are not allowed in filters"))
}

fn binary_op_refusal(op: &BinaryOperator) -> ToolError {
    use BinaryOperator as B;
    match op {
        B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo => {
            denied_what("arithmetic operators (+ - * / %)")
        }
        B::StringConcat => denied_what("string concatenation (||)"),
        B::Arrow
        | B::LongArrow
        | B::HashArrow
        | B::HashLongArrow
        | B::AtArrow
        | B::ArrowAt
        | B::HashMinus
        | B::AtQuestion
        | B::AtAt
        | B::Question
        | B::QuestionAnd
        | B::QuestionPipe => denied_what("JSON operators"),
        B::BitwiseOr
        | B::BitwiseAnd
        | B::BitwiseXor
        | B::PGBitwiseXor
        | B::PGBitwiseShiftLeft
        | B::PGBitwiseShiftRight => denied_what("bitwise operators"),
        other => denied(format!(
            "operator `{}` is not allowed in filters",
            clip(&other.to_string())
        )),
    }
}

/// The refusal of an expression kind outside the allow-list, naming it.
fn refusal(expr: &Expr) -> ToolError {
    let what = match expr {
        Expr::Subquery(_) | Expr::InSubquery { .. } => "subqueries",
        Expr::Exists { .. } => "EXISTS subqueries",
        Expr::Cast { .. } | Expr::Convert { .. } => "casts",
        Expr::Collate { .. } => "COLLATE clauses",
        Expr::Array(_) | Expr::AnyOp { .. } | Expr::AllOp { .. } | Expr::InUnnest { .. } => {
            "arrays and ANY/ALL"
        }
        Expr::Interval(_) => "intervals",
        Expr::TypedString(_) => "typed literals such as DATE '...' (write a plain string)",
        Expr::Case { .. } => "CASE expressions",
        Expr::JsonAccess { .. } | Expr::CompoundFieldAccess { .. } => {
            "JSON, array and field access"
        }
        Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..) => "IS DISTINCT FROM",
        Expr::IsUnknown(_) | Expr::IsNotUnknown(_) => "IS UNKNOWN",
        Expr::SimilarTo { .. } | Expr::RLike { .. } => "regular expressions",
        Expr::AtTimeZone { .. } => "AT TIME ZONE",
        Expr::Extract { .. } => "EXTRACT",
        Expr::Position { .. } | Expr::Substring { .. } | Expr::Overlay { .. } => {
            "POSITION, SUBSTRING and OVERLAY"
        }
        Expr::Ceil { .. } | Expr::Floor { .. } => "CEIL and FLOOR",
        Expr::Trim { .. } => "TRIM with LEADING/TRAILING/BOTH or characters",
        Expr::Tuple(_) | Expr::Struct { .. } | Expr::Map(_) | Expr::Dictionary(_) => {
            "row, struct and map values"
        }
        Expr::Wildcard(_) | Expr::QualifiedWildcard(..) => "`*`",
        Expr::Function(_) => "function calls",
        _ => "this kind of expression",
    };
    denied_what(what)
}

/// Parses exactly one expression from `tokens`, requiring the parser to be
/// at the end afterwards (otherwise `1=1; DROP TABLE x` or `a=1 garbage`
/// would pass with the tail ignored).
fn parse_one_expr(dialect: Dialect, tokens: Vec<Token>) -> Result<Expr, ToolError> {
    fn run(d: &dyn sqlparser::dialect::Dialect, tokens: Vec<Token>) -> Result<Expr, ToolError> {
        let mut parser = Parser::new(d)
            .with_recursion_limit(RECURSION_LIMIT)
            .with_tokens(tokens);
        let expr = parser.parse_expr().map_err(parser_error)?;
        let next = parser.peek_token();
        if next.token != Token::EOF {
            return Err(ToolError::syntax(format!(
                "unexpected `{}` after the end of the condition",
                clip(&next.token.to_string())
            ))
            .suggest("A filter is one condition, e.g. age > 18 AND status = 'active'; combine conditions with AND / OR."));
        }
        Ok(expr)
    }
    match dialect {
        Dialect::Postgres => run(&PostgreSqlDialect {}, tokens),
        Dialect::Sqlite => run(&SQLiteDialect {}, tokens),
    }
}

mod truth;

#[cfg(test)]
mod tests;

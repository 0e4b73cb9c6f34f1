//! Whether a filter matches every row, from its structure alone: constant
//! parts are folded, `x OR NOT x` and its kin are recognised. Update and
//! delete refuse such filters before the database sees them.

use super::*;

/// Whether the tree references a column anywhere.
pub(super) fn has_column(node: &Node) -> bool {
    match node {
        Node::Column(_) => true,
        Node::Literal(_) | Node::Digits(_) => false,
        Node::Call { args, .. } => args.iter().any(has_column),
        Node::Not(a) => has_column(a),
        Node::And(a, b) | Node::Or(a, b) => has_column(a) || has_column(b),
        Node::Compare { left, right, .. } => has_column(left) || has_column(right),
        Node::IsNull { expr, .. } | Node::IsBool { expr, .. } => has_column(expr),
        Node::InList { expr, list, .. } => has_column(expr) || list.iter().any(has_column),
        Node::Between {
            expr, low, high, ..
        } => has_column(expr) || has_column(low) || has_column(high),
        Node::Like { expr, pattern, .. } => has_column(expr) || has_column(pattern),
    }
}

/// What the structure says about a condition over all rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Truth {
    /// True for every row.
    True,
    /// True for no row.
    False,
    /// Depends on the row (or we cannot tell).
    Maybe,
}

pub(super) fn truth(node: &Node) -> Truth {
    if !has_column(node) {
        // A constant: fold it; one we cannot fold may be true, so it counts
        // as true (the conservative answer for update/delete).
        return match fold(node) {
            Some(Const::Bool(false)) | Some(Const::Null) => Truth::False,
            _ => Truth::True,
        };
    }
    match node {
        Node::Not(a) => match truth(a) {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Maybe => Truth::Maybe,
        },
        Node::And(a, b) => match (truth(a), truth(b)) {
            (Truth::True, Truth::True) => Truth::True,
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            _ => Truth::Maybe,
        },
        Node::Or(..) => {
            let mut branches = Vec::new();
            flatten_or(node, &mut branches);
            let truths: Vec<Truth> = branches.iter().map(|b| truth(b)).collect();
            if truths.contains(&Truth::True) {
                return Truth::True;
            }
            for (i, a) in branches.iter().enumerate() {
                for b in &branches[i + 1..] {
                    if complements(a, b) {
                        return Truth::True;
                    }
                }
            }
            if truths.iter().all(|t| *t == Truth::False) {
                Truth::False
            } else {
                Truth::Maybe
            }
        }
        Node::Compare { left, op, right } if left == right => match op {
            CmpOp::Eq | CmpOp::LtEq | CmpOp::GtEq => Truth::True,
            CmpOp::NotEq | CmpOp::Lt | CmpOp::Gt => Truth::False,
        },
        Node::Between {
            expr,
            low,
            high,
            negated,
        } if expr == low && expr == high => {
            if *negated {
                Truth::False
            } else {
                Truth::True
            }
        }
        Node::Like {
            pattern, negated, ..
        } if matches_everything(pattern) => {
            if *negated {
                Truth::False
            } else {
                Truth::True
            }
        }
        _ => Truth::Maybe,
    }
}

/// Whether a LIKE pattern is only `%` wildcards.
fn matches_everything(pattern: &Node) -> bool {
    matches!(pattern, Node::Literal(Literal::Text(p)) if !p.is_empty() && p.chars().all(|c| c == '%'))
}

fn flatten_or<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::Or(a, b) => {
            flatten_or(a, out);
            flatten_or(b, out);
        }
        other => out.push(other),
    }
}

/// Whether `b` is true exactly when `a` is not (ignoring NULLs, as the
/// tricks that use them do): `p` / `NOT p`, `x IS NULL` / `x IS NOT NULL`,
/// `a = 1` / `a <> 1`, `a < b` / `a >= b`, and negated IN/BETWEEN/LIKE.
fn complements(a: &Node, b: &Node) -> bool {
    if matches!(a, Node::Not(inner) if inner.as_ref() == b)
        || matches!(b, Node::Not(inner) if inner.as_ref() == a)
    {
        return true;
    }
    match (a, b) {
        (
            Node::IsNull {
                expr: x,
                negated: n1,
            },
            Node::IsNull {
                expr: y,
                negated: n2,
            },
        ) => x == y && n1 != n2,
        (
            Node::IsBool {
                expr: x,
                value: v1,
                negated: n1,
            },
            Node::IsBool {
                expr: y,
                value: v2,
                negated: n2,
            },
        ) => x == y && v1 == v2 && n1 != n2,
        (
            Node::Compare {
                left: l1,
                op: o1,
                right: r1,
            },
            Node::Compare {
                left: l2,
                op: o2,
                right: r2,
            },
        ) => l1 == l2 && r1 == r2 && o1.negation() == *o2,
        (
            Node::InList {
                expr: x,
                list: l1,
                negated: n1,
            },
            Node::InList {
                expr: y,
                list: l2,
                negated: n2,
            },
        ) => x == y && l1 == l2 && n1 != n2,
        (
            Node::Between {
                expr: x,
                low: lo1,
                high: hi1,
                negated: n1,
            },
            Node::Between {
                expr: y,
                low: lo2,
                high: hi2,
                negated: n2,
            },
        ) => x == y && lo1 == lo2 && hi1 == hi2 && n1 != n2,
        (
            Node::Like {
                expr: x,
                pattern: p1,
                escape: e1,
                negated: n1,
                case_insensitive: c1,
            },
            Node::Like {
                expr: y,
                pattern: p2,
                escape: e2,
                negated: n2,
                case_insensitive: c2,
            },
        ) => x == y && p1 == p2 && e1 == e2 && c1 == c2 && n1 != n2,
        _ => false,
    }
}

/// A folded constant.
#[derive(Debug, Clone, PartialEq)]
enum Const {
    Null,
    Bool(bool),
    Num(f64),
    Text(String),
}

/// Folds a column-free sub-expression, where the answer does not depend on
/// the database: numbers, booleans, NULL and text *equality*. Text ordering
/// depends on the collation, and function results on the database, so those
/// are not folded (`None`: unknown).
fn fold(node: &Node) -> Option<Const> {
    match node {
        Node::Literal(l) => Some(match l {
            Literal::Null => Const::Null,
            Literal::Bool(b) => Const::Bool(*b),
            Literal::Number(n) => Const::Num(n.parse::<f64>().ok().filter(|v| v.is_finite())?),
            Literal::Text(s) => Const::Text(s.clone()),
        }),
        Node::Not(a) => match fold(a)? {
            Const::Null => Some(Const::Null),
            Const::Bool(b) => Some(Const::Bool(!b)),
            _ => None,
        },
        Node::And(a, b) => {
            let (x, y) = (fold_bool(a), fold_bool(b));
            match (x, y) {
                (Some(Some(false)), _) | (_, Some(Some(false))) => Some(Const::Bool(false)),
                (Some(Some(true)), Some(Some(true))) => Some(Const::Bool(true)),
                (Some(_), Some(_)) => Some(Const::Null),
                _ => None,
            }
        }
        Node::Or(a, b) => {
            let (x, y) = (fold_bool(a), fold_bool(b));
            match (x, y) {
                (Some(Some(true)), _) | (_, Some(Some(true))) => Some(Const::Bool(true)),
                (Some(Some(false)), Some(Some(false))) => Some(Const::Bool(false)),
                (Some(_), Some(_)) => Some(Const::Null),
                _ => None,
            }
        }
        Node::Compare { left, op, right } => compare(&fold(left)?, *op, &fold(right)?),
        Node::IsNull { expr, negated } => {
            let is_null = fold(expr)? == Const::Null;
            Some(Const::Bool(is_null != *negated))
        }
        Node::IsBool {
            expr,
            value,
            negated,
        } => {
            let is = match fold(expr)? {
                Const::Bool(b) => b == *value,
                Const::Null => false,
                _ => return None,
            };
            Some(Const::Bool(is != *negated))
        }
        Node::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let (x, lo, hi) = (fold(expr)?, fold(low)?, fold(high)?);
            let ge = compare(&x, CmpOp::GtEq, &lo)?;
            let le = compare(&x, CmpOp::LtEq, &hi)?;
            let r = match (ge, le) {
                (Const::Bool(a), Const::Bool(b)) => Const::Bool((a && b) != *negated),
                _ => Const::Null,
            };
            Some(r)
        }
        Node::InList {
            expr,
            list,
            negated,
        } => {
            let x = fold(expr)?;
            let mut saw_null = x == Const::Null;
            for item in list {
                match compare(&x, CmpOp::Eq, &fold(item)?)? {
                    Const::Bool(true) => return Some(Const::Bool(!*negated)),
                    Const::Null => saw_null = true,
                    _ => {}
                }
            }
            Some(if saw_null {
                Const::Null
            } else {
                Const::Bool(*negated)
            })
        }
        _ => None,
    }
}

/// `Some(Some(b))` a boolean, `Some(None)` NULL, `None` unknown.
fn fold_bool(node: &Node) -> Option<Option<bool>> {
    match fold(node)? {
        Const::Bool(b) => Some(Some(b)),
        Const::Null => Some(None),
        _ => None,
    }
}

fn compare(a: &Const, op: CmpOp, b: &Const) -> Option<Const> {
    use std::cmp::Ordering;
    let ord = match (a, b) {
        (Const::Null, _) | (_, Const::Null) => return Some(Const::Null),
        (Const::Num(x), Const::Num(y)) => x.partial_cmp(y)?,
        (Const::Bool(x), Const::Bool(y)) => x.cmp(y),
        // Text equality does not depend on the collation (deterministic
        // collations); text ordering does, so it stays unknown.
        (Const::Text(x), Const::Text(y)) if matches!(op, CmpOp::Eq | CmpOp::NotEq) => {
            if x == y {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        _ => return None,
    };
    let r = match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::NotEq => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::LtEq => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::GtEq => ord != Ordering::Less,
    };
    Some(Const::Bool(r))
}

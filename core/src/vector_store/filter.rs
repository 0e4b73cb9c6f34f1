//! Metadata filters: which documents a search or a delete considers.
//!
//! The JSON form is LangChain's (its PGVector store's), so a filter written
//! for n8n works here: an object whose keys are metadata keys, each with a
//! value to equal or an object of operators. Every condition must hold.
//!
//! | form | holds when the metadata value |
//! | --- | --- |
//! | `{"source": "a.md"}` | equals it |
//! | `{"lang": {"in": ["en", "de"]}}` | equals one of them |
//! | `{"lang": {"notIn": ["fr"]}}` | is present and equals none of them |
//! | `{"lang": {"neq": "fr"}}` | is missing, or differs |
//! | `{"tags": {"arrayContains": ["a", "b"]}}` | is an array holding one of them (or a string equal to one) |
//! | `{"page": {"gte": 2, "lt": 5}}` (`gt`, `gte`, `lt`, `lte`) | is a number in the range |
//!
//! Values compare by their text, as PostgreSQL's `metadata->>'key'` does:
//! the string `"2"` equals the number `2`, and `true` equals `"true"`. A
//! missing key or a JSON `null` equals nothing. Ranges take numbers only:
//! a string holding a number is not in any range (LangChain's PGVector
//! store casts it, and fails the whole query on text that is not a
//! number).

use serde_json::{Map, Value};

use super::store_error as invalid;
use crate::error::{Result, describe_value, quoted};

/// The operators an object in a filter may use.
pub const OPERATORS: [&str; 9] = [
    "in",
    "notIn",
    "arrayContains",
    "gt",
    "gte",
    "lt",
    "lte",
    "neq",
    "eq",
];

/// One condition on one metadata key.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// Equal to this value's text.
    Eq(String),
    /// Missing, or not equal to this value's text.
    Neq(String),
    /// Equal to one of these.
    In(Vec<String>),
    /// Present and equal to none of these.
    NotIn(Vec<String>),
    /// An array holding one of these strings, or a string equal to one.
    ArrayContains(Vec<String>),
    /// A number greater than this.
    Gt(f64),
    /// A number at least this.
    Gte(f64),
    /// A number less than this.
    Lt(f64),
    /// A number at most this.
    Lte(f64),
}

/// Conditions on documents' metadata, all of which must hold. The empty
/// filter holds for every document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    conditions: Vec<(String, Condition)>,
}

/// A metadata value's text, as PostgreSQL's `->>` gives it; `None` for a
/// missing value or `null`.
fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Filter {
    /// The filter that holds for every document.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// This filter and `key` equal to `value` (compared by text).
    pub fn eq(mut self, key: impl Into<String>, value: impl Into<Value>) -> Filter {
        let value = value.into();
        self.conditions.push((
            key.into(),
            Condition::Eq(text(Some(&value)).unwrap_or_default()),
        ));
        self
    }

    /// This filter and `condition` on `key`.
    pub fn and(mut self, key: impl Into<String>, condition: Condition) -> Filter {
        self.conditions.push((key.into(), condition));
        self
    }

    /// This filter's conditions and then `other`'s.
    pub fn merged(&self, other: &Filter) -> Filter {
        Filter {
            conditions: self
                .conditions
                .iter()
                .chain(&other.conditions)
                .cloned()
                .collect(),
        }
    }

    /// Reads LangChain's JSON form (see the module docs); `null` and `{}`
    /// are the empty filter. An unknown operator, an empty list or a
    /// non-numeric bound is an error naming the key.
    pub fn from_json(filter: &Value) -> Result<Filter> {
        let object = match filter {
            Value::Null => return Ok(Filter::all()),
            Value::Object(o) => o,
            other => {
                return Err(invalid(format!(
                    "a filter must be an object of metadata keys, not {}",
                    describe_value(other)
                )));
            }
        };
        let mut out = Filter::all();
        for (key, spec) in object {
            if key.is_empty() {
                return Err(invalid("a filter names an empty metadata key"));
            }
            match spec {
                Value::Object(ops) => {
                    if ops.is_empty() {
                        return Err(invalid(format!(
                            "the filter on `{}` has no operator",
                            quoted(key)
                        )));
                    }
                    for (op, arg) in ops {
                        out.conditions.push((key.clone(), condition(key, op, arg)?));
                    }
                }
                Value::Array(_) => {
                    return Err(invalid(format!(
                        "the filter on `{}` is a list; use {{\"in\": [...]}} to match any of its values",
                        quoted(key)
                    )));
                }
                scalar => out.conditions.push((
                    key.clone(),
                    Condition::Eq(text(Some(scalar)).unwrap_or_default()),
                )),
            }
        }
        Ok(out)
    }

    /// Whether it holds for every document.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Its conditions, in order.
    pub fn conditions(&self) -> &[(String, Condition)] {
        &self.conditions
    }

    /// The metadata keys it names, each once.
    pub fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        for (k, _) in &self.conditions {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
        keys
    }

    /// Whether a document with `metadata` passes.
    pub fn matches(&self, metadata: &Map<String, Value>) -> bool {
        self.conditions.iter().all(|(key, condition)| {
            let value = metadata.get(key);
            let number = || value.and_then(Value::as_f64);
            match condition {
                Condition::Eq(v) => text(value).is_some_and(|t| &t == v),
                Condition::Neq(v) => text(value).is_none_or(|t| &t != v),
                Condition::In(vs) => text(value).is_some_and(|t| vs.contains(&t)),
                Condition::NotIn(vs) => text(value).is_some_and(|t| !vs.contains(&t)),
                Condition::ArrayContains(vs) => match value {
                    Some(Value::Array(items)) => items
                        .iter()
                        .any(|i| i.as_str().is_some_and(|s| vs.iter().any(|v| v == s))),
                    Some(Value::String(s)) => vs.contains(s),
                    _ => false,
                },
                Condition::Gt(b) => number().is_some_and(|n| n > *b),
                Condition::Gte(b) => number().is_some_and(|n| n >= *b),
                Condition::Lt(b) => number().is_some_and(|n| n < *b),
                Condition::Lte(b) => number().is_some_and(|n| n <= *b),
            }
        })
    }
}

fn condition(key: &str, op: &str, arg: &Value) -> Result<Condition> {
    // Messages quote both, cut short: a filter can be any JSON a user or a model wrote.
    let name = op;
    let (key, op) = (&quoted(key), &quoted(op));
    let list = || -> Result<Vec<String>> {
        let items = arg.as_array().ok_or_else(|| {
            invalid(format!(
                "`{op}` on `{key}` takes a list of values, not {}",
                describe_value(arg)
            ))
        })?;
        if items.is_empty() {
            return Err(invalid(format!("`{op}` on `{key}` has an empty list")));
        }
        Ok(items
            .iter()
            .map(|v| text(Some(v)).unwrap_or_default())
            .collect())
    };
    let bound = || -> Result<f64> {
        arg.as_f64().ok_or_else(|| {
            invalid(format!(
                "`{op}` on `{key}` takes a number, not {}",
                describe_value(arg)
            ))
        })
    };
    let scalar = || -> Result<String> {
        match arg {
            Value::Array(_) | Value::Object(_) => Err(invalid(format!(
                "`{op}` on `{key}` takes one value, not {}",
                describe_value(arg)
            ))),
            v => Ok(text(Some(v)).unwrap_or_default()),
        }
    };
    Ok(match name {
        "eq" => Condition::Eq(scalar()?),
        "neq" => Condition::Neq(scalar()?),
        "in" => Condition::In(list()?),
        "notIn" => Condition::NotIn(list()?),
        "arrayContains" => Condition::ArrayContains(list()?),
        "gt" => Condition::Gt(bound()?),
        "gte" => Condition::Gte(bound()?),
        "lt" => Condition::Lt(bound()?),
        "lte" => Condition::Lte(bound()?),
        other => {
            let hint = nodekit_rules::closest(other, &OPERATORS)
                .map_or(String::new(), |b| format!("; did you mean `{b}`?"));
            return Err(invalid(format!(
                "unknown filter operator `{op}` on `{key}`{hint} (operators: {})",
                OPERATORS.join(", ")
            )));
        }
    })
}

/// A filter as SQL ([`Filter::to_sql`]), for a store on a SQL database: the condition and the values to bind after the
/// statement's own. `text` renders a key's text (`->>` semantics) and
/// `number` its value when it is a JSON number, each given the SQL of the
/// bound key; `contains` renders "the array at the key holds one of these".
pub struct SqlFilter {
    /// `AND`-joined conditions; `TRUE` for the empty filter.
    pub condition: String,
    /// Values to bind, in placeholder order.
    pub binds: Vec<Bind>,
}

/// A value a filter's SQL binds.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// A text.
    Text(String),
    /// A number.
    Number(f64),
    /// A list of texts.
    Texts(Vec<String>),
}

/// How a database spells a filter's parts.
pub trait SqlDialect {
    /// The key's text (`NULL` when missing or `null`), given the key's placeholder.
    fn text(&self, key: &str) -> String;
    /// The key's value when it is a JSON number, else `NULL`.
    fn number(&self, key: &str) -> String;
    /// Whether the key's array (or string) holds one of the texts bound at `list`.
    fn contains(&self, key: &str, list: &str) -> String;
    /// Whether `value` is one of the texts bound at `list`.
    fn one_of(&self, value: &str, list: &str) -> String;
    /// The bound key as the database wants it (a JSON path for SQLite).
    fn key(&self, key: &str) -> String;
}

impl Filter {
    /// The filter as SQL whose placeholders start at `$first`.
    pub fn to_sql(&self, dialect: &dyn SqlDialect, first: usize) -> SqlFilter {
        let mut binds = Vec::new();
        let mut next = |bind: Bind| {
            binds.push(bind);
            format!("${}", first + binds.len() - 1)
        };
        let mut parts = Vec::new();
        for (key, condition) in &self.conditions {
            let k = next(Bind::Text(dialect.key(key)));
            let text = dialect.text(&k);
            parts.push(match condition {
                Condition::Eq(v) => format!("{text} = {}", next(Bind::Text(v.clone()))),
                Condition::Neq(v) => {
                    format!(
                        "({text} IS NULL OR {text} <> {})",
                        next(Bind::Text(v.clone()))
                    )
                }
                Condition::In(vs) => dialect.one_of(&text, &next(Bind::Texts(vs.clone()))),
                Condition::NotIn(vs) => format!(
                    "({text} IS NOT NULL AND NOT {})",
                    dialect.one_of(&text, &next(Bind::Texts(vs.clone())))
                ),
                Condition::ArrayContains(vs) => {
                    dialect.contains(&k, &next(Bind::Texts(vs.clone())))
                }
                Condition::Gt(b) => format!("{} > {}", dialect.number(&k), next(Bind::Number(*b))),
                Condition::Gte(b) => {
                    format!("{} >= {}", dialect.number(&k), next(Bind::Number(*b)))
                }
                Condition::Lt(b) => format!("{} < {}", dialect.number(&k), next(Bind::Number(*b))),
                Condition::Lte(b) => {
                    format!("{} <= {}", dialect.number(&k), next(Bind::Number(*b)))
                }
            });
        }
        SqlFilter {
            condition: if parts.is_empty() {
                "TRUE".into()
            } else {
                parts.join(" AND ")
            },
            binds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn conditions_hold_as_langchain_pgvector_filters() {
        let m = meta(
            json!({"source": "a.md", "page": 3, "ok": true, "tags": ["x", "y"], "none": null}),
        );
        let holds = |f: Value| Filter::from_json(&f).unwrap().matches(&m);
        assert!(holds(json!({})));
        assert!(holds(json!(null)));
        assert!(holds(json!({"source": "a.md"})));
        assert!(holds(json!({"page": "3"})));
        assert!(holds(json!({"page": 3, "ok": "true"})));
        assert!(!holds(json!({"source": "b.md"})));
        assert!(!holds(json!({"missing": "x"})));
        assert!(!holds(json!({"none": "null"})));
        assert!(holds(json!({"source": {"in": ["b.md", "a.md"]}})));
        assert!(!holds(json!({"source": {"notIn": ["a.md"]}})));
        assert!(!holds(json!({"missing": {"notIn": ["a.md"]}})));
        assert!(holds(
            json!({"missing": {"neq": "a"}, "source": {"neq": "b.md"}})
        ));
        assert!(holds(json!({"tags": {"arrayContains": ["z", "y"]}})));
        assert!(holds(json!({"source": {"arrayContains": ["a.md"]}})));
        assert!(!holds(json!({"tags": {"arrayContains": ["z"]}})));
        assert!(holds(json!({"page": {"gte": 3, "lt": 4}})));
        assert!(!holds(json!({"page": {"gt": 3}})));
        assert!(!holds(json!({"source": {"lt": 100}})));
    }

    #[test]
    fn bad_filters_are_refused_with_the_key() {
        let e = |f: Value| Filter::from_json(&f).unwrap_err().to_string();
        assert_eq!(
            e(json!({"lang": {"inn": ["en"]}})),
            "vector store: unknown filter operator `inn` on `lang`; did you mean `in`? (operators: in, notIn, arrayContains, gt, gte, lt, lte, neq, eq)"
        );
        assert_eq!(
            e(json!({"lang": {"in": []}})),
            "vector store: `in` on `lang` has an empty list"
        );
        assert_eq!(
            e(json!({"page": {"gt": "two"}})),
            "vector store: `gt` on `page` takes a number, not a string (\"two\")"
        );
        assert!(e(json!({"lang": ["en"]})).contains("use {\"in\": [...]}"));
        assert!(e(json!("x")).contains("must be an object"));
    }

    struct Test;
    impl SqlDialect for Test {
        fn text(&self, key: &str) -> String {
            format!("T({key})")
        }
        fn number(&self, key: &str) -> String {
            format!("N({key})")
        }
        fn contains(&self, key: &str, list: &str) -> String {
            format!("C({key}, {list})")
        }
        fn one_of(&self, value: &str, list: &str) -> String {
            format!("{value} IN {list}")
        }
        fn key(&self, key: &str) -> String {
            key.to_owned()
        }
    }

    #[test]
    fn filters_render_as_bound_sql() {
        let f = Filter::from_json(&json!({"a": "x", "b": {"in": ["p", "q"], "gte": 2}})).unwrap();
        let sql = f.to_sql(&Test, 3);
        assert_eq!(sql.condition, "T($3) = $4 AND T($5) IN $6 AND N($7) >= $8");
        assert_eq!(
            sql.binds,
            [
                Bind::Text("a".into()),
                Bind::Text("x".into()),
                Bind::Text("b".into()),
                Bind::Texts(vec!["p".into(), "q".into()]),
                Bind::Text("b".into()),
                Bind::Number(2.0),
            ]
        );
        assert_eq!(Filter::all().to_sql(&Test, 1).condition, "TRUE");
    }
}

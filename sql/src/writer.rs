//! Writes SQL text ourselves: identifiers quoted by us, every value a bound
//! parameter. Nothing the model sends reaches the statement as text.

use super::schema::{Column, ColumnKind, Dialect};

/// A value bound to a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// SQL `NULL`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text; on PostgreSQL usually cast to the column's type by the placeholder.
    Text(String),
    /// Raw bytes.
    Bytes(Vec<u8>),
}

/// Builds one statement: SQL text plus the values of its placeholders.
#[derive(Debug, Clone)]
pub struct SqlWriter {
    dialect: Dialect,
    sql: String,
    binds: Vec<Bind>,
}

impl SqlWriter {
    /// An empty statement in `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        SqlWriter {
            dialect,
            sql: String::with_capacity(128),
            binds: Vec::new(),
        }
    }

    /// The dialect being written.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Appends trusted SQL text (keywords, operators): never model input.
    pub fn push(&mut self, sql: &str) -> &mut Self {
        self.sql.push_str(sql);
        self
    }

    /// Appends an identifier, double-quoted with inner quotes doubled.
    pub fn push_ident(&mut self, name: &str) -> &mut Self {
        quote_ident(&mut self.sql, name);
        self
    }

    /// Appends a placeholder bound to `value`. With a `column` on PostgreSQL,
    /// a text or null value is cast to the column's type (`$1::integer`), so
    /// the database types the literal exactly as it would for that column.
    pub fn push_bind(&mut self, value: Bind, column: Option<&Column>) -> &mut Self {
        self.binds.push(value);
        let n = self.binds.len();
        match self.dialect {
            Dialect::Postgres => {
                self.sql.push('$');
                self.sql.push_str(&n.to_string());
                if let (Some(c), Bind::Text(_) | Bind::Null) = (column, &self.binds[n - 1])
                    && c.kind != ColumnKind::Text
                {
                    self.sql.push_str("::");
                    self.sql.push_str(&c.sql_type);
                }
            }
            Dialect::Sqlite => {
                self.sql.push('?');
                self.sql.push_str(&n.to_string());
            }
        }
        self
    }

    /// The SQL text so far.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The statement's text and bound values.
    pub fn finish(self) -> (String, Vec<Bind>) {
        (self.sql, self.binds)
    }
}

/// Appends `name` to `out` as a double-quoted identifier, inner quotes doubled.
pub fn quote_ident(out: &mut String, name: &str) {
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
}

/// `text` shortened to 60 characters for a message, so a huge argument is never echoed whole.
pub fn clip(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

//! What the tools know about a table: its columns and their types, read from
//! the live database on every call, never cached, so a changed schema is
//! seen at once.

/// Which SQL dialect a statement is written and checked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// PostgreSQL (and Neon).
    Postgres,
    /// SQLite.
    Sqlite,
}

/// The family of a column's type: decides how a literal is bound and how a
/// value is returned as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Whole numbers.
    Integer,
    /// Binary floating point.
    Float,
    /// Exact decimals (`numeric`), returned as strings.
    Numeric,
    /// Text of any kind.
    Text,
    /// `true` / `false`.
    Boolean,
    /// Dates, times and timestamps.
    Temporal,
    /// `json` / `jsonb`.
    Json,
    /// `bytea` / `BLOB`.
    Bytes,
    /// Anything else (uuid, enums, arrays, ...): bound as text and cast by the database.
    Other,
}

impl ColumnKind {
    /// Whether `LIKE` / `ILIKE` applies to the column.
    pub fn is_text(self) -> bool {
        matches!(self, ColumnKind::Text)
    }
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column's name, exactly as the catalog spells it.
    pub name: String,
    /// Its type family.
    pub kind: ColumnKind,
    /// The type as the catalog writes it (PostgreSQL `format_type`, SQLite's
    /// declared type). On PostgreSQL bound values are cast to it, so the
    /// database's own input function types a literal.
    pub sql_type: String,
}

/// A table the tool may use, with its columns in catalog order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The table's name, exactly as the catalog spells it.
    pub name: String,
    /// Its columns.
    pub columns: Vec<Column>,
}

impl Table {
    /// The column named `name`: an exact match first, then the only
    /// case-insensitive one (unquoted SQL identifiers ignore case).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name).or_else(|| {
            let mut found = self
                .columns
                .iter()
                .filter(|c| c.name.eq_ignore_ascii_case(name));
            match (found.next(), found.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        })
    }

    /// "id, name, email": the column list a suggestion shows.
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

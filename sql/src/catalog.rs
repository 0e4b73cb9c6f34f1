//! What the describe and upsert tools read from the live catalog beyond a
//! table's columns: nullability, defaults, keys, foreign keys and an
//! approximate row count. Names come back exactly as the catalog spells
//! them; the caller filters them through the tool's allow and deny lists.

use super::database::Session;
use super::error::classify;
use super::response::ToolError;

/// Rows counted at most when the database keeps no estimate (SQLite, or a
/// PostgreSQL table never analysed): past it the count is a lower bound.
pub const COUNT_CAP: i64 = 100_000;

/// Whether a relation is a table or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    /// A table (on PostgreSQL also a partitioned or foreign table).
    Table,
    /// A view (on PostgreSQL also a materialised view).
    View,
}

impl RelationKind {
    /// From the catalog queries' `'table'` or `'view'`.
    fn of(kind: &str) -> RelationKind {
        if kind == "view" {
            RelationKind::View
        } else {
            RelationKind::Table
        }
    }

    /// `table` or `view`, as the describe tool answers.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::View => "view",
        }
    }
}

/// One column, as the describe tool reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnInfo {
    /// The column's name.
    pub name: String,
    /// Its type as the catalog writes it.
    pub sql_type: String,
    /// Whether it accepts NULL.
    pub nullable: bool,
    /// Its default expression, if any (identity and generated columns say
    /// so here).
    pub default: Option<String>,
}

/// A foreign key of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKey {
    /// The table's columns, in key order.
    pub columns: Vec<String>,
    /// The schema of the referenced table (`None` on SQLite).
    pub schema: Option<String>,
    /// The referenced table.
    pub table: String,
    /// Its columns, in key order.
    pub references: Vec<String>,
}

/// The column lists that identify one row of a table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// The primary key's columns (empty when there is none).
    pub primary: Vec<String>,
    /// The column lists of the other unique constraints and indexes.
    pub unique: Vec<Vec<String>>,
}

impl Keys {
    /// Every key: the primary key first.
    pub fn all(&self) -> impl Iterator<Item = &Vec<String>> {
        std::iter::once(&self.primary)
            .filter(|k| !k.is_empty())
            .chain(&self.unique)
    }
}

/// What the catalog says of one relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// Table or view.
    pub kind: RelationKind,
    /// The columns, in catalog order.
    pub columns: Vec<ColumnInfo>,
    /// The primary key's columns (empty when there is none).
    pub primary_key: Vec<String>,
    /// The column lists of the other unique constraints and indexes (not
    /// partial, no expressions).
    pub unique: Vec<Vec<String>>,
    /// The foreign keys.
    pub foreign_keys: Vec<ForeignKey>,
}

impl Session {
    /// The tables and views of the schema, with their kinds, by name.
    pub async fn relations(&mut self) -> Result<Vec<(String, RelationKind)>, ToolError> {
        let rows: Vec<(String, String)> = match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, schema, .. } => sqlx::query_as(
                "SELECT c.relname::text, CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END \
                 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'p', 'f') ORDER BY 1",
            )
            .bind(schema.as_str())
            .fetch_all(&mut **tx)
            .await,
            #[cfg(feature = "sqlite")]
            sqlite => sqlx::query_as(
                "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') \
                 AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY 1",
            )
            .fetch_all(sqlite.sqlite().expect("a SQLite session"))
            .await,
        }
        .map_err(|e| classify(&e))?;
        Ok(rows
            .into_iter()
            .map(|(name, kind)| (name, RelationKind::of(&kind)))
            .collect())
    }

    /// The catalog's description of `table` (an exact catalog name), or
    /// `None` when the schema has no such relation.
    pub async fn describe(&mut self, table: &str) -> Result<Option<Description>, ToolError> {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { .. } => self.describe_postgres(table).await,
            #[cfg(feature = "sqlite")]
            _ => self.describe_sqlite(table).await,
        }
    }

    #[cfg(feature = "postgres")]
    async fn describe_postgres(&mut self, table: &str) -> Result<Option<Description>, ToolError> {
        let keys = self.keys(table).await?;
        // Irrefutable in a build without SQLite.
        #[allow(irrefutable_let_patterns)]
        let Session::Postgres { tx, schema, .. } = self else {
            unreachable!("called on PostgreSQL sessions")
        };
        let schema = schema.as_str();
        // The relation's kind comes with each of its columns: no columns, no relation.
        let columns: Vec<(String, String, String, bool, Option<String>)> = sqlx::query_as(
            "SELECT CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END, \
             a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, \
             CASE WHEN a.attidentity = 'a' THEN 'generated always as identity' \
                  WHEN a.attidentity = 'd' THEN 'generated by default as identity' \
                  WHEN a.attgenerated = 's' THEN 'generated always as (' || pg_catalog.pg_get_expr(d.adbin, d.adrelid) || ') stored' \
                  ELSE pg_catalog.pg_get_expr(d.adbin, d.adrelid) END \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'v', 'm', 'p', 'f') \
               AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attnum",
        )
        .bind(schema)
        .bind(table)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| classify(&e))?;
        let Some(kind) = columns.first().map(|c| RelationKind::of(&c.0)) else {
            return Ok(None);
        };
        let foreign: Vec<(String, String, Vec<String>, Vec<String>)> = sqlx::query_as(
            "SELECT rn.nspname::text, rc.relname::text, \
               ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord) \
                     JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum \
                     ORDER BY k.ord), \
               ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord) \
                     JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum \
                     ORDER BY k.ord) \
             FROM pg_catalog.pg_constraint con \
             JOIN pg_catalog.pg_class c ON c.oid = con.conrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_catalog.pg_class rc ON rc.oid = con.confrelid \
             JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace \
             WHERE con.contype = 'f' AND con.conparentid = 0 AND n.nspname = $1 AND c.relname = $2 \
             ORDER BY con.conname",
        )
        .bind(schema)
        .bind(table)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| classify(&e))?;
        Ok(Some(Description {
            kind,
            columns: columns
                .into_iter()
                .map(|(_, name, sql_type, nullable, default)| ColumnInfo {
                    name,
                    sql_type,
                    nullable,
                    default,
                })
                .collect(),
            primary_key: keys.primary,
            unique: keys.unique,
            foreign_keys: foreign
                .into_iter()
                .map(|(schema, table, columns, references)| ForeignKey {
                    columns,
                    schema: Some(schema),
                    table,
                    references,
                })
                .collect(),
        }))
    }

    #[cfg(feature = "sqlite")]
    async fn describe_sqlite(&mut self, table: &str) -> Result<Option<Description>, ToolError> {
        let keys = self.keys(table).await?;
        let conn = self.sqlite().expect("a SQLite session");
        // The relation's kind comes with each of its columns; only user
        // tables and views (`pragma_table_info` alone also describes
        // `sqlite_schema`).
        let columns: Vec<(String, String, String, bool, Option<String>, i64)> = sqlx::query_as(
            "SELECT s.type, p.name, p.type, p.\"notnull\", p.dflt_value, p.pk \
             FROM sqlite_schema s, pragma_table_info(s.name) p \
             WHERE s.type IN ('table', 'view') AND s.name = ?1 \
               AND s.name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY p.cid",
        )
        .bind(table)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| classify(&e))?;
        let Some(kind) = columns.first().map(|c| RelationKind::of(&c.0)) else {
            return Ok(None);
        };
        let links: Vec<(i64, String, String, Option<String>)> = sqlx::query_as(
            "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
        )
        .bind(table)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| classify(&e))?;
        let mut foreign_keys: Vec<(i64, ForeignKey)> = Vec::new();
        for (id, parent, from, to) in links {
            if foreign_keys.last().is_none_or(|(last, _)| *last != id) {
                foreign_keys.push((
                    id,
                    ForeignKey {
                        columns: Vec::new(),
                        schema: None,
                        table: parent,
                        references: Vec::new(),
                    },
                ));
            }
            let key = &mut foreign_keys.last_mut().expect("pushed above").1;
            key.columns.push(from);
            // No `to`: the parent's primary key, filled in below.
            key.references.extend(to);
        }
        for (_, key) in &mut foreign_keys {
            if key.references.len() < key.columns.len() {
                key.references = sqlite_primary_key(conn, &key.table).await?;
            }
        }
        // A lone INTEGER PRIMARY KEY is the rowid: never NULL (a row
        // inserted without it gets the next id). Any other column, a key's
        // included, takes NULL unless declared NOT NULL.
        let rowid = match (keys.primary.as_slice(), columns.iter().find(|c| c.5 > 0)) {
            ([_], Some(c)) if c.2.eq_ignore_ascii_case("integer") => Some(c.1.clone()),
            _ => None,
        };
        Ok(Some(Description {
            kind,
            columns: columns
                .into_iter()
                .map(|(_, name, sql_type, not_null, default, _)| ColumnInfo {
                    nullable: !not_null && rowid.as_ref() != Some(&name),
                    name,
                    sql_type,
                    default,
                })
                .collect(),
            primary_key: keys.primary,
            unique: keys.unique,
            foreign_keys: foreign_keys.into_iter().map(|(_, key)| key).collect(),
        }))
    }

    /// The primary key and the other unique keys of `table` (an exact
    /// catalog name): unique constraints and indexes on plain columns that
    /// are neither partial nor deferrable.
    pub async fn keys(&mut self, table: &str) -> Result<Keys, ToolError> {
        let mut keys = Keys::default();
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, schema, .. } => {
                // Unique indexes over plain columns (a constraint has one too), the
                // primary key first; INCLUDE columns are not part of the key.
                let rows: Vec<(bool, Vec<String>)> = sqlx::query_as(
                    "SELECT i.indisprimary, array_agg(a.attname::text ORDER BY k.ord) \
                     FROM pg_catalog.pg_index i \
                     JOIN pg_catalog.pg_class c ON c.oid = i.indrelid \
                     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                     CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord) \
                     JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum \
                     WHERE n.nspname = $1 AND c.relname = $2 AND i.indisunique AND i.indpred IS NULL \
                       AND i.indexprs IS NULL AND i.indimmediate AND i.indisvalid AND k.ord <= i.indnkeyatts \
                     GROUP BY i.indexrelid, i.indisprimary ORDER BY NOT i.indisprimary, i.indexrelid",
                )
                .bind(schema.as_str())
                .bind(table)
                .fetch_all(&mut **tx)
                .await
                .map_err(|e| classify(&e))?;
                for (primary, columns) in rows {
                    if primary {
                        keys.primary = columns;
                    } else if !keys.unique.contains(&columns) {
                        keys.unique.push(columns);
                    }
                }
            }
            #[cfg(feature = "sqlite")]
            sqlite => {
                let conn = sqlite.sqlite().expect("a SQLite session");
                keys.primary = sqlite_primary_key(conn, table).await?;
                // Unique indexes, the primary key's own among them (origin `pk`).
                let indexes: Vec<(String, String)> = sqlx::query_as(
                    "SELECT name, origin FROM pragma_index_list(?1) WHERE \"unique\" = 1 AND partial = 0 \
                     ORDER BY seq DESC",
                )
                .bind(table)
                .fetch_all(&mut *conn)
                .await
                .map_err(|e| classify(&e))?;
                for (index, origin) in indexes {
                    let names: Vec<Option<String>> =
                        sqlx::query_scalar("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
                            .bind(&index)
                            .fetch_all(&mut *conn)
                            .await
                            .map_err(|e| classify(&e))?;
                    // A NULL name is an expression.
                    let Some(names) = names.into_iter().collect::<Option<Vec<String>>>() else {
                        continue;
                    };
                    if origin != "pk" && names != keys.primary && !keys.unique.contains(&names) {
                        keys.unique.push(names);
                    }
                }
            }
        }
        Ok(keys)
    }

    /// About how many rows `table` (a catalog name) holds: PostgreSQL's
    /// estimate where it keeps one, else a count that stops at
    /// [`COUNT_CAP`] (`true`: there are at least that many).
    pub async fn approximate_rows(&mut self, table: &str) -> Result<(i64, bool), ToolError> {
        // Irrefutable in a build without SQLite.
        #[cfg(feature = "postgres")]
        #[allow(irrefutable_let_patterns)]
        if let Session::Postgres { tx, schema, .. } = self {
            let estimate: Option<f32> = sqlx::query_scalar(
                "SELECT c.reltuples FROM pg_catalog.pg_class c \
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = $1 AND c.relname = $2",
            )
            .bind(schema.as_str())
            .bind(table)
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| classify(&e))?;
            // -1: never analysed (0 before PostgreSQL 14, which a count confirms cheaply).
            if let Some(estimate) = estimate.filter(|e| *e > 0.0) {
                return Ok((estimate.round() as i64, false));
            }
        }
        let count = self.count(table, Some(COUNT_CAP)).await?;
        Ok((count, count >= COUNT_CAP))
    }
}

/// The primary key's columns of SQLite table `table`, in key order.
#[cfg(feature = "sqlite")]
async fn sqlite_primary_key(
    conn: &mut sqlx::SqliteConnection,
    table: &str,
) -> Result<Vec<String>, ToolError> {
    sqlx::query_scalar("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")
        .bind(table)
        .fetch_all(conn)
        .await
        .map_err(|e| classify(&e))
}

//! A vector store in a SQLite file: nodekit's default.
//!
//! One file holds any number of collections:
//!
//! | table | columns |
//! | --- | --- |
//! | `nodekit_vs_collections` | `name` (key), `dims` (the length of its vectors, fixed by the first insert), `created_at` |
//! | `nodekit_vs_documents` | `id` (row id), `collection`, `doc_id` (the document's id, unique in its collection), `content`, `metadata` (JSON), `embedding` (little-endian `f32`s, sqlite-vec's format) |
//!
//! Searches: a collection is held in this process's memory once loaded
//! (exact up to 4,096 documents, then an HNSW graph with the `ann`
//! feature), so an unfiltered search is a lookup in memory and one read of
//! the `k` rows, scored exactly. It loads in the background on first use;
//! until then, and for searches with a filter, sqlite-vec's
//! `vec_distance_cosine` scans the collection (exact). Rows another process
//! writes are read within a quarter second of the next search; rows it
//! deletes are noticed when a search meets them.
//!
//! Scores are cosine similarities, highest first. Writes are transactions:
//! a batch is added whole or not at all.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteRow};

use nodekit_core::document::Document;
use nodekit_core::error::{Result, quoted};
use nodekit_core::vector_store::{Bind, SqlDialect};
use nodekit_core::vector_store::{
    EXACT_LIMIT, Entry, Filter, Found, Selection, VectorStore, check_dimensions, check_vector,
    last_of_each_id, store_error,
};
use nodekit_vector_index::{
    Breadth, Index, Throttle, absorb_later, bytes_vector, dot, normalised, vector_bytes,
};

/// Rows read per query while loading a collection.
const PAGE: i64 = 4_096;
/// Rows written per statement.
const ROWS_PER_INSERT: usize = 200;
/// How often a search looks for rows another process wrote.
const CATCH_UP_EVERY: Duration = Duration::from_millis(250);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS nodekit_vs_collections (
    name       TEXT    NOT NULL PRIMARY KEY,
    dims       INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS nodekit_vs_documents (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    collection TEXT    NOT NULL,
    doc_id     TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    metadata   TEXT    NOT NULL DEFAULT '{}',
    embedding  BLOB    NOT NULL,
    UNIQUE (collection, doc_id)
);
CREATE INDEX IF NOT EXISTS nodekit_vs_documents_collection_idx
    ON nodekit_vs_documents (collection, id);
";

/// A collection of documents in a SQLite file; see the module docs.
#[derive(Debug, Clone)]
pub struct SqliteVectorStore {
    db: Arc<Db>,
    collection: String,
}

#[derive(Debug)]
struct Db {
    read: SqlitePool,
    write: SqlitePool,
    /// The collections held in memory, by name.
    held: Mutex<HashMap<String, Arc<Held>>>,
}

/// One collection in memory.
#[derive(Debug)]
struct Held {
    index: Arc<Index>,
    /// The highest row id read.
    max_id: AtomicI64,
    /// Set once the first load has read every row.
    ready: AtomicBool,
    /// Set by a write of this process while a load runs: the load reads again.
    dirty: AtomicBool,
    /// One reader of new rows at a time.
    filling: tokio::sync::Mutex<()>,
    /// When a search may next read rows another process wrote.
    catch_up: Throttle,
}

fn db_error(e: sqlx::Error) -> nodekit_core::error::Error {
    nodekit_core::vector_store::VectorStoreError::Store(nodekit_db::store_error(
        Some(nodekit_core::error::Backend::Sqlite),
        e,
    ))
    .into()
}

/// The databases this process opened, by canonical path: stores opened on
/// one file share their connections and what they hold in memory.
fn databases() -> std::sync::MutexGuard<'static, HashMap<String, Arc<Db>>> {
    static ALL: OnceLock<Mutex<HashMap<String, Arc<Db>>>> = OnceLock::new();
    ALL.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// How SQLite spells a filter: values read from the metadata JSON by a
/// bound path, lists bound as JSON arrays.
struct Sqlite;

impl SqlDialect for Sqlite {
    fn key(&self, key: &str) -> String {
        format!("$.\"{key}\"")
    }
    fn text(&self, key: &str) -> String {
        format!(
            "(CASE json_type(metadata, {key}) WHEN 'text' THEN json_extract(metadata, {key}) \
             WHEN 'null' THEN NULL ELSE metadata -> {key} END)"
        )
    }
    fn number(&self, key: &str) -> String {
        format!(
            "(CASE WHEN json_type(metadata, {key}) IN ('integer', 'real') THEN json_extract(metadata, {key}) END)"
        )
    }
    fn contains(&self, key: &str, list: &str) -> String {
        format!(
            "EXISTS (SELECT 1 FROM json_each(metadata, {key}) AS e, json_each({list}) AS l \
             WHERE e.type = 'text' AND e.value = l.value)"
        )
    }
    fn one_of(&self, value: &str, list: &str) -> String {
        format!("{value} IN (SELECT value FROM json_each({list}))")
    }
}

/// Binds a filter's values after a query's own.
fn bind_filter<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    binds: &'q [Bind],
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    for b in binds {
        query = match b {
            Bind::Text(t) => query.bind(t.as_str()),
            Bind::Number(n) => query.bind(*n),
            Bind::Texts(ts) => query.bind(Value::from(ts.clone()).to_string()),
        };
    }
    query
}

/// SQLite's JSON paths cannot quote a `"`: such keys are refused.
fn check_filter(filter: &Filter) -> Result<()> {
    match filter.keys().into_iter().find(|k| k.contains('"')) {
        Some(k) => Err(store_error(format!(
            "a filter key may not hold `\"` in a SQLite store: `{}`",
            quoted(k)
        ))),
        None => Ok(()),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A row read for a search.
struct DocRow {
    key: i64,
    doc_id: String,
    content: String,
    metadata: String,
}

impl DocRow {
    /// From a row whose first columns are `id, doc_id, content, metadata`.
    fn read(r: &SqliteRow) -> DocRow {
        DocRow {
            key: r.get(0),
            doc_id: r.get(1),
            content: r.get(2),
            metadata: r.get(3),
        }
    }

    fn document(self) -> Document {
        let metadata = match serde_json::from_str::<Value>(&self.metadata) {
            Ok(Value::Object(m)) => m,
            _ => {
                tracing::warn!(id = %self.doc_id, "vector store: a document's metadata is not a JSON object; read as empty");
                Map::new()
            }
        };
        Document {
            page_content: self.content,
            metadata,
            id: Some(self.doc_id),
        }
    }
}

impl SqliteVectorStore {
    /// The collection `collection` of the SQLite file at `path` (created,
    /// with its tables, when missing; WAL mode). Stores opened on one file
    /// share their connections and what they hold in memory.
    pub async fn open(path: impl AsRef<Path>, collection: &str) -> Result<SqliteVectorStore> {
        let path = path.as_ref();
        if collection.is_empty() {
            return Err(store_error("a collection needs a name"));
        }
        let identity = std::fs::canonicalize(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string();
        if let Some(db) = databases().get(&identity).cloned() {
            return Ok(SqliteVectorStore {
                db,
                collection: collection.to_owned(),
            });
        }
        nodekit_db::sqlite::register_sqlite_vec();
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(db_error)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(10));
        let cannot = |e: sqlx::Error| {
            store_error(format!(
                "cannot open {}: {e}",
                quoted(&path.display().to_string())
            ))
        };
        let write = nodekit_db::sqlite::pool_options(1)
            .connect_with(options.clone())
            .await
            .map_err(cannot)?;
        sqlx::raw_sql(SCHEMA)
            .execute(&write)
            .await
            .map_err(db_error)?;
        let read = nodekit_db::sqlite::pool_options(4)
            .connect_with(options)
            .await
            .map_err(cannot)?;
        let db = Arc::new(Db {
            read,
            write,
            held: Mutex::default(),
        });
        // Another caller may have opened it meanwhile: keep the first.
        let db = databases().entry(identity).or_insert(db).clone();
        Ok(SqliteVectorStore {
            db,
            collection: collection.to_owned(),
        })
    }

    /// The collection's name.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// Whether documents still wait to go into the collection's search
    /// graph (searches scan them exactly meanwhile; a background thread
    /// moves them in).
    pub fn indexing(&self) -> bool {
        self.db
            .held
            .lock()
            .ok()
            .and_then(|h| h.get(&self.collection).map(|h| h.index.pending() > 0))
            .unwrap_or(false)
    }

    /// Whether the collection is held in this process's memory, so
    /// unfiltered searches answer from it (the first search or write
    /// starts loading it).
    pub fn loaded(&self) -> bool {
        self.db
            .held
            .lock()
            .ok()
            .and_then(|h| {
                h.get(&self.collection)
                    .map(|h| h.ready.load(Ordering::SeqCst))
            })
            .unwrap_or(false)
    }

    /// The collections of this file, sorted.
    pub async fn collections(&self) -> Result<Vec<String>> {
        sqlx::query_scalar("SELECT name FROM nodekit_vs_collections ORDER BY name")
            .fetch_all(&self.db.read)
            .await
            .map_err(db_error)
    }

    /// How many documents the collection holds.
    pub async fn count(&self) -> Result<u64> {
        let n: i64 =
            sqlx::query_scalar("SELECT count(*) FROM nodekit_vs_documents WHERE collection = $1")
                .bind(&self.collection)
                .fetch_one(&self.db.read)
                .await
                .map_err(db_error)?;
        Ok(n as u64)
    }

    /// Removes the collection and its documents.
    pub async fn drop_collection(&self) -> Result<()> {
        let mut tx = self.db.write.begin().await.map_err(db_error)?;
        for sql in [
            "DELETE FROM nodekit_vs_documents WHERE collection = $1",
            "DELETE FROM nodekit_vs_collections WHERE name = $1",
        ] {
            sqlx::query(sql)
                .bind(&self.collection)
                .execute(&mut *tx)
                .await
                .map_err(db_error)?;
        }
        tx.commit().await.map_err(db_error)?;
        self.forget();
        Ok(())
    }

    fn forget(&self) {
        if let Ok(mut held) = self.db.held.lock() {
            held.remove(&self.collection);
        }
    }

    async fn dims(&self) -> Result<Option<usize>> {
        let dims: Option<i64> =
            sqlx::query_scalar("SELECT dims FROM nodekit_vs_collections WHERE name = $1")
                .bind(&self.collection)
                .fetch_optional(&self.db.read)
                .await
                .map_err(db_error)?;
        Ok(dims.map(|d| d as usize))
    }

    /// The collection in memory, loaded or loading; the first call starts
    /// the load in the background.
    fn entry(&self, dims: usize) -> Option<Arc<Held>> {
        let mut all = self.db.held.lock().ok()?;
        if let Some(h) = all.get(&self.collection) {
            return (h.index.dims() == dims).then(|| h.clone());
        }
        let held = Arc::new(Held {
            index: Arc::new(Index::new(dims, Breadth::DOCUMENTS)),
            max_id: AtomicI64::new(0),
            ready: AtomicBool::new(false),
            dirty: AtomicBool::new(false),
            filling: tokio::sync::Mutex::new(()),
            catch_up: Throttle::new(CATCH_UP_EVERY),
        });
        all.insert(self.collection.clone(), held.clone());
        let (store, loading) = (self.clone(), held.clone());
        tokio::spawn(async move {
            let _filling = loading.filling.lock().await;
            if let Err(e) = store.fill(&loading, true).await {
                tracing::warn!(collection = %store.collection, error = %e, "vector store: cannot load the collection; searching the file");
                store.forget();
            }
        });
        Some(held)
    }

    /// The collection in memory once loaded.
    fn held(&self, dims: usize) -> Option<Arc<Held>> {
        self.entry(dims).filter(|h| h.ready.load(Ordering::SeqCst))
    }

    /// Reads the collection's rows above the highest id held into memory,
    /// again while a write of this process marked it dirty; then it is
    /// ready. Into the graph at once while loading (`absorb_now`), else in
    /// the background (searches scan them exactly until then). The caller
    /// holds `held.filling`.
    async fn fill(&self, held: &Arc<Held>, absorb_now: bool) -> Result<()> {
        loop {
            self.read_new_rows(held, absorb_now).await?;
            held.ready.store(true, Ordering::SeqCst);
            if !held.dirty.swap(false, Ordering::SeqCst) {
                if held.index.pending() > 0 {
                    absorb_later(&held.index);
                }
                return Ok(());
            }
        }
    }

    async fn read_new_rows(&self, held: &Arc<Held>, absorb_now: bool) -> Result<()> {
        loop {
            let after = held.max_id.load(Ordering::Acquire);
            let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
                "SELECT id, embedding FROM nodekit_vs_documents
                 WHERE collection = $1 AND id > $2 ORDER BY id LIMIT $3",
            )
            .bind(&self.collection)
            .bind(after)
            .bind(PAGE)
            .fetch_all(&self.db.read)
            .await
            .map_err(db_error)?;
            let Some(&(last, _)) = rows.last() else {
                return Ok(());
            };
            let full = rows.len() as i64 == PAGE;
            let adding = held.clone();
            tokio::task::spawn_blocking(move || {
                let vectors: Vec<(i64, Vec<f32>)> = rows
                    .into_iter()
                    .map(|(id, b)| (id, bytes_vector(&b)))
                    .collect();
                let rows: Vec<(i64, &[f32])> =
                    vectors.iter().map(|(id, v)| (*id, v.as_slice())).collect();
                adding
                    .index
                    .add(&rows, EXACT_LIMIT)
                    .map_err(|e| store_error(e.0))?;
                if absorb_now {
                    adding.index.absorb().map_err(|e| store_error(e.0))?;
                }
                adding.max_id.fetch_max(last, Ordering::AcqRel);
                Ok::<(), nodekit_core::error::Error>(())
            })
            .await
            .map_err(|e| store_error(format!("loading a collection stopped: {e}")))??;
            if !full {
                return Ok(());
            }
        }
    }

    /// After a write of this process: what it deleted leaves memory now,
    /// and what it added is read in before the call returns (or by the load
    /// still running), so its next search finds it.
    async fn after_write(&self, dims: usize, removed: &[i64]) -> Result<()> {
        let Some(held) = self.entry(dims) else {
            return Ok(());
        };
        held.index.remove(removed).map_err(|e| store_error(e.0))?;
        held.dirty.store(true, Ordering::SeqCst);
        if held.ready.load(Ordering::SeqCst) {
            let _filling = held.filling.lock().await;
            self.fill(&held, false).await?;
        }
        Ok(())
    }

    /// Reads rows other processes wrote, in the background, at most every
    /// [`CATCH_UP_EVERY`].
    fn catch_up(&self, held: &Arc<Held>) {
        if !held.catch_up.due() {
            return;
        }
        let (store, held) = (self.clone(), held.clone());
        tokio::spawn(async move {
            let Ok(_filling) = held.filling.try_lock() else {
                return;
            };
            if let Err(e) = store.fill(&held, false).await {
                tracing::warn!(collection = %store.collection, error = %e, "vector store: catch-up failed");
            }
        });
    }

    async fn add_now(&self, entries: &[Entry]) -> Result<Vec<String>> {
        let Some(first) = entries.first() else {
            return Ok(Vec::new());
        };
        let dims = first.vector.len();
        for e in entries {
            check_vector(dims, &e.vector)?;
        }
        let ids: Vec<String> = entries
            .iter()
            .map(|e| {
                e.document
                    .id
                    .clone()
                    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
            })
            .collect();
        let mut tx = self.db.write.begin().await.map_err(db_error)?;
        sqlx::query(
            "INSERT INTO nodekit_vs_collections (name, dims, created_at) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(&self.collection)
        .bind(dims as i64)
        .bind(now_ms())
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
        let stored: i64 =
            sqlx::query_scalar("SELECT dims FROM nodekit_vs_collections WHERE name = $1")
                .bind(&self.collection)
                .fetch_one(&mut *tx)
                .await
                .map_err(db_error)?;
        check_dimensions(stored as usize, dims, "a vector")?;
        // A given id replaces its document: the old row goes, a new one comes.
        let replaced: Vec<i64> = sqlx::query_scalar(
            "DELETE FROM nodekit_vs_documents
             WHERE collection = $1 AND doc_id IN (SELECT value FROM json_each($2)) RETURNING id",
        )
        .bind(&self.collection)
        .bind(Value::from(ids.clone()).to_string())
        .fetch_all(&mut *tx)
        .await
        .map_err(db_error)?;
        let (written, written_ids) = last_of_each_id(entries, &ids);
        for (chunk, chunk_ids) in written
            .chunks(ROWS_PER_INSERT)
            .zip(written_ids.chunks(ROWS_PER_INSERT))
        {
            let mut sql = String::from(
                "INSERT INTO nodekit_vs_documents (collection, doc_id, content, metadata, embedding) VALUES ",
            );
            for i in 0..chunk.len() {
                let p = 2 + i * 4;
                if i > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&format!("($1, ${p}, ${}, ${}, ${})", p + 1, p + 2, p + 3));
            }

            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&self.collection);
            for (e, id) in chunk.iter().zip(chunk_ids) {
                query = query
                    .bind(id.as_str())
                    .bind(e.document.page_content.as_str())
                    .bind(Value::Object(e.document.metadata.clone()).to_string())
                    .bind(vector_bytes(&e.vector));
            }
            query.execute(&mut *tx).await.map_err(db_error)?;
        }
        tx.commit().await.map_err(db_error)?;
        self.after_write(dims, &replaced).await?;
        Ok(ids)
    }

    /// The rows of `keys` still in the table, scored against `query`
    /// (normalised), best first, and the keys whose rows are gone.
    async fn rows_scored(&self, query: &[f32], keys: &[i64]) -> Result<(Vec<Found>, Vec<i64>)> {
        let rows = sqlx::query(
            "SELECT id, doc_id, content, metadata, embedding FROM nodekit_vs_documents
             WHERE id IN (SELECT value FROM json_each($1)) AND collection = $2",
        )
        .bind(Value::from(keys.to_vec()).to_string())
        .bind(&self.collection)
        .fetch_all(&self.db.read)
        .await
        .map_err(db_error)?;
        let mut scored: Vec<(f32, DocRow)> = rows
            .iter()
            .map(|r| {
                let v: Vec<u8> = r.get(4);
                let row = DocRow::read(r);
                (cosine(query, &bytes_vector(&v)), row)
            })
            .collect();
        // Usually every row is there, and nothing more is looked up.
        let gone = if scored.len() < keys.len() {
            let present: BTreeSet<i64> = scored.iter().map(|(_, r)| r.key).collect();
            keys.iter()
                .copied()
                .filter(|k| !present.contains(k))
                .collect()
        } else {
            Vec::new()
        };
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.key.cmp(&b.1.key)));
        let found = scored
            .into_iter()
            .map(|(score, row)| Found {
                document: row.document(),
                score: f64::from(score),
            })
            .collect();
        Ok((found, gone))
    }

    /// sqlite-vec's exact scan of the collection, with the filter.
    async fn scan(&self, vector: &[f32], k: usize, filter: &Filter) -> Result<Vec<Found>> {
        check_filter(filter)?;
        let sql = filter.to_sql(&Sqlite, 4);
        let text = format!(
            "SELECT id, doc_id, content, metadata, vec_distance_cosine(embedding, $1) AS d
             FROM nodekit_vs_documents WHERE collection = $2 AND {}
             ORDER BY COALESCE(d, 1.0), id LIMIT $3",
            sql.condition
        );
        let query = sqlx::query(sqlx::AssertSqlSafe(text))
            .bind(vector_bytes(vector))
            .bind(&self.collection)
            .bind(k as i64);
        let rows = bind_filter(query, &sql.binds)
            .fetch_all(&self.db.read)
            .await
            .map_err(db_error)?;
        Ok(rows
            .iter()
            .map(|r| {
                let d: Option<f64> = r.get(4);
                let row = DocRow::read(r);
                Found {
                    document: row.document(),
                    // A zero vector has no direction: no similarity (and
                    // its place in the order is that of a distance of 1).
                    score: d.map_or(0.0, |d| 1.0 - d),
                }
            })
            .collect())
    }

    async fn search_now(&self, vector: &[f32], k: usize, filter: &Filter) -> Result<Vec<Found>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let Some(dims) = self.dims().await? else {
            return Ok(Vec::new());
        };
        check_vector(dims, vector)?;
        if filter.is_empty()
            && let Some(held) = self.held(dims)
        {
            self.catch_up(&held);
            let query = normalised(vector);
            // Deleted rows still in memory (another process's deletes, or
            // this one's between their commit and the index) are skipped by
            // the index's filter when the search runs again, and leave
            // memory in the background: the search does not wait for the
            // index to have the graph alone.
            let mut gone = BTreeSet::new();
            let mut answer = None;
            for _ in 0..3 {
                let skip = |key: i64| !gone.contains(&key);
                let keep = (!gone.is_empty()).then_some(&skip as &dyn Fn(i64) -> bool);
                let keys = held
                    .index
                    .search(&query, k, keep)
                    .map_err(|e| store_error(e.0))?
                    .into_keys();
                let (found, missing) = self.rows_scored(&query, &keys).await?;
                if missing.is_empty() {
                    answer = Some(found);
                    break;
                }
                gone.extend(missing);
            }
            if !gone.is_empty() {
                let (index, collection) = (held.index.clone(), self.collection.clone());
                let gone: Vec<i64> = gone.into_iter().collect();
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = index.remove(&gone) {
                        tracing::warn!(collection = %collection, error = %e.0, "vector store: cannot drop deleted rows from memory");
                    }
                });
            }
            if let Some(found) = answer {
                return Ok(found);
            }
        }
        self.scan(vector, k, filter).await
    }

    async fn delete_now(&self, which: &Selection) -> Result<u64> {
        let keys: Vec<i64> = match which {
            Selection::Ids(ids) => sqlx::query_scalar(
                "DELETE FROM nodekit_vs_documents
                 WHERE collection = $1 AND doc_id IN (SELECT value FROM json_each($2)) RETURNING id",
            )
            .bind(&self.collection)
            .bind(Value::from(ids.clone()).to_string())
            .fetch_all(&self.db.write)
            .await
            .map_err(db_error)?,
            Selection::Filter(filter) => {
                check_filter(filter)?;
                let sql = filter.to_sql(&Sqlite, 2);
                let text = format!(
                    "DELETE FROM nodekit_vs_documents WHERE collection = $1 AND {} RETURNING id",
                    sql.condition
                );
                let query = sqlx::query(sqlx::AssertSqlSafe(text)).bind(&self.collection);
                bind_filter(query, &sql.binds)
                    .fetch_all(&self.db.write)
                    .await
                    .map_err(db_error)?
                    .iter()
                    .map(|r| r.get(0))
                    .collect()
            }
        };
        let held = self
            .db
            .held
            .lock()
            .ok()
            .and_then(|h| h.get(&self.collection).cloned());
        if let Some(held) = held {
            held.index.remove(&keys).map_err(|e| store_error(e.0))?;
        }
        Ok(keys.len() as u64)
    }
}

/// The cosine similarity of a normalised `query` and `v`.
fn cosine(query: &[f32], v: &[f32]) -> f32 {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        dot(query, v) / norm
    } else {
        0.0
    }
}

impl VectorStore for SqliteVectorStore {
    fn dimensions(&self) -> BoxFuture<'_, Result<Option<usize>>> {
        Box::pin(self.dims())
    }

    fn add<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, Result<Vec<String>>> {
        Box::pin(self.add_now(entries))
    }

    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Found>>> {
        Box::pin(self.search_now(vector, k, filter))
    }

    fn delete<'a>(&'a self, which: &'a Selection) -> BoxFuture<'a, Result<u64>> {
        Box::pin(self.delete_now(which))
    }

    fn metadata_keys(&self) -> BoxFuture<'_, Result<Option<Vec<String>>>> {
        Box::pin(async move {
            let keys: Vec<String> = sqlx::query_scalar(
                "SELECT DISTINCT j.key FROM
                   (SELECT metadata FROM nodekit_vs_documents WHERE collection = $1 LIMIT 10000) AS d,
                   json_each(d.metadata) AS j ORDER BY j.key",
            )
            .bind(&self.collection)
            .fetch_all(&self.db.read)
            .await
            .map_err(db_error)?;
            Ok(Some(keys))
        })
    }
}

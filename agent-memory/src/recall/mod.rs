//! Semantic recall (tier 5): every message of a thread embedded once, and the
//! messages most similar to the new input brought back into the context,
//! each with its neighbours.
//!
//! # What is recalled
//!
//! [`Recall::search`] finds the `top_k` messages of *this thread* nearest to
//! the query (cosine distance), adds 2 messages before and 1 after each
//! match (by seq, as Mastra's `messageRange`), drops what the recent window
//! already holds and what another match already brought, and returns the
//! rest in seq order. Matches inside the excluded window do not count
//! towards `top_k`: the search asks the index for `top_k` plus the size of
//! the window. A range never splits a tool call from its results: it grows
//! by up to 8 messages on either side to take in the call of a result or
//! the results of a call, and a group still incomplete is left out.
//!
//! # Where a search runs
//!
//! In this process's memory ([`resident`]): once a thread is written to or
//! searched, its vectors are read from the database and kept, as a block
//! searched exactly while the thread has at most [`EXACT_LIMIT`] of them,
//! as an HNSW graph past that, whose best candidates are put in order by
//! a half-precision copy. The memory is bounded per database
//! ([`DEFAULT_CACHE_BYTES`]); a thread not held (dropped, or still
//! loading) is searched by the database's own index:
//!
//! | backend | vectors | the database's search |
//! | --- | --- | --- |
//! | SQLite | `nodekit_am_embeddings.vector` (little-endian `f32`s) and sqlite-vec's `vec0` virtual table `nodekit_am_vec`: rowid = message id, `thread_id` a **partition key**, `resource_id` and `seq` metadata columns, `float[N]` cosine | `embedding MATCH ? AND k = ? AND thread_id = ? AND resource_id = ?` over the thread's newest [`EXACT_LIMIT`] vectors (sqlite-vec's exact scan of the partition) |
//! | PostgreSQL with the `vector` extension | `nodekit_am_vectors(embedding vector(N))` with an **HNSW** index (`vector_cosine_ops`) and a B-tree on `thread_id` | threads of at most [`EXACT_LIMIT`] messages: their rows through the B-tree, sorted exactly; longer ones: `WHERE thread_id = $1 AND resource_id = $2 ORDER BY embedding <=> $3 LIMIT k` through the HNSW index (with `hnsw.iterative_scan = relaxed_order` on pgvector ≥ 0.8 and a wider `hnsw.ef_search`, so the thread filter does not starve the result; a short answer falls back to an exact scan of the newest vectors) |
//! | PostgreSQL without it | `nodekit_am_embeddings.vector` (`BYTEA`) | the newest [`EXACT_LIMIT`] vectors, exactly, in the process |
//!
//! The dimension is fixed by the first vector written to a store (recorded
//! in `nodekit_am_recall_meta`); a vector of another size later is an
//! [`AgentMemoryError::Recall`] naming both sizes (a store cannot mix embedders).
//!
//! The store runs `CREATE EXTENSION IF NOT EXISTS vector` when it writes its
//! first vector; the choice is recorded with the dimension and kept (a store
//! that started without pgvector stays on the fallback).
//!
//! sqlite-vec is compiled into the binary and registered with
//! `sqlite3_auto_extension`, so every SQLite connection opened afterwards
//! has it ([`Db::open_sqlite`] registers it first; pools given to
//! [`Db::from_sqlite_pools`] must connect after [`register_sqlite_vec`]).
//!
//! # Ownership and isolation
//!
//! Every query filters on thread *and* resource. The indexes return seqs,
//! and the messages around them are read from `nodekit_am_messages` with
//! the same filter (a seq whose message is not found there is dropped), so
//! a stale vector (a deleted thread whose id was reused) can never bring
//! back a message of another thread or resource. Vectors are deleted with
//! their thread; the vectors held for a thread another process replaced are
//! dropped at their next catch-up ([`resident`]).
//!
//! # Background indexing
//!
//! [`Recaller`] embeds appended messages on a tokio task, in batches of
//! [`EMBED_BATCH`]; `append` and requests never wait for it. Which messages
//! are indexed is read from the database (a `LEFT JOIN` of the messages on
//! `nodekit_am_embeddings`), so a failing or slow embedder loses nothing:
//! the thread stays queued and is retried with a growing delay (up to 60 s),
//! and a restarted process catches up with [`Recaller::catch_up`].

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use nodekit_core::embed::Embedder;
use nodekit_core::error::{Error, Result};
use nodekit_core::message::{Message, Role};

use super::AgentMemoryError;
#[cfg(feature = "sqlite")]
use super::db::Durability;
use super::db::{Attachment, Db, Pools, StoredMessage, ThreadInfo, check_id, on_reader};

mod indexer;
pub mod resident;
mod search;

pub use indexer::Recaller;
pub use resident::{DEFAULT_CACHE_BYTES, EXACT_LIMIT, RecallCache};
pub use search::DEFAULT_RECALL_TIMEOUT;
pub(crate) use search::{by_deadline, embed_query};

/// The first step of recall alone, for the benchmarks.
#[doc(hidden)]
pub mod bench {
    use super::*;

    /// The seqs of the thread's `k` messages nearest to `query`, nearest
    /// first: from memory when the thread is held, else from the database.
    pub async fn nearest(
        recall: &Recall,
        resource: &str,
        thread: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<i64>> {
        let Some(info) = recall.db.thread(resource, thread).await? else {
            return Ok(Vec::new());
        };
        recall
            .recall_candidates(resource, &info, query, k, None)
            .await
    }

    /// The same, by an exact scan of the thread in the database.
    pub async fn nearest_exact(
        recall: &Recall,
        resource: &str,
        thread: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<i64>> {
        let exact = recall.clone().with_exact_limit(i64::MAX);
        nearest(&exact, resource, thread, query, k).await
    }

    /// How many vectors of `thread` this process holds, once it is loaded.
    pub fn held(recall: &Recall, thread: &str) -> Option<usize> {
        recall.cache().held(thread)
    }
}

/// Texts per embedder call.
pub const EMBED_BATCH: usize = 64;
/// Messages before each match brought along.
pub const CONTEXT_BEFORE: i64 = 2;
/// Messages after each match brought along.
pub const CONTEXT_AFTER: i64 = 1;
/// sqlite-vec's largest `k`.
const MAX_K: usize = 4096;

#[cfg(feature = "sqlite")]
pub use nodekit_db::sqlite::register_sqlite_vec;

/// The text embedded for a message: its text, or its tool calls.
fn embed_text(m: &Message) -> String {
    let text = m.text();
    if !text.trim().is_empty() {
        return text;
    }
    m.tool_calls
        .iter()
        .map(|c| format!("{} {}", c.name, c.args))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(feature = "postgres")]
use nodekit_vector_index::pg_vector;
use nodekit_vector_index::{bytes_vector, vector_bytes};

#[cfg(feature = "postgres")]
fn cosine_distance(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    1.0 - dot / (na.sqrt() * nb.sqrt())
}

fn err(reason: impl Into<String>) -> Error {
    AgentMemoryError::Recall {
        reason: reason.into(),
    }
    .into()
}

/// A failed query of semantic recall, with the driver's error kept.
fn db(e: sqlx::Error) -> Error {
    AgentMemoryError::Store(nodekit_db::store_error(None, e).during("semantic recall")).into()
}

/// How a store's vectors are indexed (fixed at the first vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// sqlite-vec `vec0`.
    SqliteVec,
    /// pgvector with HNSW.
    PgVector,
    /// Exact search in the process over `BYTEA` vectors.
    BruteForce,
}

impl IndexKind {
    fn as_str(self) -> &'static str {
        match self {
            IndexKind::SqliteVec => "sqlite-vec",
            IndexKind::PgVector => "pgvector",
            IndexKind::BruteForce => "bytea",
        }
    }
    fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "sqlite-vec" => IndexKind::SqliteVec,
            "pgvector" => IndexKind::PgVector,
            "bytea" => IndexKind::BruteForce,
            other => return Err(err(format!("unknown index kind `{other}`"))),
        })
    }
}

/// The store's recall settings, once a vector was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecallIndex {
    /// The vectors' dimension.
    pub dims: usize,
    /// How they are indexed.
    pub kind: IndexKind,
}

/// Semantic recall over one agent-memory database: indexing messages,
/// and finding a thread's messages nearest to a query. Built on the
/// database a [`Store`](super::store::Store) uses
/// (`Recall::new(store.db())`); cheap to clone and to make again, since
/// what it keeps in memory belongs to the database.
///
/// ```
/// use nodekit::agent_memory::{Recall, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> nodekit::Result<()> {
/// let path = std::env::temp_dir().join(format!("nodekit-recall-docs-{}.db", std::process::id()));
/// let store = Store::open_sqlite(&path).await?;
/// let recall = Recall::new(store.db());
/// // Nothing is indexed yet: no vector dimension is fixed.
/// assert!(recall.recall_index().await?.is_none());
/// store.close().await;
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Recall {
    db: Db,
    held: Arc<Held>,
    /// Longest thread searched exactly.
    exact_limit: i64,
}

/// What recall keeps in this process for one [`Db`]: the vectors it holds
/// (shared by every `Db` on the same database) and the index once known.
#[derive(Debug)]
struct Held {
    cache: Arc<resident::Cache>,
    /// The recall index once known: it never changes afterwards.
    index: std::sync::OnceLock<RecallIndex>,
}

impl Attachment for Held {
    fn thread_deleted(&self, thread: &str) {
        self.cache.forget(thread);
    }
}

impl Recall {
    /// Recall on `db`, searching threads of up to [`EXACT_LIMIT`] messages
    /// exactly.
    pub fn new(db: &Db) -> Recall {
        let held = db.attachment(|| Held {
            cache: db
                .identity()
                .map(|identity| resident::shared(identity.to_owned()))
                .unwrap_or_default(),
            index: std::sync::OnceLock::new(),
        });
        Recall {
            db: db.clone(),
            held,
            exact_limit: EXACT_LIMIT,
        }
    }

    /// This recall searching threads of more than `limit` messages through
    /// an in-memory graph, shorter ones exactly (default [`EXACT_LIMIT`];
    /// see [`resident`]).
    pub fn with_exact_limit(mut self, limit: i64) -> Recall {
        self.exact_limit = limit.max(0);
        self
    }

    /// Longest thread searched exactly.
    pub fn exact_limit(&self) -> i64 {
        self.exact_limit
    }

    /// What this process holds in memory for this database's recall
    /// ([`resident`]).
    pub fn cache_stats(&self) -> RecallCache {
        self.held.cache.stats()
    }

    /// Bounds the memory this process keeps for this database's recall to
    /// `bytes` (default [`DEFAULT_CACHE_BYTES`]); shared by every `Db` of
    /// this process on the same database.
    pub fn with_cache_bytes(self, bytes: usize) -> Recall {
        self.held.cache.set_budget(bytes);
        self
    }

    /// The vectors this process keeps ([`resident`]).
    pub(crate) fn cache(&self) -> &resident::Cache {
        &self.held.cache
    }

    pub(crate) fn cache_arc(&self) -> Arc<resident::Cache> {
        self.held.cache.clone()
    }
}

impl Recall {
    /// The dimension and index kind, or `None` before the first vector.
    pub async fn recall_index(&self) -> Result<Option<RecallIndex>> {
        if let Some(index) = self.held.index.get() {
            return Ok(Some(*index));
        }
        let row: Option<(i64, String)> = on_reader!(self.db, pool => {
            sqlx::query_as("SELECT dims, index_kind FROM nodekit_am_recall_meta WHERE id = 1")
                .fetch_optional(pool)
                .await
                .map_err(db)?
        });
        match row {
            None => Ok(None),
            Some((dims, kind)) => {
                let index = RecallIndex {
                    dims: usize::try_from(dims)
                        .map_err(|_| err(format!("the recorded dimension {dims} is invalid")))?,
                    kind: IndexKind::parse(&kind)?,
                };
                Ok(Some(*self.held.index.get_or_init(|| index)))
            }
        }
    }

    /// The index for vectors of `dims`, created on first use; an error if
    /// the store holds vectors of another dimension.
    async fn ensure_index(&self, dims: usize) -> Result<RecallIndex> {
        if let Some(index) = self.recall_index().await? {
            return check_dims(index, dims);
        }
        if dims == 0 || dims > 16_000 {
            return Err(err(format!(
                "the embedder returned {dims}-dimension vectors"
            )));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        match self.db.pools() {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { write, .. } => {
                let mut tx = write.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
                let existing: Option<i64> =
                    sqlx::query_scalar("SELECT dims FROM nodekit_am_recall_meta WHERE id = 1")
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(db)?;
                if existing.is_none() {
                    let ddl = format!(
                        "CREATE VIRTUAL TABLE IF NOT EXISTS nodekit_am_vec USING vec0(
                            thread_id TEXT PARTITION KEY,
                            resource_id TEXT,
                            seq INTEGER,
                            embedding FLOAT[{dims}] distance_metric=cosine)"
                    );
                    sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| {
                            err(format!(
                                "cannot create the sqlite-vec index ({e}); was sqlite-vec registered before the pool connected?"
                            ))
                        })?;
                    sqlx::query("INSERT INTO nodekit_am_recall_meta (id, dims, index_kind, created_at) VALUES (1, $1, $2, $3)")
                        .bind(dims as i64)
                        .bind(IndexKind::SqliteVec.as_str())
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err(db)?;
                }
                tx.commit().await.map_err(db)?;
            }
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => {
                // Outside the transaction: a missing extension must not abort it.
                let _ = sqlx::query("CREATE EXTENSION IF NOT EXISTS vector")
                    .execute(pool)
                    .await;
                let mut tx = pool.begin().await.map_err(db)?;
                sqlx::query("LOCK TABLE nodekit_am_recall_meta IN EXCLUSIVE MODE")
                    .execute(&mut *tx)
                    .await
                    .map_err(db)?;
                let existing: Option<i64> =
                    sqlx::query_scalar("SELECT dims FROM nodekit_am_recall_meta WHERE id = 1")
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(db)?;
                if existing.is_none() {
                    // Visible from this connection's search path, not just
                    // installed in some schema.
                    let has_vector: bool =
                        sqlx::query_scalar("SELECT to_regtype('vector') IS NOT NULL")
                            .fetch_one(&mut *tx)
                            .await
                            .map_err(db)?;
                    let kind = if has_vector && dims <= 2000 {
                        let ddl = format!(
                            "CREATE TABLE IF NOT EXISTS nodekit_am_vectors (
                                message_id  BIGINT NOT NULL PRIMARY KEY,
                                thread_id   TEXT   NOT NULL,
                                resource_id TEXT   NOT NULL,
                                seq         BIGINT NOT NULL,
                                embedding   vector({dims}) NOT NULL
                            );
                            CREATE INDEX IF NOT EXISTS nodekit_am_vectors_thread_idx
                                ON nodekit_am_vectors (thread_id);
                            CREATE INDEX IF NOT EXISTS nodekit_am_vectors_hnsw_idx
                                ON nodekit_am_vectors USING hnsw (embedding vector_cosine_ops);"
                        );
                        sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
                            .execute(&mut *tx)
                            .await
                            .map_err(db)?;
                        IndexKind::PgVector
                    } else {
                        tracing::warn!(
                            "the PostgreSQL `vector` extension is missing: semantic recall keeps its vectors in `nodekit_am_embeddings`"
                        );
                        IndexKind::BruteForce
                    };
                    sqlx::query("INSERT INTO nodekit_am_recall_meta (id, dims, index_kind, created_at) VALUES (1, $1, $2, $3)")
                        .bind(dims as i64)
                        .bind(kind.as_str())
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err(db)?;
                }
                tx.commit().await.map_err(db)?;
            }
        }
        let index = self
            .recall_index()
            .await?
            .ok_or_else(|| err("the index was not recorded"))?;
        check_dims(index, dims)
    }

    /// Embeds `messages` of the thread (in batches of [`EMBED_BATCH`]) and
    /// writes their vectors; messages already indexed are skipped. Returns
    /// how many were written. Give them oldest first, with no unindexed
    /// message of the thread before them (as [`Recall::unindexed`] returns
    /// them): the vectors this process holds are read in that order
    /// ([`resident`]). [`Recall::index_pending`] does all of this.
    pub async fn index_messages(
        &self,
        resource: &str,
        thread: &str,
        messages: &[StoredMessage],
        embedder: &dyn Embedder,
    ) -> Result<usize> {
        // A thread deleted meanwhile stays deleted: nothing is written.
        let Some(info) = self.db.thread(resource, thread).await? else {
            return Ok(0);
        };
        let mut written = 0;
        let mut resident = None;
        for batch in messages.chunks(EMBED_BATCH) {
            let mut texts = Vec::with_capacity(batch.len());
            let mut with_text = Vec::with_capacity(batch.len());
            let mut empty = Vec::new();
            for m in batch {
                if m.thread_id != thread {
                    return Err(err(format!("message {} is not in thread `{thread}`", m.id)));
                }
                let text = embed_text(&m.message);
                if text.trim().is_empty() {
                    empty.push(m);
                } else {
                    texts.push(text);
                    with_text.push(m);
                }
            }
            let vectors = if texts.is_empty() {
                Vec::new()
            } else {
                embedder.embed(&texts).await?
            };
            if vectors.len() != texts.len() {
                return Err(err(format!(
                    "asked for {} vectors, the embedder returned {}",
                    texts.len(),
                    vectors.len()
                )));
            }
            let index = match vectors.first() {
                Some(v) => {
                    let index = self.ensure_index(v.len()).await?;
                    for v in &vectors {
                        check_dims(index, v.len())?;
                    }
                    Some(index)
                }
                None => self.recall_index().await?,
            };
            let rows: Vec<(&StoredMessage, Option<&Vec<f32>>)> = with_text
                .into_iter()
                .zip(vectors.iter().map(Some))
                .chain(empty.into_iter().map(|m| (m, None)))
                .collect();
            written += self.write_vectors(resource, thread, index, &rows).await?;
            resident = resident.or(index);
        }
        if let Some(index) = resident
            && written > 0
        {
            self.resident_after_write(resource, &info, index).await?;
        }
        Ok(written)
    }

    async fn write_vectors(
        &self,
        resource: &str,
        thread: &str,
        index: Option<RecallIndex>,
        rows: &[(&StoredMessage, Option<&Vec<f32>>)],
    ) -> Result<usize> {
        // The marker row copies thread and resource from the message row
        // itself, so a vector can only ever be filed under its own thread
        // (and the index row its seq too).
        const MARK: &str =
            "INSERT INTO nodekit_am_embeddings (message_id, thread_id, resource_id, dims, vector)
             SELECT id, thread_id, resource_id, $4, $5 FROM nodekit_am_messages
             WHERE id = $1 AND thread_id = $2 AND resource_id = $3
             ON CONFLICT (message_id) DO NOTHING";
        #[cfg(feature = "sqlite")]
        const VEC_SQLITE: &str =
            "INSERT INTO nodekit_am_vec (rowid, thread_id, resource_id, seq, embedding)
             SELECT id, thread_id, resource_id, seq, $2 FROM nodekit_am_messages WHERE id = $1";
        #[cfg(feature = "postgres")]
        const VEC_PG: &str = "INSERT INTO nodekit_am_vectors (message_id, thread_id, resource_id, seq, embedding)
             SELECT id, thread_id, resource_id, seq, $2::vector FROM nodekit_am_messages WHERE id = $1";
        let mut written = 0;
        match self.db.pools() {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite {
                write, durability, ..
            } => {
                let mut conn = write.acquire().await.map_err(db)?;
                // Vectors are computed again from their messages when lost
                // (the indexer finds messages without one), so their commit
                // need not wait for the disk: the next message's commit
                // flushes it with its own.
                let lowered = *durability == Durability::PowerLoss;
                if lowered {
                    sqlx::raw_sql("PRAGMA synchronous = NORMAL")
                        .execute(&mut *conn)
                        .await
                        .map_err(db)?;
                }
                let wrote = async {
                    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE")
                        .await
                        .map_err(db)?;
                    let mut written = 0;
                    for (m, v) in rows {
                        let bytes = v.map(|v| vector_bytes(v)).unwrap_or_default();
                        let dims = v.map_or(0, |v| v.len() as i64);
                        let done = sqlx::query(MARK)
                            .bind(m.id)
                            .bind(thread)
                            .bind(resource)
                            .bind(dims)
                            .bind(&bytes)
                            .execute(&mut *tx)
                            .await
                            .map_err(db)?;
                        if done.rows_affected() == 1 && v.is_some() && index.is_some() {
                            sqlx::query(VEC_SQLITE)
                                .bind(m.id)
                                .bind(&bytes)
                                .execute(&mut *tx)
                                .await
                                .map_err(db)?;
                        }
                        written += done.rows_affected() as usize;
                    }
                    tx.commit().await.map_err(db)?;
                    Ok::<usize, Error>(written)
                }
                .await;
                // A connection that cannot be set back never writes again.
                if lowered
                    && sqlx::raw_sql("PRAGMA synchronous = FULL")
                        .execute(&mut *conn)
                        .await
                        .is_err()
                {
                    conn.close_on_drop();
                }
                written += wrote?;
            }
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => {
                let mut tx = pool.begin().await.map_err(db)?;
                // Keeps delete_thread (FOR UPDATE) from committing between
                // these inserts and their commit.
                sqlx::query(
                    "SELECT 1 FROM nodekit_am_threads WHERE id = $1 AND resource_id = $2 FOR SHARE",
                )
                .bind(thread)
                .bind(resource)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db)?;
                let pgvector = index.is_some_and(|i| i.kind == IndexKind::PgVector);
                for (m, v) in rows {
                    // With pgvector the vector lives in the index table only.
                    let bytes = match v {
                        Some(v) if !pgvector => vector_bytes(v),
                        _ => Vec::new(),
                    };
                    let dims = v.map_or(0, |v| v.len() as i64);
                    let done = sqlx::query(MARK)
                        .bind(m.id)
                        .bind(thread)
                        .bind(resource)
                        .bind(dims)
                        .bind(&bytes)
                        .execute(&mut *tx)
                        .await
                        .map_err(db)?;
                    if done.rows_affected() == 1
                        && pgvector
                        && let Some(v) = v
                    {
                        sqlx::query(VEC_PG)
                            .bind(m.id)
                            .bind(pg_vector(v))
                            .execute(&mut *tx)
                            .await
                            .map_err(db)?;
                    }
                    written += done.rows_affected() as usize;
                }
                tx.commit().await.map_err(db)?;
            }
        }
        Ok(written)
    }

    /// Up to `limit` messages of the thread without a vector yet, oldest first.
    pub async fn unindexed(
        &self,
        resource: &str,
        thread: &str,
        limit: usize,
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        self.unindexed_after(resource, thread, 0, limit).await
    }

    /// [`Recall::unindexed`] among the messages after seq `after` (a range of
    /// the thread's seq index, so catching up never rescans the thread).
    async fn unindexed_after(
        &self,
        resource: &str,
        thread: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredMessage>> {
        const SQL: &str = "SELECT m.seq FROM nodekit_am_messages m
             LEFT JOIN nodekit_am_embeddings e ON e.message_id = m.id
             WHERE m.thread_id = $1 AND m.resource_id = $2 AND m.seq > $3 AND e.message_id IS NULL
             ORDER BY m.seq LIMIT $4";
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let seqs: Vec<i64> = on_reader!(self.db, pool => {
            sqlx::query_scalar(SQL)
                .bind(thread)
                .bind(resource)
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await
                .map_err(db)?
        });
        let (Some(&first), Some(&last)) = (seqs.first(), seqs.last()) else {
            return Ok(Vec::new());
        };
        let wanted: HashSet<i64> = seqs.into_iter().collect();
        let mut out = self
            .db
            .messages_range(resource, thread, first, last)
            .await?;
        out.retain(|m| wanted.contains(&m.seq));
        Ok(out)
    }

    /// Indexes every message of the thread that has no vector yet; returns
    /// how many were indexed.
    pub async fn index_pending(
        &self,
        resource: &str,
        thread: &str,
        embedder: &dyn Embedder,
    ) -> Result<usize> {
        let (n, _) = self
            .index_pending_after(resource, thread, embedder, None)
            .await?;
        Ok(n)
    }

    /// [`Recall::index_pending`] for messages after `mark` (the mark a
    /// previous run returned); returns how many were indexed and the new
    /// mark: every message up to it has a vector. A mark from another
    /// incarnation of the thread (deleted and created again) is ignored.
    async fn index_pending_after(
        &self,
        resource: &str,
        thread: &str,
        embedder: &dyn Embedder,
        mark: Option<Mark>,
    ) -> Result<(usize, Mark)> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let none = Mark {
            created_at: 0,
            seq: 0,
            id: 0,
        };
        let Some(info) = self.db.thread(resource, thread).await? else {
            return Ok((0, none));
        };
        let mut mark = match mark {
            Some(m)
                if m.created_at == info.created_at
                    && m.seq <= info.last_seq
                    && self.id_at(resource, thread, m.seq).await? == Some(m.id) =>
            {
                m
            }
            _ => Mark {
                created_at: info.created_at,
                ..none
            },
        };
        let mut total = 0;
        loop {
            let batch = self
                .unindexed_after(resource, thread, mark.seq, EMBED_BATCH * 4)
                .await?;
            let Some(last) = batch.last() else {
                break;
            };
            let (seq, id) = (last.seq, last.id);
            let n = self
                .index_messages(resource, thread, &batch, embedder)
                .await?;
            total += n;
            mark = Mark { seq, id, ..mark };
            if n == 0 {
                // Rows that vanished meanwhile (a deleted thread).
                break;
            }
        }
        Ok((total, mark))
    }

    /// The id of the thread's message at `seq`.
    async fn id_at(&self, resource: &str, thread: &str, seq: i64) -> Result<Option<i64>> {
        const SQL: &str = "SELECT id FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2 AND seq = $3";
        on_reader!(self.db, pool => {
            sqlx::query_scalar(SQL)
                .bind(thread)
                .bind(resource)
                .bind(seq)
                .fetch_optional(pool)
                .await
                .map_err(db)
        })
    }

    /// The (resource, thread) pairs with unindexed messages (a full scan:
    /// for catching up after a restart, not per request).
    pub async fn threads_with_unindexed(&self) -> Result<Vec<(String, String)>> {
        const SQL: &str = "SELECT DISTINCT m.resource_id, m.thread_id FROM nodekit_am_messages m
             LEFT JOIN nodekit_am_embeddings e ON e.message_id = m.id
             WHERE e.message_id IS NULL";
        on_reader!(self.db, pool => sqlx::query_as(SQL).fetch_all(pool).await.map_err(db))
    }
}

fn check_dims(index: RecallIndex, dims: usize) -> Result<RecallIndex> {
    if index.dims == dims {
        Ok(index)
    } else {
        Err(err(format!(
            "this store holds {}-dimension vectors and the embedder returned {dims} dimensions; a store keeps the dimension of its first vector (use the same embedder, or a new store)",
            index.dims
        )))
    }
}

/// How far a thread is indexed: every message up to `seq` of the thread
/// created at `created_at` has a vector, and message `id` is at `seq`
/// (message ids are never reused, so a thread deleted and imported again,
/// with its creation time, is told apart).
#[derive(Debug, Clone, Copy)]
struct Mark {
    created_at: i64,
    seq: i64,
    id: i64,
}

//! The vectors this process keeps in memory, per thread, so a search never
//! scans the database.
//!
//! A thread's vectors are read from the database once and kept: while the
//! thread has at most [`EXACT_LIMIT`] of them (or the store's
//! [`Recall::with_exact_limit`]) as a plain block, normalised, scanned
//! exactly; past it, as an HNSW graph
//! ([usearch](https://github.com/unum-cloud/USearch), cosine, vectors as
//! `i8`, 32 links per node, search breadth 128) whose best 40 candidates
//! are put in order again by a half-precision (`f16`) copy of the vectors.
//! The database stays the only source of truth:
//!
//! - a thread is loaded on a background task the first time it is written
//!   to or searched (graph builds one at a time: a build uses all cores but
//!   one); until it is loaded, its search goes to the database's own index
//!   (sqlite-vec or pgvector) over its newest [`EXACT_LIMIT`] vectors;
//! - it holds every vector up to the highest message id it has read, and
//!   reads the rows above that id after each write of this process
//!   (awaited) and after a search, at most every 250 ms (in the background,
//!   so a search never waits, and vectors another process wrote are found
//!   a moment later). The recall indexer writes a thread's vectors oldest
//!   first, so ids only grow; [`Recall::index_messages`] says so too;
//! - the vectors of one database are shared by every [`Db`](crate::Db) this process
//!   opens on it ([`Db::open_sqlite`](crate::Db::open_sqlite),
//!   [`Db::postgres`](crate::Db::postgres)), so a
//!   node that opens its store for each run still finds them;
//! - the memory they take is bounded: past the budget
//!   ([`DEFAULT_CACHE_BYTES`], [`Recall::with_cache_bytes`]) the least
//!   recently used threads are dropped (the one just used always stays, so
//!   a thread larger than the budget can still be searched); a deleted
//!   thread's are dropped at once. An entry is keyed by the thread's
//!   creation time, so a thread deleted and created again gets a new one.
//!   Its keys are the messages' seqs. A thread deleted and imported again
//!   (same creation time) by another process is noticed at the next
//!   catch-up, when rows with seqs it holds arrive: it is dropped and
//!   loaded again.
//!
//! Memory: an exact block takes 4 bytes per dimension per message (1.5 KB
//! for 384 dimensions); a graph about 0.5 KB per message at 384 dimensions
//! (the vectors as `i8` plus the links). [`Recall::cache_stats`] reports
//! what is held.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

#[cfg(feature = "postgres")]
use super::IndexKind;
use super::Recall;
use super::{Mark, RecallIndex, bytes_vector, db, err};
use crate::db::{Pools, ThreadInfo};
use nodekit_core::error::Result;
use nodekit_vector_index::{self as vector_index, Breadth, Index, IndexError, Nearest, Throttle};

/// Threads with at most this many vectors are searched exactly, in memory;
/// longer ones through a graph (the default of [`Recall::with_exact_limit`]).
pub const EXACT_LIMIT: i64 = 4_096;
/// The memory one database's resident vectors may take before the least
/// recently used threads are dropped (the default of
/// [`Recall::with_cache_bytes`]): 512 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 512 << 20;
/// Vectors read from the database per query while loading or catching up.
const PAGE: i64 = 4096;
/// Index marks kept per database (a lost mark costs one indexed read).
const MAX_MARKS: usize = 65_536;
/// How often a search looks for vectors another process wrote.
const CATCH_UP_EVERY: Duration = Duration::from_millis(250);

/// What one database's resident vectors hold ([`Recall::cache_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecallCache {
    /// Threads held (loaded or loading).
    pub threads: usize,
    /// Vectors held in exact blocks.
    pub exact_vectors: usize,
    /// Vectors held in graphs.
    pub graph_vectors: usize,
    /// Bytes held, all together.
    pub bytes: usize,
    /// The budget, in bytes.
    pub budget: usize,
}

/// What this process keeps in memory for one database's recall: the
/// threads' vectors, and how far each thread is indexed.
pub(crate) struct Cache {
    by_thread: Mutex<HashMap<ThreadKey, Arc<Resident>>>,
    budget: AtomicUsize,
    /// One graph build at a time: a build uses all cores but one.
    builds: Arc<tokio::sync::Semaphore>,
    /// How far each (resource, thread) is indexed, for every
    /// [`Recaller`](super::Recaller) on this database: a new one (the
    /// Agent Memory node makes one per run) does not read again what
    /// another one indexed.
    marks: Mutex<HashMap<(String, String), Mark>>,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            by_thread: Mutex::default(),
            budget: AtomicUsize::new(DEFAULT_CACHE_BYTES),
            builds: Arc::new(tokio::sync::Semaphore::new(1)),
            marks: Mutex::default(),
        }
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("held", &self.stats())
            .finish()
    }
}

/// The resident vectors of the database `identity` names, shared by every
/// store of this process on it. Kept for the life of the process (a
/// database never searched costs an empty map).
pub(crate) fn shared(identity: String) -> Arc<Cache> {
    static ALL: OnceLock<Mutex<HashMap<String, Arc<Cache>>>> = OnceLock::new();
    let mut all = ALL
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    all.entry(identity).or_default().clone()
}

/// Thread id and creation time.
type ThreadKey = (String, i64);

/// One thread's vectors.
struct Resident {
    /// The vectors, keyed by seq.
    index: Index,
    /// The highest message id read.
    max_id: AtomicI64,
    /// Set when the first load finished.
    ready: AtomicBool,
    /// Set when the entry left the cache: a load in progress stops.
    dropped: AtomicBool,
    /// One reader of new rows at a time; held by spawned tasks (owned
    /// guards), so a caller that gives up never cuts a page in half.
    filling: Arc<tokio::sync::Mutex<()>>,
    used: Mutex<Instant>,
    /// When a search may next read new rows.
    catch_up: Throttle,
}

/// A search of a held thread made before its owner was checked
/// ([`Recall::search_held`]).
pub(crate) struct Early {
    created_at: i64,
    resident: Arc<Resident>,
    found: Nearest,
}

fn index_error(e: IndexError) -> nodekit_core::error::Error {
    err(e.0)
}

impl Resident {
    fn new(dims: usize) -> Resident {
        Resident {
            index: Index::new(dims, Breadth::MESSAGES),
            max_id: AtomicI64::new(0),
            ready: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            filling: Arc::new(tokio::sync::Mutex::new(())),
            used: Mutex::new(Instant::now()),
            catch_up: Throttle::new(CATCH_UP_EVERY),
        }
    }

    fn touch(&self) {
        if let Ok(mut used) = self.used.lock() {
            *used = Instant::now();
        }
    }

    fn last_used(&self) -> Instant {
        self.used.lock().map_or_else(|_| Instant::now(), |t| *t)
    }

    /// (exact vectors, graph vectors).
    fn sizes(&self) -> (usize, usize) {
        self.index.sizes()
    }

    /// Searches on the caller's thread: under 0.1 ms for a short thread,
    /// about 0.6 ms for a graph of 100,000 vectors. A hop to a blocking
    /// thread would cost more than it saves on a short thread; callers send
    /// their database reads before they search, so those overlap it.
    fn search(&self, query: &[f32], k: usize) -> Result<Nearest> {
        self.touch();
        self.index.search(query, k, None).map_err(index_error)
    }

    /// Adds `rows` (seq, vector) read after the highest id held, turning
    /// the exact block into a graph once it would pass `exact_limit`
    /// vectors (searches go on over the block meanwhile). Returns how many
    /// of the rows' seqs were held already. Blocking; the caller holds
    /// `filling`.
    fn add(&self, rows: &[(i64, Vec<f32>)], exact_limit: usize) -> Result<usize> {
        let rows: Vec<(i64, &[f32])> = rows.iter().map(|(seq, v)| (*seq, v.as_slice())).collect();
        let held = self.index.add(&rows, exact_limit).map_err(index_error)?;
        if held == 0 {
            // Into the graph now: a message is indexed when its write returns.
            self.index.absorb().map_err(index_error)?;
        }
        Ok(held)
    }
}

impl Cache {
    pub(super) fn mark(&self, key: &(String, String)) -> Option<Mark> {
        self.marks.lock().ok()?.get(key).copied()
    }

    pub(super) fn set_mark(&self, key: (String, String), mark: Mark) {
        if let Ok(mut marks) = self.marks.lock() {
            if marks.len() >= MAX_MARKS && !marks.contains_key(&key) {
                marks.clear();
            }
            marks.insert(key, mark);
        }
    }

    /// The thread's entry, and whether it was just created (and must be
    /// loaded).
    fn get_or_insert(&self, key: ThreadKey, dims: usize) -> Result<(Arc<Resident>, bool)> {
        let mut map = self
            .by_thread
            .lock()
            .map_err(|e| err(format!("a recall cache lock was poisoned: {e}")))?;
        if let Some(r) = map.get(&key) {
            r.touch();
            return Ok((r.clone(), false));
        }
        let resident = Arc::new(Resident::new(dims));
        map.insert(key, resident.clone());
        Ok((resident, true))
    }

    /// Drops the least recently used entries, never `keep`, until the rest
    /// fit the budget.
    fn evict(&self, keep: &Arc<Resident>) {
        let Ok(mut map) = self.by_thread.lock() else {
            return;
        };
        let budget = self.budget.load(Ordering::Relaxed);
        let mut total: usize = map.values().map(|r| r.index.bytes()).sum();
        if total <= budget {
            return;
        }
        let mut by_age: Vec<(Instant, ThreadKey, usize)> = map
            .iter()
            .filter(|(_, r)| !Arc::ptr_eq(r, keep))
            .map(|(k, r)| (r.last_used(), k.clone(), r.index.bytes()))
            .collect();
        by_age.sort_unstable_by_key(|(used, _, _)| *used);
        for (_, key, bytes) in by_age {
            if total <= budget {
                break;
            }
            if let Some(r) = map.remove(&key) {
                r.dropped.store(true, Ordering::Release);
                total = total.saturating_sub(bytes);
            }
        }
    }

    /// Drops `key`'s entry if it is still `resident`.
    fn remove(&self, key: &ThreadKey, resident: &Arc<Resident>) {
        if let Ok(mut map) = self.by_thread.lock()
            && map.get(key).is_some_and(|r| Arc::ptr_eq(r, resident))
        {
            map.remove(key);
            resident.dropped.store(true, Ordering::Release);
        }
    }

    /// Drops the thread's vectors and index marks (the thread was deleted or replaced).
    pub(crate) fn forget(&self, thread: &str) {
        if let Ok(mut marks) = self.marks.lock() {
            marks.retain(|(_, t), _| t != thread);
        }
        if let Ok(mut map) = self.by_thread.lock() {
            map.retain(|(t, _), r| {
                let keep = t != thread;
                if !keep {
                    r.dropped.store(true, Ordering::Release);
                }
                keep
            });
        }
    }

    /// The loaded entry of `thread` (any incarnation), with its creation time.
    fn find_ready(&self, thread: &str) -> Option<(i64, Arc<Resident>)> {
        let map = self.by_thread.lock().ok()?;
        map.iter()
            .find(|((t, _), r)| t == thread && r.ready.load(Ordering::Acquire))
            .map(|((_, created_at), r)| {
                r.touch();
                (*created_at, r.clone())
            })
    }

    /// How many vectors of `thread` are held, once it is loaded.
    pub(super) fn held(&self, thread: &str) -> Option<usize> {
        let (_, r) = self.find_ready(thread)?;
        let (exact, graph) = r.sizes();
        Some(exact + graph)
    }

    pub(crate) fn set_budget(&self, bytes: usize) {
        self.budget.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> RecallCache {
        let budget = self.budget.load(Ordering::Relaxed);
        let Ok(map) = self.by_thread.lock() else {
            return RecallCache {
                budget,
                ..RecallCache::default()
            };
        };
        map.values().fold(
            RecallCache {
                threads: map.len(),
                budget,
                ..RecallCache::default()
            },
            |mut s, r| {
                let (exact, graph) = r.sizes();
                s.exact_vectors += exact;
                s.graph_vectors += graph;
                s.bytes += r.index.bytes();
                s
            },
        )
    }
}

/// Drops the entry from the cache unless its load finished (an error, or
/// the task cancelled with its runtime), so a later call starts it again.
struct LoadGuard {
    cache: Arc<Cache>,
    key: ThreadKey,
    resident: Arc<Resident>,
}

impl Drop for LoadGuard {
    fn drop(&mut self) {
        if !self.resident.ready.load(Ordering::Acquire) {
            self.cache.remove(&self.key, &self.resident);
        }
    }
}

impl Recall {
    /// The thread's loaded entry; starts the load (and answers `None`)
    /// when it has none.
    fn ready_resident(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        index: RecallIndex,
    ) -> Result<Option<Arc<Resident>>> {
        let key = (thread.id.clone(), thread.created_at);
        let (resident, fresh) = self.cache().get_or_insert(key.clone(), index.dims)?;
        if fresh {
            self.spawn_load(resource, thread, index, key, resident);
            return Ok(None);
        }
        Ok(resident.ready.load(Ordering::Acquire).then_some(resident))
    }

    /// The thread's nearest seqs from memory; `None` while the thread is
    /// loading, or when only a graph holds it and this store wants an
    /// exact answer (the caller asks the database).
    pub(super) fn resident_nearest(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        index: RecallIndex,
        query: &[f32],
        k: usize,
    ) -> Result<Option<Vec<i64>>> {
        let Some(resident) = self.ready_resident(resource, thread, index)? else {
            return Ok(None);
        };
        let found = resident.search(query, k)?;
        Ok(self.held_answer(resource, thread, index, resident, found))
    }

    /// Searches the thread's vectors if this process holds them, before its
    /// owner is checked: the answer is used only once the thread's lookup
    /// found the thread of the same creation time for the caller's
    /// resource ([`Recall::early_answer`]). Saves waiting for the check.
    pub(super) fn search_held(&self, thread: &str, query: &[f32], k: usize) -> Option<Early> {
        let (created_at, resident) = self.cache().find_ready(thread)?;
        let found = resident.search(query, k).ok()?;
        Some(Early {
            created_at,
            resident,
            found,
        })
    }

    /// An [`Early`] search's answer, if it searched `thread` (this
    /// incarnation of it).
    pub(super) fn early_answer(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        index: RecallIndex,
        early: Early,
    ) -> Option<Vec<i64>> {
        (early.created_at == thread.created_at)
            .then(|| self.held_answer(resource, thread, index, early.resident, early.found))?
    }

    /// What a search of a held thread answers; starts reading the rows
    /// another process wrote since (in the background, at most every
    /// [`CATCH_UP_EVERY`]; this process's own writes are read when they are
    /// written).
    fn held_answer(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        index: RecallIndex,
        resident: Arc<Resident>,
        found: Nearest,
    ) -> Option<Vec<i64>> {
        if resident.catch_up.due()
            && let Ok(guard) = resident.filling.clone().try_lock_owned()
        {
            let (recall, resource, id) = (self.clone(), resource.to_owned(), thread.id.clone());
            tokio::spawn(async move {
                if let Err(e) = recall.fill(&resident, &resource, &id, index).await {
                    tracing::warn!(thread = %id, error = %e, "semantic recall: catch-up failed");
                }
                drop(guard);
            });
        }
        match found {
            Nearest::Exact(seqs) => Some(seqs),
            // A graph answers only threads longer than this store's exact
            // limit (stores sharing the cache may set other limits).
            Nearest::Approximate(seqs) if thread.last_seq > self.exact_limit() => Some(seqs),
            Nearest::Approximate(_) => None,
        }
    }

    /// After vectors of the thread were written: a loaded entry reads them
    /// (awaited); a thread without one gets loaded (which reads them too);
    /// an entry still loading reads them once its load is done (in the
    /// background: the load may have read its pages before they were
    /// written).
    pub(super) async fn resident_after_write(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        index: RecallIndex,
    ) -> Result<()> {
        let key = (thread.id.clone(), thread.created_at);
        let (resident, fresh) = self.cache().get_or_insert(key.clone(), index.dims)?;
        if fresh {
            self.spawn_load(resource, thread, index, key, resident);
            return Ok(());
        }
        let ready = resident.ready.load(Ordering::Acquire);
        let (recall, resource, thread) = (self.clone(), resource.to_owned(), thread.id.clone());
        // A task of its own: giving up on this future never cuts a page.
        let fill = tokio::spawn(async move {
            let _guard = resident.filling.clone().lock_owned().await;
            let filled = recall.fill(&resident, &resource, &thread, index).await;
            if let (false, Err(e)) = (ready, &filled) {
                tracing::warn!(%thread, error = %e, "semantic recall: catch-up failed");
            }
            filled
        });
        if !ready {
            return Ok(());
        }
        fill.await
            .map_err(|e| err(format!("recall catch-up stopped: {e}")))?
    }

    fn spawn_load(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        index: RecallIndex,
        key: ThreadKey,
        resident: Arc<Resident>,
    ) {
        let recall = self.clone();
        let resource = resource.to_owned();
        let builds_graph = vector_index::GRAPHS && thread.last_seq > self.exact_limit();
        let guard = LoadGuard {
            cache: self.cache_arc(),
            key,
            resident,
        };
        tokio::spawn(async move {
            let _permit = if builds_graph {
                match guard.cache.builds.clone().acquire_owned().await {
                    Ok(permit) => Some(permit),
                    Err(_) => return,
                }
            } else {
                None
            };
            let started = Instant::now();
            let thread = guard.key.0.clone();
            let loaded = {
                let _filling = guard.resident.filling.clone().lock_owned().await;
                recall
                    .fill(&guard.resident, &resource, &thread, index)
                    .await
            };
            match loaded {
                Ok(()) if !guard.resident.dropped.load(Ordering::Acquire) => {
                    guard.resident.ready.store(true, Ordering::Release);
                    let (exact, graph) = guard.resident.sizes();
                    tracing::debug!(%thread, exact, graph, elapsed = ?started.elapsed(), "semantic recall: thread loaded");
                }
                Ok(()) => {}
                Err(e) => {
                    tracing::warn!(%thread, error = %e, "semantic recall: cannot load the thread's vectors; searching the database");
                }
            }
        });
    }

    /// Adds the thread's vectors above the entry's highest id. The caller
    /// holds `resident.filling`.
    async fn fill(
        &self,
        resident: &Arc<Resident>,
        resource: &str,
        thread: &str,
        index: RecallIndex,
    ) -> Result<()> {
        // Keyed by seq (unique in a thread, and a thread's messages are
        // only ever deleted with it); paged by message id.
        const BYTES: &str = "SELECT e.message_id, m.seq, e.vector FROM nodekit_am_embeddings e
             JOIN nodekit_am_messages m ON m.id = e.message_id
             WHERE e.thread_id = $1 AND e.resource_id = $2 AND e.dims > 0 AND e.message_id > $3
             ORDER BY e.message_id LIMIT $4";
        #[cfg(feature = "postgres")]
        const PGVECTOR: &str = "SELECT message_id, seq, embedding::real[] FROM nodekit_am_vectors
             WHERE thread_id = $1 AND resource_id = $2 AND message_id > $3
             ORDER BY message_id LIMIT $4";
        let exact_limit = usize::try_from(self.exact_limit()).unwrap_or(usize::MAX);
        while !resident.dropped.load(Ordering::Acquire) {
            let after = resident.max_id.load(Ordering::Acquire);
            macro_rules! page {
                ($sql:expr, $pool:expr) => {
                    sqlx::query_as($sql)
                        .bind(thread)
                        .bind(resource)
                        .bind(after)
                        .bind(PAGE)
                        .fetch_all($pool)
                        .await
                        .map_err(db)?
                };
            }
            let decode = |rows: Vec<(i64, i64, Vec<u8>)>| -> Vec<(i64, i64, Vec<f32>)> {
                rows.into_iter()
                    .map(|(id, seq, b)| (id, seq, bytes_vector(&b)))
                    .collect()
            };
            let rows: Vec<(i64, i64, Vec<f32>)> = match (self.db.pools(), index.kind) {
                #[cfg(feature = "sqlite")]
                (Pools::Sqlite { read, .. }, _) => decode(page!(BYTES, read)),
                #[cfg(feature = "postgres")]
                (Pools::Postgres(pool), IndexKind::PgVector) => page!(PGVECTOR, pool),
                #[cfg(feature = "postgres")]
                (Pools::Postgres(pool), _) => decode(page!(BYTES, pool)),
            };
            let Some(&(last, _, _)) = rows.last() else {
                return Ok(());
            };
            let full = rows.len() as i64 == PAGE;
            let vectors: Vec<(i64, Vec<f32>)> =
                rows.into_iter().map(|(_, seq, v)| (seq, v)).collect();
            let r = resident.clone();
            let held = tokio::task::spawn_blocking(move || {
                let held = r.add(&vectors, exact_limit)?;
                r.max_id.store(last, Ordering::Release);
                Ok::<usize, nodekit_core::error::Error>(held)
            })
            .await
            .map_err(|e| err(format!("loading a thread's vectors stopped: {e}")))??;
            if held > 0 {
                // New rows with seqs already held: the thread was deleted
                // and imported again (by another process, or after a failed
                // page). The entry is dropped; the next search loads anew.
                resident.dropped.store(true, Ordering::Release);
                self.cache().forget(thread);
                return Ok(());
            }
            self.cache().evict(resident);
            if !full {
                return Ok(());
            }
        }
        Ok(())
    }
}

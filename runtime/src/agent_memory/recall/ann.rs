//! Approximate search for long threads: an HNSW graph per thread.
//!
//! An exact scan reads every vector of the thread, so its cost grows with
//! the thread (about 1.5 GB of vectors for a million 384-dimension
//! messages). A thread with more than [`EXACT_LIMIT`] messages (or
//! [`Store::with_exact_limit`]) is therefore searched through an HNSW graph
//! built by [usearch](https://github.com/unum-cloud/USearch) (cosine
//! distance, vectors quantized to `i8`, 16 links per node), whose cost grows
//! with the logarithm of the thread's length.
//!
//! The graph is a cache kept in this process's memory; the database stays
//! the only source of truth:
//!
//! - it is built from `nodekit_am_embeddings` on a background task the first
//!   time a long thread is written to or searched, one build at a time (a
//!   build uses all cores but one); until it is ready the thread's newest
//!   [`EXACT_LIMIT`] vectors are searched exactly;
//! - it holds every vector up to the highest message id it has read, and
//!   reads the rows above that id after each write of this process
//!   (awaited) and after a search, at most every 250 ms (in the background,
//!   so a search never waits and vectors another process wrote are found
//!   from a search a moment later on). The recall indexer writes a thread's vectors oldest first,
//!   so ids only grow; [`Store::index_messages`] says so too;
//! - the graphs of one database are shared by every [`Store`] this process
//!   opens on it ([`Store::open_sqlite`], [`Store::open_postgres`]), so a
//!   node that opens its store for each run still finds the graph built by
//!   the run before;
//! - at most [`MAX_GRAPHS`] graphs are kept per database, the least recently
//!   used ready one is dropped (a build in progress then stops); a deleted
//!   thread's graph is dropped at once. A graph is keyed by the thread's
//!   creation time, so a thread deleted and created again gets a new one.
//!   Its keys are the messages' seqs. A thread deleted and imported again
//!   (same creation time) by another process is noticed at the next
//!   catch-up, when rows with seqs the graph holds arrive: the graph is
//!   dropped and built again.
//!
//! With 384 dimensions a process holding a million-message graph peaked at
//! 726 MB in all (BENCHMARKS.md, agent memory); larger embeddings cost
//! proportionally more. A restarted process rebuilds its graphs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use hnsw::Index;

use super::{Mark, bytes_vector, db, err};
use crate::agent_memory::store::{Pools, Store, ThreadInfo};
use crate::error::Result;

/// Threads with at most this many messages are searched exactly; longer
/// ones through an HNSW graph (the default of [`Store::with_exact_limit`]).
pub const EXACT_LIMIT: i64 = 20_000;
/// Most graphs kept in memory at once for one database (least recently
/// used dropped first).
pub const MAX_GRAPHS: usize = 8;
/// Vectors read from the database per query while building or catching up.
const PAGE: i64 = 4096;
/// Concurrent searches and additions one graph allows.
const GRAPH_THREADS: usize = 64;

/// What this process keeps in memory for one database's recall: the graphs,
/// by thread, and how far each thread is indexed.
pub(crate) struct Graphs {
    by_thread: Mutex<HashMap<GraphKey, Arc<Graph>>>,
    /// One build at a time: a build uses all cores but one.
    builds: Arc<tokio::sync::Semaphore>,
    /// How far each (resource, thread) is indexed, for every
    /// [`Recaller`](super::Recaller) on this database: a new one (the
    /// Agent Memory node makes one per run) does not read again what
    /// another one indexed.
    marks: Mutex<HashMap<(String, String), Mark>>,
}

impl Default for Graphs {
    fn default() -> Self {
        Graphs {
            by_thread: Mutex::default(),
            builds: Arc::new(tokio::sync::Semaphore::new(1)),
            marks: Mutex::default(),
        }
    }
}

impl std::fmt::Debug for Graphs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graphs")
            .field("loaded", &self.loaded())
            .finish()
    }
}

/// The graphs of the database `identity` names, shared by every store of
/// this process on it. Kept for the life of the process (a database
/// without long threads costs an empty map).
pub(crate) fn shared(identity: String) -> Arc<Graphs> {
    static ALL: OnceLock<Mutex<HashMap<String, Arc<Graphs>>>> = OnceLock::new();
    let mut all = ALL
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    all.entry(identity).or_default().clone()
}

/// Thread id and creation time.
type GraphKey = (String, i64);

struct Graph {
    /// Written only to grow the capacity; searches and additions read.
    index: RwLock<Index>,
    /// The highest message id added.
    max_id: AtomicI64,
    /// Set when the first build finished.
    ready: AtomicBool,
    /// Set when the graph left the cache: a build in progress stops.
    dropped: AtomicBool,
    /// One reader of new rows at a time; held by spawned tasks (owned
    /// guards), so a caller that gives up never cuts a page in half.
    filling: Arc<tokio::sync::Mutex<()>>,
    /// Additions one at a time (the capacity check and `contains` with them).
    adding: Mutex<()>,
    used: Mutex<Instant>,
    /// When a search may next read new rows, in ms since `born`.
    catch_up_at: AtomicU64,
    born: Instant,
}

/// How often a search looks for vectors another process wrote.
const CATCH_UP_EVERY: Duration = Duration::from_millis(250);

fn poisoned(e: impl std::fmt::Display) -> crate::error::Error {
    err(format!("a graph lock was poisoned: {e}"))
}

impl Graph {
    fn new(dims: usize) -> Result<Graph> {
        let index = hnsw::new(dims).map_err(|e| err(format!("cannot create a graph: {e}")))?;
        Ok(Graph {
            index: RwLock::new(index),
            max_id: AtomicI64::new(0),
            ready: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            filling: Arc::new(tokio::sync::Mutex::new(())),
            adding: Mutex::new(()),
            used: Mutex::new(Instant::now()),
            catch_up_at: AtomicU64::new(0),
            born: Instant::now(),
        })
    }

    /// Whether a search should read new rows now; if so, the next one
    /// waits [`CATCH_UP_EVERY`].
    fn catch_up_due(&self) -> bool {
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let due = self.catch_up_at.load(Ordering::Relaxed);
        let next = now.saturating_add(CATCH_UP_EVERY.as_millis() as u64);
        now >= due
            && self
                .catch_up_at
                .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    fn touch(&self) {
        if let Ok(mut used) = self.used.lock() {
            *used = Instant::now();
        }
    }

    fn size(&self) -> usize {
        self.index.read().map_or(0, |i| i.size())
    }

    /// Adds `rows` (seq, vector) that are not in the graph yet, spread over
    /// all the machine's cores but one; returns how many were there already.
    fn add(&self, rows: &[(i64, Vec<f32>)]) -> Result<usize> {
        let _adding = self.adding.lock().map_err(poisoned)?;
        {
            let index = self.index.read().map_err(poisoned)?;
            let needed = index.size() + rows.len();
            if needed > index.capacity() {
                drop(index);
                let index = self.index.write().map_err(poisoned)?;
                let capacity = needed.max(index.capacity() * 2).max(1024);
                index
                    .reserve_capacity_and_threads(capacity, GRAPH_THREADS)
                    .map_err(|e| err(format!("cannot grow a graph: {e}")))?;
            }
        }
        let index = self.index.read().map_err(poisoned)?;
        // One core is left to the requests (a build at a million messages
        // takes minutes).
        let workers =
            std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
        let chunk = rows.len().div_ceil(workers).max(64);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(chunk)
                .map(|part| {
                    let index = &*index;
                    s.spawn(move || {
                        let mut there = 0;
                        for (seq, v) in part {
                            if index.contains(*seq as u64) {
                                there += 1;
                            } else {
                                index.add(*seq as u64, v).map_err(|e| e.to_string())?;
                            }
                        }
                        Ok::<usize, String>(there)
                    })
                })
                .collect();
            let mut there = 0;
            for h in handles {
                there += h
                    .join()
                    .map_err(|_| err("a graph worker panicked"))?
                    .map_err(|e| err(format!("cannot add to a graph: {e}")))?;
            }
            Ok(there)
        })
    }

    fn search(&self, query: &[f32], k: usize) -> Result<Vec<i64>> {
        self.touch();
        let index = self.index.read().map_err(poisoned)?;
        let found = index
            .search(query, k)
            .map_err(|e| err(format!("graph search failed: {e}")))?;
        Ok(found.keys.into_iter().map(|k| k as i64).collect())
    }
}

impl Graphs {
    pub(super) fn mark(&self, key: &(String, String)) -> Option<Mark> {
        self.marks.lock().ok()?.get(key).copied()
    }

    pub(super) fn set_mark(&self, key: (String, String), mark: Mark) {
        if let Ok(mut marks) = self.marks.lock() {
            marks.insert(key, mark);
        }
    }

    /// The thread's graph, and whether it was just created (and must be
    /// built); `None` when the cache is full of graphs still building.
    fn get_or_insert(&self, key: GraphKey, dims: usize) -> Result<Option<(Arc<Graph>, bool)>> {
        let mut map = self.by_thread.lock().map_err(poisoned)?;
        if let Some(g) = map.get(&key) {
            g.touch();
            return Ok(Some((g.clone(), false)));
        }
        if map.len() >= MAX_GRAPHS {
            let oldest = map
                .iter()
                .filter(|(_, g)| g.ready.load(Ordering::Acquire))
                .min_by_key(|(_, g)| g.used.lock().map_or_else(|_| Instant::now(), |t| *t))
                .map(|(k, _)| k.clone());
            let Some(k) = oldest else {
                return Ok(None);
            };
            if let Some(g) = map.remove(&k) {
                g.dropped.store(true, Ordering::Release);
            }
        }
        let graph = Arc::new(Graph::new(dims)?);
        map.insert(key, graph.clone());
        Ok(Some((graph, true)))
    }

    /// Drops `key`'s graph if it is still `graph`.
    fn remove(&self, key: &GraphKey, graph: &Arc<Graph>) {
        if let Ok(mut map) = self.by_thread.lock()
            && map.get(key).is_some_and(|g| Arc::ptr_eq(g, graph))
        {
            map.remove(key);
            graph.dropped.store(true, Ordering::Release);
        }
    }

    /// Drops the thread's graphs and index marks (the thread was deleted or replaced).
    pub(crate) fn forget(&self, thread: &str) {
        if let Ok(mut marks) = self.marks.lock() {
            marks.retain(|(_, t), _| t != thread);
        }
        if let Ok(mut map) = self.by_thread.lock() {
            map.retain(|(t, _), g| {
                let keep = t != thread;
                if !keep {
                    g.dropped.store(true, Ordering::Release);
                }
                keep
            });
        }
    }

    /// How many graphs are loaded, and how many vectors they hold.
    pub(crate) fn loaded(&self) -> (usize, usize) {
        let Ok(map) = self.by_thread.lock() else {
            return (0, 0);
        };
        (map.len(), map.values().map(|g| g.size()).sum())
    }
}

/// Drops the graph from the cache unless the build finished (an error, or
/// the task cancelled with its runtime), so a later call starts it again.
struct BuildGuard {
    graphs: Arc<Graphs>,
    key: GraphKey,
    graph: Arc<Graph>,
}

impl Drop for BuildGuard {
    fn drop(&mut self) {
        if !self.graph.ready.load(Ordering::Acquire) {
            self.graphs.remove(&self.key, &self.graph);
        }
    }
}

impl Store {
    /// The thread's graph when it is long and its graph is ready; starts
    /// the build (and answers `None`) when it has none.
    fn ready_graph(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        dims: usize,
    ) -> Result<Option<Arc<Graph>>> {
        if !hnsw::AVAILABLE || thread.last_seq <= self.exact_limit() {
            return Ok(None);
        }
        let key = (thread.id.clone(), thread.created_at);
        let Some((graph, fresh)) = self.graphs().get_or_insert(key.clone(), dims)? else {
            return Ok(None);
        };
        if fresh {
            self.spawn_build(resource, key, graph);
            return Ok(None);
        }
        Ok(graph.ready.load(Ordering::Acquire).then_some(graph))
    }

    /// The seqs of the `k` nearest messages through the thread's graph, or `None`
    /// when the thread is short or its graph is not ready (the caller
    /// searches exactly). Rows written since are read after the search, in
    /// the background.
    pub(super) async fn graph_nearest(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        dims: usize,
        query: &[f32],
        k: usize,
    ) -> Result<Option<Vec<i64>>> {
        let Some(graph) = self.ready_graph(resource, thread, dims)? else {
            return Ok(None);
        };
        // Well under a millisecond: cheaper here than a hop to a blocking thread.
        let found = graph.search(query, k)?;
        // Another process's rows, read at most every CATCH_UP_EVERY (this
        // process's own writes are read when they are written).
        if graph.catch_up_due()
            && let Ok(guard) = graph.filling.clone().try_lock_owned()
        {
            let (store, resource, thread) = (self.clone(), resource.to_owned(), thread.id.clone());
            tokio::spawn(async move {
                if let Err(e) = store.fill(&graph, &resource, &thread).await {
                    tracing::warn!(%thread, error = %e, "semantic recall: graph catch-up failed");
                }
                drop(guard);
            });
        }
        Ok(Some(found))
    }

    /// After vectors of the thread were written: a ready graph reads them
    /// (awaited); a long thread without a graph gets one built (whose build
    /// reads them too).
    pub(super) async fn graph_after_write(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        dims: usize,
    ) -> Result<()> {
        let Some(graph) = self.ready_graph(resource, thread, dims)? else {
            return Ok(());
        };
        let (store, resource, thread) = (self.clone(), resource.to_owned(), thread.id.clone());
        // A task of its own: giving up on this future never cuts a page.
        tokio::spawn(async move {
            let _guard = graph.filling.clone().lock_owned().await;
            store.fill(&graph, &resource, &thread).await
        })
        .await
        .map_err(|e| err(format!("graph catch-up stopped: {e}")))?
    }

    fn spawn_build(&self, resource: &str, key: GraphKey, graph: Arc<Graph>) {
        let store = self.clone();
        let resource = resource.to_owned();
        let guard = BuildGuard {
            graphs: self.graphs_arc(),
            key,
            graph,
        };
        tokio::spawn(async move {
            let Ok(_permit) = guard.graphs.builds.clone().acquire_owned().await else {
                return;
            };
            let started = Instant::now();
            let thread = guard.key.0.clone();
            let built = {
                let _filling = guard.graph.filling.clone().lock_owned().await;
                store.fill(&guard.graph, &resource, &thread).await
            };
            match built {
                Ok(()) if !guard.graph.dropped.load(Ordering::Acquire) => {
                    guard.graph.ready.store(true, Ordering::Release);
                    tracing::info!(%thread, vectors = guard.graph.size(), elapsed = ?started.elapsed(), "semantic recall: graph built");
                }
                Ok(()) => {}
                Err(e) => {
                    tracing::warn!(%thread, error = %e, "semantic recall: cannot build the graph; searching exactly");
                }
            }
        });
    }

    /// Adds the thread's vectors above the graph's highest id. The caller
    /// holds `graph.filling`.
    async fn fill(&self, graph: &Arc<Graph>, resource: &str, thread: &str) -> Result<()> {
        // Keyed by seq (unique in a thread, and a thread's messages are
        // only ever deleted with it); paged by message id.
        const SQL: &str = "SELECT e.message_id, m.seq, e.vector FROM nodekit_am_embeddings e
             JOIN nodekit_am_messages m ON m.id = e.message_id
             WHERE e.thread_id = $1 AND e.resource_id = $2 AND e.dims > 0 AND e.message_id > $3
             ORDER BY e.message_id LIMIT $4";
        while !graph.dropped.load(Ordering::Acquire) {
            let after = graph.max_id.load(Ordering::Acquire);
            let rows: Vec<(i64, i64, Vec<u8>)> = match self.pools() {
                Pools::Sqlite { read, .. } => sqlx::query_as(SQL)
                    .bind(thread)
                    .bind(resource)
                    .bind(after)
                    .bind(PAGE)
                    .fetch_all(read)
                    .await
                    .map_err(db)?,
                Pools::Postgres(pool) => sqlx::query_as(SQL)
                    .bind(thread)
                    .bind(resource)
                    .bind(after)
                    .bind(PAGE)
                    .fetch_all(pool)
                    .await
                    .map_err(db)?,
            };
            let Some(&(last, _, _)) = rows.last() else {
                return Ok(());
            };
            let full = rows.len() as i64 == PAGE;
            let vectors: Vec<(i64, Vec<f32>)> = rows
                .into_iter()
                .map(|(_, seq, b)| (seq, bytes_vector(&b)))
                .collect();
            let g = graph.clone();
            let there = tokio::task::spawn_blocking(move || {
                let there = g.add(&vectors)?;
                g.max_id.store(last, Ordering::Release);
                Ok::<usize, crate::error::Error>(there)
            })
            .await
            .map_err(|e| err(format!("graph build stopped: {e}")))??;
            if there > 0 {
                // New rows with seqs the graph holds: the thread was deleted
                // and imported again (by another process, or after a failed
                // page). The graph is dropped; the next search builds anew.
                graph.dropped.store(true, Ordering::Release);
                self.graphs().forget(thread);
                return Ok(());
            }
            if !full {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// The HNSW index: usearch's with the `ann` feature (the default). Without
/// it no graph is built, and a long thread's recall searches its newest
/// [`EXACT_LIMIT`] messages exactly.
#[cfg(feature = "ann")]
mod hnsw {
    pub(super) use usearch::Index;
    use usearch::{IndexOptions, MetricKind, ScalarKind};

    pub(super) const AVAILABLE: bool = true;

    pub(super) fn new(dims: usize) -> Result<Index, String> {
        let options = IndexOptions {
            dimensions: dims,
            metric: MetricKind::Cos,
            quantization: ScalarKind::I8,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: 64,
            multi: false,
        };
        Index::new(&options).map_err(|e| e.to_string())
    }
}

#[cfg(not(feature = "ann"))]
mod hnsw {
    /// No index can exist: every method is unreachable.
    pub(super) enum Index {}

    pub(super) const AVAILABLE: bool = false;

    pub(super) fn new(_dims: usize) -> Result<Index, String> {
        Err("nodekit was built without its `ann` feature".into())
    }

    pub(super) struct Found {
        pub(super) keys: Vec<u64>,
    }

    impl Index {
        pub(super) fn size(&self) -> usize {
            match *self {}
        }
        pub(super) fn capacity(&self) -> usize {
            match *self {}
        }
        pub(super) fn reserve_capacity_and_threads(
            &self,
            _: usize,
            _: usize,
        ) -> Result<(), String> {
            match *self {}
        }
        pub(super) fn contains(&self, _: u64) -> bool {
            match *self {}
        }
        pub(super) fn add(&self, _: u64, _: &[f32]) -> Result<(), String> {
            match *self {}
        }
        pub(super) fn search(&self, _: &[f32], _: usize) -> Result<Found, String> {
            match *self {}
        }
    }
}

//! Approximate search for long threads: an HNSW graph per thread.
//!
//! An exact scan reads every vector of the thread, so its cost grows with
//! the thread (about 1.5 GB of vectors for a million 384-dimension
//! messages). A thread with more than [`EXACT_LIMIT`] messages is therefore
//! (or [`Store::with_exact_limit`]) searched through an HNSW graph built by [usearch](https://github.com/unum-cloud/USearch)
//! (cosine distance, vectors quantized to `i8`, 16 links per node), whose
//! cost grows with the logarithm of the thread's length.
//!
//! The graph is a cache kept in this process's memory; the database stays
//! the only source of truth:
//!
//! - it is built from `nodekit_am_embeddings` on a background task the first
//!   time a long thread is written to or searched; until it is ready the
//!   thread is searched exactly, as before;
//! - it holds every vector up to the highest message id it has read, and
//!   catches up with rows above that id after each write of this process and
//!   before each search (so vectors written by another process on the same
//!   database are found too); a thread's vectors are written in message
//!   order, oldest first, so ids only grow;
//! - at most [`MAX_GRAPHS`] graphs are kept, the least recently used one is
//!   dropped; a deleted thread's graph is dropped at once, and a graph is
//!   keyed by the thread's creation time, so a thread deleted and created
//!   again never reuses it. Ids are read back through the resource and
//!   thread filter in any case.
//!
//! A graph costs about 0.8 KB of memory per message (measured in
//! BENCHMARKS.md), and a restarted process rebuilds it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::{bytes_vector, db, err};
use crate::agent_memory::store::{Pools, Store, ThreadInfo};
use crate::error::Result;

/// Threads with at most this many messages are searched exactly; longer
/// ones through an HNSW graph (the default of [`Store::with_exact_limit`]).
pub const EXACT_LIMIT: i64 = 20_000;
/// Most graphs kept in memory at once (least recently used dropped first).
pub const MAX_GRAPHS: usize = 8;
/// Vectors read from the database per query while building or catching up.
const PAGE: i64 = 4096;
/// Concurrent searches and additions one graph allows.
const GRAPH_THREADS: usize = 64;

/// The graphs of a [`Store`], by thread.
#[derive(Default)]
pub(crate) struct Graphs {
    by_thread: Mutex<HashMap<GraphKey, Arc<Graph>>>,
}

impl std::fmt::Debug for Graphs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.by_thread.lock().map_or(0, |m| m.len());
        f.debug_struct("Graphs").field("loaded", &n).finish()
    }
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
    /// One reader of new rows at a time.
    filling: tokio::sync::Mutex<()>,
    used: Mutex<Instant>,
}

impl Graph {
    fn new(dims: usize) -> Result<Graph> {
        let options = IndexOptions {
            dimensions: dims,
            metric: MetricKind::Cos,
            quantization: ScalarKind::I8,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: 64,
            multi: false,
        };
        let index = Index::new(&options).map_err(|e| err(format!("cannot create a graph: {e}")))?;
        Ok(Graph {
            index: RwLock::new(index),
            max_id: AtomicI64::new(0),
            ready: AtomicBool::new(false),
            filling: tokio::sync::Mutex::new(()),
            used: Mutex::new(Instant::now()),
        })
    }

    /// Adds `rows` (id, vector), spread over the machine's cores.
    fn add(&self, rows: &[(i64, Vec<f32>)]) -> Result<()> {
        let lock = |e| err(format!("a graph lock was poisoned: {e}"));
        {
            let index = self.index.read().map_err(|e| lock(e.to_string()))?;
            let needed = index.size() + rows.len();
            if needed > index.capacity() {
                drop(index);
                let index = self.index.write().map_err(|e| lock(e.to_string()))?;
                let capacity = needed.max(index.capacity() * 2).max(1024);
                index
                    .reserve_capacity_and_threads(capacity, GRAPH_THREADS)
                    .map_err(|e| err(format!("cannot grow a graph: {e}")))?;
            }
        }
        let index = self.index.read().map_err(|e| lock(e.to_string()))?;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = rows.len().div_ceil(workers).max(64);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(chunk)
                .map(|part| {
                    let index = &*index;
                    s.spawn(move || {
                        for (id, v) in part {
                            // Already there: a row read twice by a catch-up
                            // racing the build.
                            if !index.contains(*id as u64) {
                                index.add(*id as u64, v).map_err(|e| e.to_string())?;
                            }
                        }
                        Ok::<(), String>(())
                    })
                })
                .collect();
            for h in handles {
                h.join()
                    .map_err(|_| err("a graph worker panicked"))?
                    .map_err(|e| err(format!("cannot add to a graph: {e}")))?;
            }
            Ok(())
        })
    }

    fn search(&self, query: &[f32], k: usize) -> Result<Vec<i64>> {
        *self.used.lock().map_err(|e| err(e.to_string()))? = Instant::now();
        let index = self.index.read().map_err(|e| err(e.to_string()))?;
        let found = index
            .search(query, k)
            .map_err(|e| err(format!("graph search failed: {e}")))?;
        Ok(found.keys.into_iter().map(|k| k as i64).collect())
    }
}

impl Graphs {
    /// The thread's graph, and whether it was just created (and must be built).
    fn get_or_insert(&self, key: GraphKey, dims: usize) -> Result<(Arc<Graph>, bool)> {
        let mut map = self.by_thread.lock().map_err(|e| err(e.to_string()))?;
        if let Some(g) = map.get(&key) {
            return Ok((g.clone(), false));
        }
        if map.len() >= MAX_GRAPHS {
            let oldest = map
                .iter()
                .min_by_key(|(_, g)| g.used.lock().map_or_else(|_| Instant::now(), |t| *t))
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                map.remove(&k);
            }
        }
        let graph = Arc::new(Graph::new(dims)?);
        map.insert(key, graph.clone());
        Ok((graph, true))
    }

    fn get(&self, key: &GraphKey) -> Option<Arc<Graph>> {
        self.by_thread.lock().ok()?.get(key).cloned()
    }

    /// Drops the thread's graphs (the thread was deleted).
    pub(crate) fn forget(&self, thread: &str) {
        if let Ok(mut map) = self.by_thread.lock() {
            map.retain(|(t, _), _| t != thread);
        }
    }

    /// How many graphs are loaded, and how many vectors they hold.
    pub(crate) fn loaded(&self) -> (usize, usize) {
        let Ok(map) = self.by_thread.lock() else {
            return (0, 0);
        };
        let vectors = map
            .values()
            .filter_map(|g| g.index.read().ok().map(|i| i.size()))
            .sum();
        (map.len(), vectors)
    }
}

impl Store {
    /// The `k` nearest message ids through the thread's graph, or `None`
    /// when the thread is short or its graph is not built yet (the caller
    /// searches exactly).
    pub(super) async fn graph_nearest(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        dims: usize,
        query: &[f32],
        k: usize,
    ) -> Result<Option<Vec<i64>>> {
        if thread.last_seq <= self.exact_limit() {
            return Ok(None);
        }
        let key = (thread.id.clone(), thread.created_at);
        let (graph, fresh) = self.graphs().get_or_insert(key, dims)?;
        if fresh {
            self.spawn_build(resource, thread, graph);
            return Ok(None);
        }
        if !graph.ready.load(Ordering::Acquire) {
            return Ok(None);
        }
        // Rows another process wrote since: at most one page on the request
        // path, and none while this process is already reading them.
        if let Ok(guard) = graph.filling.try_lock() {
            self.fill(&graph, resource, &thread.id, Some(1)).await?;
            drop(guard);
        }
        // Well under a millisecond: cheaper here than a hop to a blocking thread.
        graph.search(query, k).map(Some)
    }

    /// After vectors of the thread were written: a loaded graph catches up;
    /// a long thread without one gets it built.
    pub(super) async fn graph_after_write(
        &self,
        resource: &str,
        thread: &ThreadInfo,
        dims: usize,
    ) -> Result<()> {
        if thread.last_seq <= self.exact_limit() {
            return Ok(());
        }
        let key = (thread.id.clone(), thread.created_at);
        let graph = match self.graphs().get(&key) {
            Some(g) => g,
            None => {
                let (graph, fresh) = self.graphs().get_or_insert(key, dims)?;
                if fresh {
                    self.spawn_build(resource, thread, graph);
                }
                return Ok(());
            }
        };
        if !graph.ready.load(Ordering::Acquire) {
            return Ok(()); // the build reads these rows too
        }
        let _guard = graph.filling.lock().await;
        self.fill(&graph, resource, &thread.id, None).await
    }

    fn spawn_build(&self, resource: &str, thread: &ThreadInfo, graph: Arc<Graph>) {
        let store = self.clone();
        let (resource, thread) = (resource.to_owned(), thread.id.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let built = {
                let _guard = graph.filling.lock().await;
                store.fill(&graph, &resource, &thread, None).await
            };
            match built {
                Ok(()) => {
                    graph.ready.store(true, Ordering::Release);
                    tracing::info!(%thread, elapsed = ?started.elapsed(), "semantic recall: graph built");
                }
                Err(e) => {
                    tracing::warn!(%thread, error = %e, "semantic recall: cannot build the graph; searching exactly");
                    store.graphs().forget(&thread);
                }
            }
        });
    }

    /// Adds the thread's vectors above the graph's highest id, `pages` pages
    /// at most (all without a limit). The caller holds `graph.filling`.
    async fn fill(
        &self,
        graph: &Arc<Graph>,
        resource: &str,
        thread: &str,
        pages: Option<usize>,
    ) -> Result<()> {
        const SQL: &str = "SELECT message_id, vector FROM nodekit_am_embeddings
             WHERE thread_id = $1 AND resource_id = $2 AND dims > 0 AND message_id > $3
             ORDER BY message_id LIMIT $4";
        let mut read = 0;
        while pages.is_none_or(|p| read < p) {
            let after = graph.max_id.load(Ordering::Acquire);
            let rows: Vec<(i64, Vec<u8>)> = match self.pools() {
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
            let Some(&(last, _)) = rows.last() else {
                return Ok(());
            };
            let full = rows.len() as i64 == PAGE;
            let vectors: Vec<(i64, Vec<f32>)> = rows
                .into_iter()
                .map(|(id, b)| (id, bytes_vector(&b)))
                .collect();
            let g = graph.clone();
            tokio::task::spawn_blocking(move || g.add(&vectors))
                .await
                .map_err(|e| err(format!("graph build stopped: {e}")))??;
            graph.max_id.store(last, Ordering::Release);
            read += 1;
            if !full {
                return Ok(());
            }
        }
        Ok(())
    }
}

//! Approximate search for large indexes: an HNSW graph
//! ([usearch](https://github.com/unum-cloud/USearch)), cosine similarity
//! (the inner product of the vectors scaled to length 1), vectors quantized
//! to `i8`, 32 links per node.
//!
//! A graph's cost grows with the logarithm of the number of vectors, where
//! an exact scan grows with the number. Its answer is approximate, and the
//! `i8` quantization blurs close distances, so the graph is asked for more
//! candidates than wanted ([`Breadth`]), which are put in order by their
//! distance to a copy of the vectors at half precision (`f16`, 2 bytes a
//! dimension) kept beside the graph.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::segments::Segments;
use super::{IndexResult as Result, err};

#[cfg(feature = "ann")]
type Half = half::f16;
#[cfg(not(feature = "ann"))]
type Half = f32;

/// Whether this build has graphs (the `ann` feature). Without it every
/// index is searched exactly ([`super::flat`]).
pub(super) const AVAILABLE: bool = hnsw::AVAILABLE;

/// How widely a graph searches: more is slower and finds more of the
/// exact answer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Breadth {
    /// The graph's breadth while searching (usearch's `expansion_search`).
    search: usize,
    /// The fewest candidates a graph returns for the `k` wanted (at least
    /// `2 * k`): ordering a wider answer again makes up for the
    /// quantization's blur.
    candidates: usize,
}

impl Breadth {
    /// For agent memory's messages (dense embeddings, top 5): at 100,000
    /// the top 40 of a breadth of 128, reordered, hold 96% of the exact
    /// top 5.
    #[cfg(feature = "_agent-memory")]
    pub(crate) const MESSAGES: Breadth = Breadth {
        search: 128,
        candidates: 40,
    };
    /// For vector stores' documents: at 100,000 chunks embedded by
    /// feature hashing (sparse vectors, many tied scores) a breadth of 128 and 40 candidates give 95% of the right top
    /// 4; 192 and 48, 96%, for 0.15 ms more a search.
    pub(crate) const DOCUMENTS: Breadth = Breadth {
        search: 192,
        candidates: 48,
    };

    fn candidates(self, k: usize) -> usize {
        k.saturating_mul(2).max(self.candidates)
    }
}

/// A graph and the copy of its vectors. Searches, additions and removals
/// run together (usearch locks each node inside; a removal only marks its
/// node, which searches then skip and a later addition reuses). Growing
/// the capacity ([`Graph::reserve`], when an addition finds no room: the
/// capacity doubles, so rarely) runs alone, and waits for a moment when no
/// search or addition runs; searches queue behind it only when no such
/// moment comes within 20 ms ([`Graph::alone`]). The owner adds one batch
/// at a time, on a blocking thread.
pub(super) struct Graph {
    index: hnsw::Index,
    breadth: Breadth,
    copy: Segments<Half>,
    /// Read by searches, removals and each vector's addition; written to
    /// grow the graph ([`Graph::alone`]).
    shared: RwLock<()>,
    /// How many wait to have the graph alone: additions pause meanwhile.
    waiting: AtomicUsize,
}

impl Graph {
    pub(super) fn new(dims: usize, breadth: Breadth) -> Result<Graph> {
        let index = hnsw::new(dims, breadth.search)
            .map_err(|e| err(format!("cannot create a graph: {e}")))?;
        Ok(Graph {
            index,
            breadth,
            copy: Segments::new(dims),
            shared: RwLock::new(()),
            waiting: AtomicUsize::new(0),
        })
    }

    /// The graph to itself: additions pause after the vector they are
    /// adding, and it waits, without making searches wait, for a moment
    /// when no search runs. After `PATIENCE` it queues like any writer, so
    /// a graph searched without pause is still changed.
    fn alone(&self) -> Alone<'_> {
        const PATIENCE: Duration = Duration::from_millis(20);
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let start = Instant::now();
        let guard = loop {
            match self.shared.try_write() {
                Ok(alone) => break alone,
                Err(std::sync::TryLockError::Poisoned(e)) => break e.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if start.elapsed() < PATIENCE => {
                    std::thread::sleep(Duration::from_micros(20));
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    break self.shared.write().unwrap_or_else(|e| e.into_inner());
                }
            }
        };
        Alone {
            _guard: guard,
            waiting: &self.waiting,
        }
    }

    fn shared(&self) -> std::sync::RwLockReadGuard<'_, ()> {
        self.shared.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn size(&self) -> usize {
        self.index.size()
    }

    #[cfg(feature = "_agent-memory")]
    /// Bytes held: usearch's own count and the copy.
    pub(super) fn bytes(&self) -> usize {
        self.index.memory_usage() + self.copy.bytes()
    }

    pub(super) fn contains(&self, seq: i64) -> bool {
        self.index.contains(seq as u64)
    }

    /// Makes room for `extra` more vectors (nothing when there is room).
    /// Growing copies usearch's table of nodes (not the vectors), alone
    /// ([`Graph::alone`]); the capacity doubles, so it is rare.
    pub(super) fn reserve(&self, extra: usize) -> Result<()> {
        if self.has_room(extra) {
            return Ok(());
        }
        let _alone = self.alone();
        let capacity = (self.index.size() + extra)
            .max(self.index.capacity() * 2)
            .max(1024);
        self.index
            .reserve_capacity_and_threads(capacity, GRAPH_THREADS)
            .map_err(|e| err(format!("cannot grow a graph: {e}")))
    }

    fn has_room(&self, extra: usize) -> bool {
        self.index.size() + extra <= self.index.capacity()
    }

    /// Adds `rows` (seq, vector), room for which was [reserved](Graph::reserve),
    /// spread over all the machine's cores but one (a build at a million
    /// messages takes minutes; one core is left to the requests). The
    /// caller adds one batch at a time. Keys held already are skipped, so
    /// a batch that failed part way can be added again.
    pub(super) fn add(&self, rows: &[(i64, &[f32])]) -> Result<()> {
        let rows: Vec<(i64, &[f32])> = rows
            .iter()
            .filter(|(seq, _)| !self.index.contains(*seq as u64))
            .copied()
            .collect();
        let rows = rows.as_slice();
        // The copy first: every candidate a search finds has its row.
        self.copy.extend(rows);
        let workers =
            std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
        let chunk = rows.len().div_ceil(workers).max(64);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(chunk)
                .map(|part| {
                    let index = &self.index;
                    s.spawn(move || {
                        for (seq, v) in part {
                            while self.waiting.load(Ordering::Acquire) > 0 {
                                std::thread::sleep(Duration::from_micros(50));
                            }
                            let _shared = self.shared();
                            index.add(*seq as u64, v).map_err(|e| e.to_string())?;
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

    /// About the `k` nearest vectors (similarity by the half-precision
    /// copy, key), nearest first; with `keep`, only keys it accepts.
    pub(super) fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> Result<Vec<(f32, i64)>> {
        // usearch makes room for every candidate asked for: never more
        // than the graph holds.
        let count = self.breadth.candidates(k).min(self.size());
        if count == 0 {
            return Ok(Vec::new());
        }
        let found = {
            let _shared = self.shared();
            match keep {
                None => self.index.search(query, count),
                Some(keep) => self
                    .index
                    .filtered_search(query, count, |key| keep(key as i64)),
            }
        }
        .map_err(|e| err(format!("graph search failed: {e}")))?;
        let seqs: Vec<i64> = found.keys.into_iter().map(|k| k as i64).collect();
        Ok(self.copy.snapshot().order(query, &seqs, k))
    }

    /// Removes the vectors under `keys` (keys not held are ignored) from
    /// the graph, beside searches and additions, then from the copy.
    pub(super) fn remove(&self, keys: &[i64]) -> Result<()> {
        {
            let _shared = self.shared();
            for key in keys {
                self.index
                    .remove(*key as u64)
                    .map_err(|e| err(format!("cannot remove from a graph: {e}")))?;
            }
        }
        self.copy.remove(keys);
        Ok(())
    }
}

/// The graph held alone ([`Graph::alone`]); additions go on when it is
/// dropped.
struct Alone<'a> {
    _guard: RwLockWriteGuard<'a, ()>,
    waiting: &'a AtomicUsize,
}

impl Drop for Alone<'_> {
    fn drop(&mut self) {
        self.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Concurrent searches and additions one graph allows.
const GRAPH_THREADS: usize = 64;

/// The HNSW index: usearch's with the `ann` feature (the default).
#[cfg(feature = "ann")]
mod hnsw {
    pub(super) use usearch::Index;
    use usearch::{IndexOptions, MetricKind, ScalarKind};

    pub(super) const AVAILABLE: bool = true;

    pub(super) fn new(dims: usize, expansion_search: usize) -> Result<Index, String> {
        // 32 links, a breadth of 256 when adding and (for
        // `Breadth::MESSAGES`) 128 when searching: at 100,000 dense 384-dimension vectors (close to random, the
        // hardest case) the top 40, reordered exactly, hold 96% of the
        // exact top 5. Adding with a breadth of 128 builds twice as fast
        // and holds 94.5%; 16 links, 93%; 24 links (adding with 384), 96%
        // but no faster.
        //
        // The inner product, not the cosine: usearch scales every vector
        // to length 1 when it quantizes it to `i8`, so the two order
        // alike, and the inner product's kernel takes half the time (a
        // search of 100,000 vectors: 0.6 ms, against 1.05 ms).
        let options = IndexOptions {
            dimensions: dims,
            metric: MetricKind::IP,
            quantization: ScalarKind::I8,
            connectivity: 32,
            expansion_add: 256,
            expansion_search,
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

    pub(super) fn new(_dims: usize, _expansion_search: usize) -> Result<Index, String> {
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
        #[cfg(feature = "_agent-memory")]
        pub(super) fn memory_usage(&self) -> usize {
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
        pub(super) fn filtered_search(
            &self,
            _: &[f32],
            _: usize,
            _: impl Fn(u64) -> bool,
        ) -> Result<Found, String> {
            match *self {}
        }
        pub(super) fn remove(&self, _: u64) -> Result<usize, String> {
            match *self {}
        }
    }
}

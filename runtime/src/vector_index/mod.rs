//! Vectors held in memory for nearest-neighbour search, shared by agent
//! memory's recall and the vector stores.
//!
//! An [`Index`] holds vectors under integer keys. While it has at most its
//! exact limit of them it is a plain block ([`flat`]), normalised and
//! scanned exactly; past it, an HNSW graph ([`ann`], with the `ann`
//! feature) whose best candidates are put in order again by a
//! half-precision copy of the vectors.
//!
//! Adding to a graph is the slow part (a vector of a 100,000-vector graph
//! takes about a millisecond), so vectors past the exact limit first go to
//! a pending block, which searches scan exactly beside the graph: they are
//! found as soon as [`Index::add`] returns. [`Index::absorb`] moves them
//! into the graph (building it, beside the block, the first time), on the
//! caller's thread or in the background ([`absorb_later`]). Searches and
//! additions may run together; growing a graph's capacity waits for the
//! searches to end.

mod ann;
mod flat;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

pub(crate) use ann::Breadth;
use ann::Graph;
use flat::Flat;

pub(crate) use flat::dot;

/// Whether this build has graphs (the `ann` feature); without it every
/// index is searched exactly.
pub(crate) const GRAPHS: bool = ann::AVAILABLE;

/// A vector as little-endian `f32`s (sqlite-vec's blob format).
#[cfg(any(feature = "agent-memory", feature = "vector-store"))]
pub(crate) fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// A vector from little-endian `f32`s.
#[cfg(any(feature = "agent-memory", feature = "vector-store"))]
pub(crate) fn bytes_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A vector in pgvector's text form, `[1,0.5,-2]`.
#[cfg(any(feature = "agent-memory", feature = "vector-store"))]
pub(crate) fn pg_vector(v: &[f32]) -> String {
    let mut s = String::with_capacity(v.len() * 10 + 2);
    s.push('[');
    for (i, f) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&f.to_string());
    }
    s.push(']');
    s
}

/// Says yes at most once a period: how often a search of a held index
/// looks for rows another process wrote to the database.
#[cfg(any(feature = "agent-memory", feature = "vector-store"))]
#[derive(Debug)]
pub(crate) struct Throttle {
    born: std::time::Instant,
    /// When the next yes may come, in ms since `born`.
    next: std::sync::atomic::AtomicU64,
    every: std::time::Duration,
}

#[cfg(any(feature = "agent-memory", feature = "vector-store"))]
impl Throttle {
    /// Yes now, then at most once every `every`.
    pub(crate) fn new(every: std::time::Duration) -> Throttle {
        Throttle {
            born: std::time::Instant::now(),
            next: std::sync::atomic::AtomicU64::new(0),
            every,
        }
    }

    /// Whether the period has passed; if so, the next one starts now.
    pub(crate) fn due(&self) -> bool {
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let due = self.next.load(Ordering::Relaxed);
        let next = now.saturating_add(self.every.as_millis() as u64);
        now >= due
            && self
                .next
                .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Why an index operation failed (a graph could not be built or searched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexError(pub(crate) String);

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) type IndexResult<T> = std::result::Result<T, IndexError>;

fn err(what: impl Into<String>) -> IndexError {
    IndexError(what.into())
}

fn poisoned(e: impl std::fmt::Display) -> IndexError {
    err(format!("a vector index lock was poisoned: {e}"))
}

/// The keys nearest a query, nearest first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Nearest {
    /// By an exact scan.
    Exact(Vec<i64>),
    /// Through a graph.
    Approximate(Vec<i64>),
}

impl Nearest {
    /// The keys, however they were found.
    pub(crate) fn into_keys(self) -> Vec<i64> {
        match self {
            Nearest::Exact(keys) | Nearest::Approximate(keys) => keys,
        }
    }
}

enum Vectors {
    Exact(Flat),
    Graph(Graph),
}

/// Vectors of one length under integer keys; see the module docs.
pub(crate) struct Index {
    dims: usize,
    breadth: Breadth,
    vectors: RwLock<Vectors>,
    /// Added past the exact limit and not yet in the graph.
    pending: RwLock<Flat>,
    /// One absorber at a time.
    absorbing: Mutex<()>,
    /// Set while a background absorber is scheduled or running.
    absorb_scheduled: AtomicBool,
    bytes: AtomicUsize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (exact, graph) = self.sizes();
        f.debug_struct("Index")
            .field("dims", &self.dims)
            .field("exact", &exact)
            .field("graph", &graph)
            .finish()
    }
}

impl Index {
    /// An empty index of `dims`-long vectors, whose graph (when it has
    /// one) searches as widely as `breadth`.
    pub(crate) fn new(dims: usize, breadth: Breadth) -> Index {
        Index {
            dims,
            breadth,
            vectors: RwLock::new(Vectors::Exact(Flat::new(dims))),
            pending: RwLock::new(Flat::new(dims)),
            absorbing: Mutex::new(()),
            absorb_scheduled: AtomicBool::new(false),
            bytes: AtomicUsize::new(0),
        }
    }

    /// The length of its vectors.
    #[cfg(feature = "vector-store")]
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Bytes held.
    #[cfg(feature = "agent-memory")]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire) + self.pending.read().map_or(0, |p| p.bytes())
    }

    /// (vectors scanned exactly, pending ones included; vectors in a graph).
    pub(crate) fn sizes(&self) -> (usize, usize) {
        let pending = self.pending();
        match self.vectors.read().as_deref() {
            Ok(Vectors::Exact(f)) => (f.len() + pending, 0),
            Ok(Vectors::Graph(g)) => (pending, g.size()),
            Err(_) => (0, 0),
        }
    }

    /// How many vectors wait to go into the graph.
    pub(crate) fn pending(&self) -> usize {
        self.pending.read().map_or(0, |p| p.len())
    }

    /// The keys of the `k` vectors most similar (cosine) to `query`, most
    /// similar first; with `keep`, only keys it accepts. Searches on the
    /// caller's thread: under 0.1 ms for a block of a few thousand vectors,
    /// about 0.6 ms for a graph of 100,000 (384 dimensions).
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> IndexResult<Nearest> {
        let (mut found, graph) = match &*self.vectors.read().map_err(poisoned)? {
            Vectors::Exact(flat) => (flat.search(query, k, keep), false),
            Vectors::Graph(graph) => (graph.search(query, k, keep)?, true),
        };
        let pending = self.pending.read().map_err(poisoned)?;
        if !pending.is_empty() {
            // A vector being absorbed may be in both: scored once.
            found.extend(pending.search(query, k, keep));
            found.sort_by(|a, b| a.1.cmp(&b.1).then(b.0.total_cmp(&a.0)));
            found.dedup_by_key(|(_, key)| *key);
            found = flat::best(found, k);
        }
        let keys = found.into_iter().map(|(_, key)| key).collect();
        Ok(if graph {
            Nearest::Approximate(keys)
        } else {
            Nearest::Exact(keys)
        })
    }

    /// Adds `rows` (key, vector); vectors of another length are skipped.
    /// Up to `exact_limit` vectors they join the exact block; past it they
    /// wait in the pending block (searched exactly until [`Index::absorb`]
    /// moves them into the graph; without the `ann` feature the block just
    /// grows). If any of the keys is held already, nothing is added and the
    /// count of those keys is returned. One caller adds at a time.
    pub(crate) fn add(&self, rows: &[(i64, &[f32])], exact_limit: usize) -> IndexResult<usize> {
        let rows: Vec<(i64, &[f32])> = rows
            .iter()
            .filter(|(_, v)| v.len() == self.dims)
            .copied()
            .collect();
        // The pending block, then the vectors (read only, so an absorber
        // adding to the graph does not hold the caller up): the one order
        // in which two of these locks are held.
        let mut pending = self.pending.write().map_err(poisoned)?;
        let exact = {
            let vectors = self.vectors.read().map_err(poisoned)?;
            let held = match &*vectors {
                Vectors::Exact(flat) => rows.iter().filter(|(k, _)| flat.contains(*k)).count(),
                Vectors::Graph(graph) => rows.iter().filter(|(k, _)| graph.contains(*k)).count(),
            } + rows.iter().filter(|(k, _)| pending.contains(*k)).count();
            if held > 0 {
                return Ok(held);
            }
            // Once vectors wait, every later one waits too: the graph is
            // built from the block as it was. (An absorber runs only while
            // vectors wait, so the block does not change under it.)
            matches!(&*vectors, Vectors::Exact(flat)
                if !GRAPHS || (pending.is_empty() && flat.len() + rows.len() <= exact_limit))
        };
        if !exact {
            pending.extend(rows);
            return Ok(0);
        }
        if let Vectors::Exact(flat) = &mut *self.vectors.write().map_err(poisoned)? {
            flat.extend(rows);
            self.bytes.store(flat.bytes(), Ordering::Release);
        }
        Ok(0)
    }

    /// Moves the pending vectors into the graph, building it from the
    /// exact block the first time (beside it: searches go on). Blocking,
    /// and long for a large batch (a graph spreads it over all cores but
    /// one): run it on a blocking thread.
    pub(crate) fn absorb(&self) -> IndexResult<()> {
        let _one = self.absorbing.lock().map_err(poisoned)?;
        loop {
            let batch: Vec<(i64, Vec<f32>)> = self
                .pending
                .read()
                .map_err(poisoned)?
                .iter()
                .map(|(key, v)| (key, v.to_vec()))
                .collect();
            if batch.is_empty() {
                return Ok(());
            }
            let rows: Vec<(i64, &[f32])> = batch.iter().map(|(k, v)| (*k, v.as_slice())).collect();
            let building = match &*self.vectors.read().map_err(poisoned)? {
                Vectors::Exact(flat) => {
                    let graph = Graph::new(self.dims, self.breadth)?;
                    graph.reserve(flat.len() + rows.len())?;
                    graph.add(&flat.iter().collect::<Vec<_>>())?;
                    Some(graph)
                }
                Vectors::Graph(_) => None,
            };
            match building {
                Some(graph) => {
                    graph.add(&rows)?;
                    self.bytes.store(graph.bytes(), Ordering::Release);
                    *self.vectors.write().map_err(poisoned)? = Vectors::Graph(graph);
                }
                None => {
                    if let Vectors::Graph(graph) = &*self.vectors.write().map_err(poisoned)? {
                        // Growing the graph reallocates it: no search meanwhile.
                        graph.reserve(rows.len())?;
                    }
                    if let Vectors::Graph(graph) = &*self.vectors.read().map_err(poisoned)? {
                        graph.add(&rows)?;
                        self.bytes.store(graph.bytes(), Ordering::Release);
                    }
                }
            }
            let keys: Vec<i64> = batch.iter().map(|(k, _)| *k).collect();
            self.pending.write().map_err(poisoned)?.remove(&keys);
        }
    }

    /// Removes the vectors under `keys` (keys not held are ignored).
    /// Waits for an absorber's graph additions to end.
    pub(crate) fn remove(&self, keys: &[i64]) -> IndexResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        self.pending.write().map_err(poisoned)?.remove(keys);
        let mut vectors = self.vectors.write().map_err(poisoned)?;
        match &mut *vectors {
            Vectors::Exact(flat) => {
                flat.remove(keys);
                self.bytes.store(flat.bytes(), Ordering::Release);
            }
            Vectors::Graph(graph) => {
                graph.remove(keys)?;
                self.bytes.store(graph.bytes(), Ordering::Release);
            }
        }
        Ok(())
    }
}

/// Absorbs `index`'s pending vectors on a blocking thread, unless an
/// absorber is already scheduled (it takes these too).
pub(crate) fn absorb_later(index: &Arc<Index>) {
    if index.absorb_scheduled.swap(true, Ordering::AcqRel) {
        return;
    }
    let index = index.clone();
    let work = move || loop {
        if let Err(e) = index.absorb() {
            tracing::warn!(error = %e, "vector index: cannot add vectors to a graph; they are scanned exactly");
        }
        index.absorb_scheduled.store(false, Ordering::Release);
        // Vectors added after the last look get their own absorber.
        if index.pending() == 0 || index.absorb_scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
    };
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => drop(handle.spawn_blocking(work)),
        Err(_) => drop(std::thread::spawn(work)),
    }
}

#[cfg(all(test, feature = "ann"))]
mod tests {
    use super::*;

    fn rows(list: &[(i64, Vec<f32>)]) -> Vec<(i64, &[f32])> {
        list.iter().map(|(k, v)| (*k, v.as_slice())).collect()
    }

    #[test]
    fn vectors_past_the_limit_are_found_before_and_after_they_join_the_graph() {
        let index = Index::new(2, Breadth::DOCUMENTS);
        let all: Vec<(i64, Vec<f32>)> = (0..20)
            .map(|i| (i, vec![(i as f32 * 0.3).cos(), (i as f32 * 0.3).sin()]))
            .collect();
        assert_eq!(index.add(&rows(&all[..8]), 8).unwrap(), 0);
        assert_eq!(index.sizes(), (8, 0));
        index.add(&rows(&all[8..]), 8).unwrap();
        assert_eq!(index.pending(), 12);
        let q = [(15.0f32 * 0.3).cos(), (15.0f32 * 0.3).sin()];
        // Pending vectors are found at once, by the exact scan.
        assert_eq!(index.search(&q, 1, None).unwrap(), Nearest::Exact(vec![15]));
        index.absorb().unwrap();
        assert_eq!((index.pending(), index.sizes()), (0, (0, 20)));
        assert_eq!(
            index.search(&q, 1, None).unwrap(),
            Nearest::Approximate(vec![15])
        );
        // Keys held already: nothing is added.
        assert_eq!(index.add(&rows(&all[3..5]), 8).unwrap(), 2);
        // Later vectors wait beside the graph, and both answer.
        index.add(&[(20, &[q[0], q[1]][..])], 8).unwrap();
        let both = index.search(&q, 2, None).unwrap().into_keys();
        assert_eq!(both.len(), 2);
        assert!(both.contains(&15) && both.contains(&20), "{both:?}");
        index.remove(&[15, 20]).unwrap();
        let left = index.search(&q, 2, None).unwrap().into_keys();
        assert!(!left.contains(&15) && !left.contains(&20), "{left:?}");
    }
}

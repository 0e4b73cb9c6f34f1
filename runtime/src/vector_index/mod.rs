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

pub(crate) use flat::{dot, normalise, normalised};

/// Whether this build has graphs (the `ann` feature); without it every
/// index is searched exactly.
pub(crate) const GRAPHS: bool = ann::AVAILABLE;

/// How many vectors an absorber adds to a graph under one read lock
/// (about half a second at 100,000 vectors on one core).
const ABSORB_PART: usize = 1_024;

/// A vector as little-endian `f32`s (sqlite-vec's blob format).
#[cfg(any(feature = "_agent-memory", feature = "vector-store-sqlite"))]
pub(crate) fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// A vector from little-endian `f32`s.
#[cfg(any(feature = "_agent-memory", feature = "vector-store-sqlite"))]
pub(crate) fn bytes_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A vector in pgvector's text form, `[1,0.5,-2]`.
#[cfg(any(feature = "agent-memory-postgres", feature = "vector-store-postgres"))]
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
#[cfg(any(
    feature = "_agent-memory",
    feature = "vector-store-sqlite",
    feature = "vector-store-postgres"
))]
#[derive(Debug)]
pub(crate) struct Throttle {
    born: std::time::Instant,
    /// When the next yes may come, in ms since `born`.
    next: std::sync::atomic::AtomicU64,
    every: std::time::Duration,
}

#[cfg(any(
    feature = "_agent-memory",
    feature = "vector-store-sqlite",
    feature = "vector-store-postgres"
))]
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
    /// While an absorber moves a batch, the keys removed meanwhile: a key
    /// the absorber has copied out of the pending block but not yet put in
    /// the graph is in neither, so it removes them from the graph itself.
    removed: Mutex<Option<Vec<i64>>>,
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
            removed: Mutex::new(None),
            absorb_scheduled: AtomicBool::new(false),
            bytes: AtomicUsize::new(0),
        }
    }

    /// The length of its vectors.
    #[cfg(feature = "vector-store-sqlite")]
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Bytes held.
    #[cfg(feature = "_agent-memory")]
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
        // The pending block first: an absorber puts a vector in the graph
        // before it leaves the block, so one of the two reads finds it.
        let waiting = {
            let pending = self.pending.read().map_err(poisoned)?;
            (!pending.is_empty()).then(|| pending.search(query, k, keep))
        };
        let (mut found, graph) = match &*self.vectors.read().map_err(poisoned)? {
            Vectors::Exact(flat) => (flat.search(query, k, keep), false),
            Vectors::Graph(graph) => (graph.search(query, k, keep)?, true),
        };
        if let Some(waiting) = waiting {
            // A vector being absorbed may be in both: scored once.
            found.extend(waiting);
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
            *self.removed.lock().map_err(poisoned)? = Some(Vec::new());
            let moved = self.absorb_batch();
            let removed = self.removed.lock().map_err(poisoned)?.take();
            let Some(keys) = moved? else {
                return Ok(());
            };
            if let Some(removed) = removed.filter(|r| !r.is_empty()) {
                self.remove_held(&removed)?;
            }
            self.pending.write().map_err(poisoned)?.remove(&keys);
        }
    }

    /// Puts a copy of the pending block in the graph (building it the
    /// first time); the keys it moved, `None` when nothing waits.
    fn absorb_batch(&self) -> IndexResult<Option<Vec<i64>>> {
        let batch: Vec<(i64, Vec<f32>)> = self
            .pending
            .read()
            .map_err(poisoned)?
            .iter()
            .map(|(key, v)| (key, v.to_vec()))
            .collect();
        if batch.is_empty() {
            return Ok(None);
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
                // Growing the graph reallocates it: no search meanwhile. It
                // grows by doubling, so most batches fit, and then
                // searches do not wait for a write lock at all.
                let fits = match &*self.vectors.read().map_err(poisoned)? {
                    Vectors::Graph(graph) => graph.has_room(rows.len()),
                    Vectors::Exact(_) => true,
                };
                if !fits && let Vectors::Graph(graph) = &*self.vectors.write().map_err(poisoned)? {
                    graph.reserve(rows.len())?;
                }
                // A part at a time, so a removal waiting for the write
                // lock (and the searches queued behind it) waits for one
                // part, not the whole batch.
                for part in rows.chunks(ABSORB_PART) {
                    if let Vectors::Graph(graph) = &*self.vectors.read().map_err(poisoned)? {
                        graph.add(part)?;
                        self.bytes.store(graph.bytes(), Ordering::Release);
                    }
                }
            }
        }
        Ok(Some(batch.into_iter().map(|(k, _)| k).collect()))
    }

    /// Removes the vectors under `keys` (keys not held are ignored);
    /// a removed key is not added again (the stores never reuse a key;
    /// agent memory removes none).
    /// Waits for the part of a batch an absorber is adding to the graph.
    pub(crate) fn remove(&self, keys: &[i64]) -> IndexResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        if let Some(removed) = self.removed.lock().map_err(poisoned)?.as_mut() {
            removed.extend_from_slice(keys);
        }
        self.pending.write().map_err(poisoned)?.remove(keys);
        self.remove_held(keys)
    }

    /// Removes `keys` from the exact block or the graph.
    fn remove_held(&self, keys: &[i64]) -> IndexResult<()> {
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
        let absorbed = index.absorb();
        index.absorb_scheduled.store(false, Ordering::Release);
        if let Err(e) = absorbed {
            // Tried again at the next addition, not in a loop.
            tracing::warn!(error = %e, "vector index: cannot add vectors to a graph; they are scanned exactly");
            return;
        }
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

    /// Whether `key` is in the exact block or the graph.
    fn holds(index: &Index, key: i64) -> bool {
        match &*index.vectors.read().unwrap() {
            Vectors::Exact(flat) => flat.contains(key),
            Vectors::Graph(graph) => graph.contains(key),
        }
    }

    fn pseudo_random(n: i64, dims: usize, seed: u64) -> Vec<(i64, Vec<f32>)> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2_000) as f32 / 1_000.0 - 1.0
        };
        (0..n)
            .map(|key| (key, (0..dims).map(|_| next()).collect()))
            .collect()
    }

    #[test]
    fn keys_removed_while_an_absorber_moves_them_do_not_come_back() {
        let index = Arc::new(Index::new(16, Breadth::DOCUMENTS));
        let all = pseudo_random(6_000, 16, 7);
        index.add(&rows(&all[..100]), 100).unwrap();
        let mut removed = Vec::new();
        for batch in all[100..].chunks(1_475) {
            index.add(&rows(batch), 100).unwrap();
            // Removals race the absorber: some land before it copies the
            // batch, some while it adds it, some after.
            let absorber = {
                let index = index.clone();
                std::thread::spawn(move || index.absorb())
            };
            for (key, _) in batch.iter().step_by(5) {
                index.remove(&[*key]).unwrap();
                removed.push(*key);
            }
            absorber.join().unwrap().unwrap();
        }
        index.absorb().unwrap();
        assert_eq!(index.pending(), 0);
        let back: Vec<i64> = removed
            .iter()
            .copied()
            .filter(|k| holds(&index, *k))
            .collect();
        assert!(back.is_empty(), "removed keys held again: {back:?}");
        assert!(
            all.iter()
                .all(|(k, _)| removed.contains(k) || holds(&index, *k))
        );
    }

    #[test]
    fn a_graph_takes_a_batch_again_and_a_huge_k() {
        let graph = Graph::new(4, Breadth::DOCUMENTS).unwrap();
        let all = pseudo_random(50, 4, 3);
        graph.reserve(all.len()).unwrap();
        graph.add(&rows(&all)).unwrap();
        // Keys held already are skipped, as a retry after a failure needs.
        graph.add(&rows(&all)).unwrap();
        assert_eq!(graph.size(), 50);
        // A k far past the graph's size asks usearch for no more than it holds.
        let found = graph.search(&all[0].1, usize::MAX / 2, None).unwrap();
        assert!(!found.is_empty() && found.len() <= 50, "{}", found.len());
    }
}

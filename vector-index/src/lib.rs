//! Vectors held in memory for nearest-neighbour search, shared by agent
//! memory's recall and the vector stores.
//!
//! An [`Index`] holds vectors under integer keys. While it has at most its
//! exact limit of them it is a plain block (`flat`), normalised and
//! scanned exactly; past it, an HNSW graph (`ann`, with the `ann`
//! feature) whose best candidates are put in order again by a
//! half-precision copy of the vectors. Keys with the same vector share one
//! node of the graph: repeated text costs it one node, not one a copy.
//!
//! Adding to a graph is the slow part (a vector of a 100,000-vector graph
//! takes about a millisecond), so vectors past the exact limit first wait
//! in the block, which searches scan exactly beside the graph: they are
//! found as soon as [`Index::add`] returns. [`Index::absorb`] moves them
//! into the graph (building it, beside the block, the first time), on the
//! caller's thread or in the background ([`absorb_later`]).
//!
//! Searches do not wait for writers. The block and the graph's copy of
//! its vectors are `segments`: a search reads a snapshot while writers
//! build the next one. The graph itself (usearch) takes additions and
//! removals beside searches; growing its capacity (rare: it doubles) waits
//! for a moment no search runs, and only when none comes within 20 ms do
//! searches wait for it (see `ann`'s `Graph`). It grows only in
//! [`Index::absorb`], which runs on a blocking thread.

mod ann;
mod flat;
mod segments;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

pub use ann::Breadth;
use ann::Graph;
use segments::Segments;

pub use flat::{dot, normalise, normalised};

/// Whether this build has graphs (the `ann` feature); without it every
/// index is searched exactly.
pub const GRAPHS: bool = ann::AVAILABLE;

/// How many vectors an absorber adds to a graph before it takes them out
/// of the block (about half a second at 100,000 vectors on one core): the
/// exact scan of a large batch shrinks as it goes.
const ABSORB_PART: usize = 1_024;

/// A vector as little-endian `f32`s (sqlite-vec's blob format).
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// A vector from little-endian `f32`s.
pub fn bytes_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A vector in pgvector's text form, `[1,0.5,-2]`.
pub fn pg_vector(v: &[f32]) -> String {
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
#[derive(Debug)]
pub struct Throttle {
    born: std::time::Instant,
    /// When the next yes may come, in ms since `born`.
    next: std::sync::atomic::AtomicU64,
    every: std::time::Duration,
}

impl Throttle {
    /// Yes now, then at most once every `every`.
    pub fn new(every: std::time::Duration) -> Throttle {
        Throttle {
            born: std::time::Instant::now(),
            next: std::sync::atomic::AtomicU64::new(0),
            every,
        }
    }

    /// Whether the period has passed; if so, the next one starts now.
    pub fn due(&self) -> bool {
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
pub struct IndexError(pub String);

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An index operation's result.
pub type IndexResult<T> = std::result::Result<T, IndexError>;

fn err(what: impl Into<String>) -> IndexError {
    IndexError(what.into())
}

/// A lock that nothing leaves half-changed on a panic: its guard, poisoned
/// or not.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The keys nearest a query, nearest first.
#[derive(Debug, Clone, PartialEq)]
pub enum Nearest {
    /// By an exact scan.
    Exact(Vec<i64>),
    /// Through a graph.
    Approximate(Vec<i64>),
}

impl Nearest {
    /// The keys, however they were found.
    pub fn into_keys(self) -> Vec<i64> {
        match self {
            Nearest::Exact(keys) | Nearest::Approximate(keys) => keys,
        }
    }
}

/// Vectors of one length under integer keys; see the module docs.
pub struct Index {
    dims: usize,
    breadth: Breadth,
    /// The vectors not in the graph: all of them while it has none.
    block: Segments<f32>,
    /// Set once, when the block first outgrows the exact limit; the lock
    /// is held only to clone or set the pointer.
    graph: RwLock<Option<Arc<Graph>>>,
    /// The exact limit of the last addition.
    exact_limit: AtomicUsize,
    /// One absorber at a time.
    absorbing: Mutex<()>,
    /// While an absorber moves a part of the block, the keys removed
    /// meanwhile: a key it is putting in the graph may be added there after
    /// its removal looked, so the absorber removes them again. A removal
    /// holds it from start to end.
    removed: Mutex<Option<Vec<i64>>>,
    /// Set while a background absorber is scheduled or running.
    absorb_scheduled: AtomicBool,
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
    pub fn new(dims: usize, breadth: Breadth) -> Index {
        Index {
            dims,
            breadth,
            block: Segments::new(dims),
            graph: RwLock::new(None),
            exact_limit: AtomicUsize::new(usize::MAX),
            absorbing: Mutex::new(()),
            removed: Mutex::new(None),
            absorb_scheduled: AtomicBool::new(false),
        }
    }

    /// The length of its vectors.
    pub fn dims(&self) -> usize {
        self.dims
    }

    fn graph(&self) -> Option<Arc<Graph>> {
        self.graph.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.block.bytes() + self.graph().map_or(0, |g| g.bytes())
    }

    /// (vectors scanned exactly, those waiting for the graph included;
    /// vectors in a graph).
    pub fn sizes(&self) -> (usize, usize) {
        (self.block.len(), self.graph().map_or(0, |g| g.size()))
    }

    /// How many vectors wait to go into the graph (none while the block
    /// is within the exact limit and there is no graph yet).
    pub fn pending(&self) -> usize {
        let block = self.block.len();
        let waits =
            GRAPHS && (self.graph().is_some() || block > self.exact_limit.load(Ordering::Relaxed));
        if waits { block } else { 0 }
    }

    /// The keys of the `k` vectors most similar (cosine) to `query`, most
    /// similar first; with `keep`, only keys it accepts. Searches on the
    /// caller's thread: under 0.1 ms for a block of a few thousand vectors,
    /// about 0.6 ms for a graph of 100,000 (384 dimensions).
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> IndexResult<Nearest> {
        // The block first: an absorber puts a vector in the graph before it
        // leaves the block, so one of the two reads finds it.
        let block = self.block.snapshot();
        let Some(graph) = self.graph() else {
            let found = block.search(query, k, keep);
            return Ok(Nearest::Exact(
                found.into_iter().map(|(_, key)| key).collect(),
            ));
        };
        let mut found = graph.search(query, k, keep)?;
        if !block.is_empty() {
            // A vector being absorbed may be in both: scored once.
            found.extend(block.search(query, k, keep));
            found.sort_by(|a, b| a.1.cmp(&b.1).then(b.0.total_cmp(&a.0)));
            found.dedup_by_key(|(_, key)| *key);
            found = flat::best(found, k);
        }
        Ok(Nearest::Approximate(
            found.into_iter().map(|(_, key)| key).collect(),
        ))
    }

    /// Adds `rows` (key, vector); vectors of another length are skipped.
    /// They join the block: scanned exactly until the block outgrows
    /// `exact_limit`, then until [`Index::absorb`] moves them into the graph
    /// (without the `ann` feature the block just grows). If any of the keys
    /// is held already, nothing is added and the count of those keys is
    /// returned. One caller adds at a time.
    pub fn add(&self, rows: &[(i64, &[f32])], exact_limit: usize) -> IndexResult<usize> {
        self.exact_limit.store(exact_limit, Ordering::Relaxed);
        // The block first, as a search reads them.
        let block = self.block.snapshot();
        let graph = self.graph();
        let held = rows
            .iter()
            .filter(|(k, _)| block.contains(*k) || graph.as_ref().is_some_and(|g| g.contains(*k)))
            .count();
        if held == 0 {
            self.block.extend(rows);
        }
        Ok(held)
    }

    /// Moves the vectors waiting in the block into the graph, building it
    /// from the whole block the first time (beside it: searches go on),
    /// then a part at a time. Blocking, and long for a large batch (a graph
    /// spreads it over all cores but one): run it on a blocking thread.
    pub fn absorb(&self) -> IndexResult<()> {
        let _one = lock(&self.absorbing);
        while self.pending() > 0 {
            let waiting = {
                // Taken with the removal list set, under its lock: a
                // removal is wholly before the snapshot or recorded.
                let mut removed = lock(&self.removed);
                *removed = Some(Vec::new());
                self.block.snapshot()
            };
            let graph = self.graph();
            // The whole block builds the graph; later, a part at a time.
            let part = graph.as_ref().map_or(usize::MAX, |_| ABSORB_PART);
            let rows: Vec<(i64, &[f32])> = waiting.iter().take(part).collect();
            let added = match graph {
                None => self.build(&rows),
                Some(graph) => graph.add(&rows),
            };
            // Removals made meanwhile leave the graph even when the
            // addition failed partway (it may hold some of their keys).
            let removed = lock(&self.removed).take();
            if let (Some(graph), Some(removed)) = (self.graph(), removed)
                && !removed.is_empty()
            {
                graph.remove(&removed)?;
            }
            added?;
            let keys: Vec<i64> = rows.iter().map(|(k, _)| *k).collect();
            self.block.remove(&keys);
        }
        Ok(())
    }

    /// Builds the graph from `rows`, then lets searches use it.
    fn build(&self, rows: &[(i64, &[f32])]) -> IndexResult<()> {
        let graph = Graph::new(self.dims, self.breadth)?;
        graph.add(rows)?;
        *self.graph.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(graph));
        Ok(())
    }

    /// Removes the vectors under `keys` (keys not held are ignored);
    /// a removed key is not added again (the stores never reuse a key;
    /// agent memory removes none).
    pub fn remove(&self, keys: &[i64]) -> IndexResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut removed = lock(&self.removed);
        if let Some(removed) = removed.as_mut() {
            removed.extend_from_slice(keys);
        }
        self.block.remove(keys);
        if let Some(graph) = self.graph() {
            graph.remove(keys)?;
        }
        Ok(())
    }
}

/// Absorbs `index`'s pending vectors on a blocking thread, unless an
/// absorber is already scheduled (it takes these too).
pub fn absorb_later(index: &Arc<Index>) {
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
        // Past the limit, the whole block waits for the graph.
        assert_eq!((index.pending(), index.sizes()), (20, (20, 0)));
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

    /// Whether `key` is in the block or the graph.
    fn holds(index: &Index, key: i64) -> bool {
        index.block.snapshot().contains(key) || index.graph().is_some_and(|g| g.contains(key))
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

    /// Adds the first 100 of `all`, then the rest batch by batch (past a
    /// limit of 100), each while its keys that `gone` picks are removed
    /// one by one as an absorber moves it; then checks they are gone and
    /// the rest held.
    fn removals_race_an_absorber(all: &[(i64, Vec<f32>)], gone: impl Fn(i64) -> bool) -> Index {
        let index = Arc::new(Index::new(16, Breadth::DOCUMENTS));
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
            for (key, _) in batch.iter().filter(|(key, _)| gone(*key)) {
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
        Arc::into_inner(index).unwrap()
    }

    #[test]
    fn keys_removed_while_an_absorber_moves_them_do_not_come_back() {
        removals_race_an_absorber(&pseudo_random(6_000, 16, 7), |key| key % 5 == 0);
    }

    #[test]
    fn copies_removed_while_an_absorber_moves_them_do_not_come_back() {
        // Two keys in three hold one of 12 vectors, a new one every 500
        // keys; every key of the odd ones goes, so their nodes empty while
        // the absorber puts them in the graph.
        let copied = pseudo_random(12, 16, 13);
        let mut all = pseudo_random(6_000, 16, 7);
        for (key, v) in all.iter_mut().filter(|(key, _)| key % 3 != 0) {
            *v = copied[*key as usize / 500].1.clone();
        }
        let gone = |key: i64| key >= 100 && (key % 5 == 0 || (key % 3 != 0 && key / 500 % 2 == 1));
        let index = removals_race_an_absorber(&all, gone);
        // No node is left for a vector whose keys are all gone.
        let distinct = (0..6_000).filter(|key| key % 3 == 0 && !gone(*key)).count();
        let graph = index.graph().unwrap();
        assert_eq!(graph.node_count(), distinct + 6);
        assert_eq!(graph.size(), (0..6_000).filter(|key| !gone(*key)).count());
    }

    #[test]
    fn searches_find_what_stays_while_writers_add_absorb_and_remove() {
        let index = Arc::new(Index::new(16, Breadth::DOCUMENTS));
        let all = pseudo_random(8_000, 16, 11);
        // Keys below 2,000 stay; the rest come and, every other one, go.
        index.add(&rows(&all[..2_000]), 500).unwrap();
        index.absorb().unwrap();
        let writer = {
            let (index, all) = (index.clone(), all.clone());
            std::thread::spawn(move || {
                for batch in all[2_000..].chunks(500) {
                    index.add(&rows(batch), 500).unwrap();
                    absorb_later(&index);
                    let gone: Vec<i64> = batch.iter().map(|(k, _)| *k).step_by(2).collect();
                    index.remove(&gone).unwrap();
                }
                index.absorb().unwrap();
            })
        };
        let (mut searched, mut found) = (0, 0);
        while !writer.is_finished() || searched < 200 {
            let (key, v) = &all[searched % 2_000];
            let nearest = index.search(v, 1, None).unwrap().into_keys();
            assert!(nearest.iter().all(|k| (0..8_000).contains(k)));
            found += usize::from(nearest.first() == Some(key));
            searched += 1;
        }
        writer.join().unwrap();
        assert!(found * 100 >= searched * 99, "{found} of {searched}");
        assert_eq!(index.pending(), 0);
        // What was removed is gone; what was added and kept is held.
        for (key, _) in &all[2_000..] {
            assert_eq!(holds(&index, *key), key % 2 == 1, "key {key}");
        }
    }

    #[test]
    fn identical_vectors_are_found_as_an_exact_scan_finds_them() {
        // Three keys in four hold one boilerplate vector, the others
        // distinct ones.
        let distinct = pseudo_random(1_000, 16, 5);
        let boilerplate: Vec<f32> = (0..16)
            .map(|d| if d % 3 == 0 { 0.5 } else { -0.25 })
            .collect();
        let all: Vec<(i64, Vec<f32>)> = (0..4_000)
            .map(|key| match key % 4 {
                0 => (key, distinct[key as usize / 4].1.clone()),
                _ => (key, boilerplate.clone()),
            })
            .collect();
        let index = Index::new(16, Breadth::DOCUMENTS);
        index.add(&rows(&all), 100).unwrap();
        index.absorb().unwrap();
        assert_eq!(index.sizes(), (0, 4_000));
        // The exact answer: an index that never builds a graph.
        let exact = Index::new(16, Breadth::DOCUMENTS);
        exact.add(&rows(&all), usize::MAX).unwrap();
        let third = |key: i64| key % 3 == 1;
        let check = |index: &Index, exact: &Index| {
            for k in [1, 4, 60, 500] {
                for keep in [None, Some(&third as &dyn Fn(i64) -> bool)] {
                    let got = index.search(&boilerplate, k, keep).unwrap().into_keys();
                    let want = exact.search(&boilerplate, k, keep).unwrap().into_keys();
                    assert_eq!(got, want, "k = {k}, filtered: {}", keep.is_some());
                }
            }
        };
        check(&index, &exact);
        // Removing the lowest copies: the next ones take their place.
        let gone: Vec<i64> = (0..2_000).filter(|key| key % 4 != 0).collect();
        index.remove(&gone).unwrap();
        exact.remove(&gone).unwrap();
        check(&index, &exact);
        // With every copy gone, none is found.
        let copies: Vec<i64> = (0..4_000).filter(|key| key % 4 != 0).collect();
        index.remove(&copies).unwrap();
        let left = index.search(&boilerplate, 10, None).unwrap().into_keys();
        assert_eq!(left.len(), 10);
        assert!(left.iter().all(|key| key % 4 == 0), "{left:?}");
    }

    #[test]
    fn a_graph_holds_one_node_for_each_distinct_vector() {
        let graph = Graph::new(8, Breadth::DOCUMENTS).unwrap();
        let same = vec![0.5f32; 8];
        // The same direction: the same vector once scaled to length 1.
        let longer: Vec<f32> = same.iter().map(|x| x * 4.0).collect();
        let copy = |key: i64| if key % 2 == 0 { &same } else { &longer }.clone();
        let mut all = pseudo_random(10, 8, 9);
        all.extend((100..10_100).map(|key| (key, copy(key))));
        graph.add(&rows(&all)).unwrap();
        assert_eq!((graph.size(), graph.node_count()), (10_010, 11));
        let keys =
            |found: Vec<(f32, i64)>| found.into_iter().map(|(_, key)| key).collect::<Vec<_>>();
        assert_eq!(keys(graph.search(&same, 3, None).unwrap()), [100, 101, 102]);
        let sevens = |key: i64| key % 7 == 0;
        assert_eq!(
            keys(graph.search(&same, 3, Some(&sevens)).unwrap()),
            [105, 112, 119]
        );
        // Copies join the node, in a later batch and out of key order too.
        let late = vec![(50, copy(50)), (20_000, copy(20_001))];
        graph.add(&rows(&late)).unwrap();
        assert_eq!((graph.size(), graph.node_count()), (10_012, 11));
        assert_eq!(keys(graph.search(&same, 2, None).unwrap()), [50, 100]);
        // The node stays while a key holds it, and goes with the last.
        let most: Vec<i64> = (100..10_099).chain([50]).collect();
        graph.remove(&most).unwrap();
        assert_eq!((graph.size(), graph.node_count()), (12, 11));
        assert_eq!(
            keys(graph.search(&same, 3, None).unwrap())[..2],
            [10_099, 20_000]
        );
        graph.remove(&[10_099, 20_000]).unwrap();
        assert_eq!((graph.size(), graph.node_count()), (10, 10));
        assert!(
            keys(graph.search(&same, 3, None).unwrap())
                .iter()
                .all(|key| *key < 10)
        );
        // The vector comes back as a node of its own.
        graph.add(&[(30_000, &same[..])]).unwrap();
        assert_eq!((graph.size(), graph.node_count()), (11, 11));
        assert_eq!(keys(graph.search(&same, 1, None).unwrap()), [30_000]);
    }

    #[test]
    fn a_graph_takes_a_batch_again_and_a_huge_k() {
        let graph = Graph::new(4, Breadth::DOCUMENTS).unwrap();
        let all = pseudo_random(50, 4, 3);
        graph.add(&rows(&all)).unwrap();
        // Keys held already are skipped, as a retry after a failure needs.
        graph.add(&rows(&all)).unwrap();
        assert_eq!(graph.size(), 50);
        // A k far past the graph's size asks usearch for no more than it holds.
        let found = graph.search(&all[0].1, usize::MAX / 2, None).unwrap();
        assert!(!found.is_empty() && found.len() <= 50, "{}", found.len());
    }
}

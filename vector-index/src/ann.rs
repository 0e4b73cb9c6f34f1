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
//!
//! Keys whose vectors that copy holds the same share one node. Repeated
//! text (headers, footers, log lines) embeds to one vector many times, and
//! usearch adds copies of a vector twenty times slower than distinct ones:
//! it thins a node's full list of links by dropping a neighbour closer to
//! another kept neighbour than to the node, and copies are never closer to
//! each other than to the node (they tie), so each link a copy adds to a
//! full list compares every pair in it. A search expands each node it
//! finds into its keys, the lowest first, as the copies would have tied.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::flat::{Element, best, stored};
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
pub struct Breadth {
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
    pub const MESSAGES: Breadth = Breadth {
        search: 128,
        candidates: 40,
    };
    /// For vector stores' documents: at 100,000 chunks embedded by
    /// feature hashing (sparse vectors, many tied scores) a breadth of 128 and 40 candidates give 95% of the right top
    /// 4; 192 and 48, 96%, for 0.15 ms more a search.
    pub const DOCUMENTS: Breadth = Breadth {
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
/// at a time, on a blocking thread. Keys whose vectors are the same share
/// one node ([`Nodes`]; see the module docs).
pub(super) struct Graph {
    /// Nodes under their ids ([`Nodes`]), not under keys.
    index: hnsw::Index,
    breadth: Breadth,
    /// The row of each node, under its id.
    copy: Segments<Half>,
    nodes: RwLock<Nodes>,
    /// Read by searches, removals and each vector's addition; written to
    /// grow the graph ([`Graph::alone`]).
    shared: RwLock<()>,
    /// How many wait to have the graph alone: additions pause meanwhile.
    waiting: AtomicUsize,
}

/// Rows an addition groups under one hold of the nodes' lock: searches
/// wait for it at most that long.
const GROUP_PART: usize = 256;

/// Which keys each node of a graph stands for: the keys whose vectors, as
/// the copy holds them (scaled to length 1, at half precision), are the
/// same, bit for bit. The graph ranks candidates by that copy, so keys of
/// one node tie in its answers as they would as nodes of their own.
#[derive(Default)]
struct Nodes {
    of_key: HashMap<i64, u64>,
    nodes: HashMap<u64, Node>,
    /// A node by the hash of its row. Of two rows with the same hash only
    /// the first is here: the second keeps a node of its own.
    by_row: HashMap<u64, u64>,
    next_id: u64,
    /// Keys in [`Keys::Many`] sets, for [`Graph::bytes`].
    shared_keys: usize,
}

struct Node {
    /// The hash of its row ([`row_hash`]).
    hash: u64,
    keys: Keys,
}

/// A node's keys, in key order. Most nodes have one, which takes no set.
enum Keys {
    One(i64),
    Many(BTreeSet<i64>),
}

impl Keys {
    fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let (one, many) = match self {
            Keys::One(key) => (Some(*key), None),
            Keys::Many(keys) => (None, Some(keys.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

impl Nodes {
    /// `key` joins `node`.
    fn join(&mut self, node: u64, key: i64) {
        let Some(n) = self.nodes.get_mut(&node) else {
            return;
        };
        match &mut n.keys {
            Keys::One(first) => {
                n.keys = Keys::Many(BTreeSet::from([*first, key]));
                self.shared_keys += 2;
            }
            Keys::Many(keys) => {
                if keys.insert(key) {
                    self.shared_keys += 1;
                }
            }
        }
        self.of_key.insert(key, node);
    }

    /// A new node for `key`, whose row hashes to `hash`.
    fn create(&mut self, key: i64, hash: u64) -> u64 {
        let node = self.next_id;
        self.next_id += 1;
        self.nodes.insert(
            node,
            Node {
                hash,
                keys: Keys::One(key),
            },
        );
        self.by_row.entry(hash).or_insert(node);
        self.of_key.insert(key, node);
        node
    }

    /// `key` leaves its node; the node, if that was its last key.
    fn leave(&mut self, key: i64) -> Option<u64> {
        let node = self.of_key.remove(&key)?;
        let n = self.nodes.get_mut(&node)?;
        if let Keys::Many(keys) = &mut n.keys {
            if keys.remove(&key) {
                self.shared_keys -= 1;
            }
            if let Some(last) = keys.first().copied().filter(|_| keys.len() == 1) {
                n.keys = Keys::One(last);
                self.shared_keys -= 1;
            }
            return None;
        }
        self.drop_node(node);
        Some(node)
    }

    /// Forgets `node` and its keys.
    fn drop_node(&mut self, node: u64) {
        let Some(n) = self.nodes.remove(&node) else {
            return;
        };
        if self.by_row.get(&n.hash) == Some(&node) {
            self.by_row.remove(&n.hash);
        }
        if let Keys::Many(keys) = &n.keys {
            self.shared_keys -= keys.len();
        }
        for key in n.keys.iter() {
            self.of_key.remove(&key);
        }
    }

    fn keys(&self, node: u64) -> impl Iterator<Item = i64> + '_ {
        self.nodes
            .get(&node)
            .into_iter()
            .flat_map(|n| n.keys.iter())
    }
}

/// A hash of a row's bits (FNV-1a, an element at a time).
fn row_hash(row: &[Half]) -> u64 {
    row.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ u64::from(x.bits())).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn same_row(a: &[Half], b: &[Half]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

impl Graph {
    pub(super) fn new(dims: usize, breadth: Breadth) -> Result<Graph> {
        let index = hnsw::new(dims, breadth.search)
            .map_err(|e| err(format!("cannot create a graph: {e}")))?;
        Ok(Graph {
            index,
            breadth,
            copy: Segments::new(dims),
            nodes: RwLock::new(Nodes::default()),
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

    /// The nodes' lock: taken after `shared` when both are held, never
    /// before (a search's filter reads it inside usearch).
    fn nodes(&self) -> std::sync::RwLockReadGuard<'_, Nodes> {
        self.nodes.read().unwrap_or_else(|e| e.into_inner())
    }

    fn nodes_mut(&self) -> std::sync::RwLockWriteGuard<'_, Nodes> {
        self.nodes.write().unwrap_or_else(|e| e.into_inner())
    }

    /// How many keys it holds.
    pub(super) fn size(&self) -> usize {
        self.nodes().of_key.len()
    }

    /// How many nodes it holds: one for each distinct vector.
    #[cfg(all(test, feature = "ann"))]
    pub(super) fn node_count(&self) -> usize {
        self.index.size()
    }

    /// Bytes held: usearch's own count, the copy and the nodes' maps.
    pub(super) fn bytes(&self) -> usize {
        let nodes = {
            let n = self.nodes();
            // A map's entry, and a byte of control, for each place.
            n.of_key.capacity() * 17
                + n.nodes.capacity() * (9 + std::mem::size_of::<Node>())
                + n.by_row.capacity() * 17
                + n.shared_keys * 16
        };
        self.index.memory_usage() + self.copy.bytes() + nodes
    }

    pub(super) fn contains(&self, key: i64) -> bool {
        self.nodes().of_key.contains_key(&key)
    }

    /// Makes room for `extra` more nodes (nothing when there is room).
    /// Growing copies usearch's table of nodes (not the vectors), alone
    /// ([`Graph::alone`]); the capacity doubles, so it is rare.
    fn reserve(&self, extra: usize) -> Result<()> {
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

    /// Adds `rows` (key, vector): a key whose vector a node holds already
    /// joins it, the others become nodes, put in the graph spread over all
    /// the machine's cores but one (a build at a million messages takes
    /// minutes; one core is left to the requests). The caller adds one
    /// batch at a time. Keys held already are skipped, and a failed
    /// addition keeps none of the keys it did not put in the graph, so the
    /// batch can be added again.
    pub(super) fn add(&self, rows: &[(i64, &[f32])]) -> Result<()> {
        let fresh = self.group(rows);
        let added = self.reserve(fresh.len()).and_then(|()| self.insert(&fresh));
        self.settle(&fresh);
        added
    }

    /// Sorts `rows` into nodes, held ones or new ones (returned, with the
    /// vector each is added with), whose rows the copy then holds.
    fn group<'a>(&self, rows: &[(i64, &'a [f32])]) -> Vec<(u64, &'a [f32])> {
        let dims = self.copy.dims();
        let mut fresh = Vec::new();
        for part in rows.chunks(GROUP_PART) {
            let held_as: Vec<(i64, &[f32], Vec<Half>)> = part
                .iter()
                .filter(|(_, v)| v.len() == dims)
                .map(|&(key, v)| (key, v, stored(v).collect()))
                .collect();
            // The part's new nodes, with their rows until the copy has them.
            let mut new: Vec<(u64, &[f32], &[Half])> = Vec::new();
            {
                let copy = self.copy.snapshot();
                let mut nodes = self.nodes_mut();
                for (key, v, row) in &held_as {
                    let (key, v, row) = (*key, *v, row.as_slice());
                    if nodes.of_key.contains_key(&key) {
                        continue;
                    }
                    let hash = row_hash(row);
                    let same = nodes.by_row.get(&hash).copied().filter(|node| {
                        let held = new
                            .iter()
                            .find(|(n, _, _)| n == node)
                            .map(|(_, _, r)| *r)
                            .or_else(|| copy.row(*node as i64));
                        held.is_some_and(|held| same_row(held, row))
                    });
                    match same {
                        Some(node) => nodes.join(node, key),
                        None => new.push((nodes.create(key, hash), v, row)),
                    }
                }
            }
            // Before usearch has them: every node a search finds has its row.
            let rows: Vec<(i64, &[f32])> = new.iter().map(|(n, v, _)| (*n as i64, *v)).collect();
            self.copy.extend(&rows);
            fresh.extend(new.iter().map(|(n, v, _)| (*n, *v)));
        }
        fresh
    }

    /// Puts `fresh` nodes (id, vector) in usearch, room for which was
    /// reserved, over all cores but one.
    fn insert(&self, fresh: &[(u64, &[f32])]) -> Result<()> {
        let workers =
            std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
        let chunk = fresh.len().div_ceil(workers).max(64);
        std::thread::scope(|s| {
            let handles: Vec<_> = fresh
                .chunks(chunk)
                .map(|part| {
                    let index = &self.index;
                    s.spawn(move || {
                        for (node, v) in part {
                            while self.waiting.load(Ordering::Acquire) > 0 {
                                std::thread::sleep(Duration::from_micros(50));
                            }
                            let _shared = self.shared();
                            index.add(*node, v).map_err(|e| e.to_string())?;
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

    /// After an addition: `fresh` nodes whose keys were all removed while
    /// they went in (their removal may have looked before usearch had
    /// them) leave usearch, and those usearch did not take (a failed
    /// addition) are forgotten with their keys; both leave the copy.
    fn settle(&self, fresh: &[(u64, &[f32])]) {
        let (mut gone, mut dead) = (Vec::new(), Vec::new());
        {
            let mut nodes = self.nodes_mut();
            for &(node, _) in fresh {
                let in_graph = self.index.contains(node);
                if !nodes.nodes.contains_key(&node) {
                    if in_graph {
                        gone.push(node);
                    }
                    dead.push(node as i64);
                } else if !in_graph {
                    nodes.drop_node(node);
                    dead.push(node as i64);
                }
            }
        }
        if !gone.is_empty() {
            let _shared = self.shared();
            for node in gone {
                // A node usearch cannot mark removed has no keys: searches
                // that find it find nothing under it.
                let _ = self.index.remove(node);
            }
        }
        self.copy.remove(&dead);
    }

    /// About the `k` nearest vectors (similarity by the half-precision
    /// copy, key), nearest first (ties: the lower key first); with `keep`,
    /// only keys it accepts.
    pub(super) fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> Result<Vec<(f32, i64)>> {
        // usearch makes room for every candidate asked for: never more
        // than the graph holds.
        let count = self.breadth.candidates(k).min(self.index.size());
        if count == 0 || k == 0 {
            return Ok(Vec::new());
        }
        let kept = |key: &i64| keep.is_none_or(|keep| keep(*key));
        let found = {
            let _shared = self.shared();
            match keep {
                None => self.index.search(query, count),
                Some(_) => self.index.filtered_search(query, count, |node| {
                    self.nodes().keys(node).any(|key| kept(&key))
                }),
            }
        }
        .map_err(|e| err(format!("graph search failed: {e}")))?;
        let nodes: Vec<i64> = found.keys.into_iter().map(|k| k as i64).collect();
        let scored = self.copy.snapshot().order(query, &nodes, nodes.len());
        let held = self.nodes();
        // A node's keys tie: the lowest `k` of each can make the answer.
        let keys = scored.into_iter().flat_map(|(score, node)| {
            held.keys(node as u64)
                .filter(|key| kept(key))
                .take(k)
                .map(move |key| (score, key))
        });
        Ok(best(keys, k))
    }

    /// Removes the vectors under `keys` (keys not held are ignored): a node
    /// leaves the graph, beside searches and additions, and then the copy,
    /// with its last key.
    pub(super) fn remove(&self, keys: &[i64]) -> Result<()> {
        let emptied: Vec<u64> = {
            let mut nodes = self.nodes_mut();
            keys.iter().filter_map(|key| nodes.leave(*key)).collect()
        };
        if emptied.is_empty() {
            return Ok(());
        }
        {
            let _shared = self.shared();
            for node in &emptied {
                self.index
                    .remove(*node)
                    .map_err(|e| err(format!("cannot remove from a graph: {e}")))?;
            }
        }
        let rows: Vec<i64> = emptied.iter().map(|n| *n as i64).collect();
        self.copy.remove(&rows);
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
        Err("nodekit-vector-index was built without its `ann` feature".into())
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

//! Vectors held in memory for nearest-neighbour search, shared by agent
//! memory's recall and the vector stores.
//!
//! An [`Index`] holds vectors under integer keys. While it has at most its
//! exact limit of them it is a plain block ([`flat`]), normalised and
//! scanned exactly; past it, an HNSW graph ([`ann`], with the `ann`
//! feature) whose best candidates are put in order again by a
//! half-precision copy of the vectors. The graph is built beside the block,
//! which keeps answering meanwhile. Searches and additions may run
//! together; growing a graph's capacity waits for the searches to end.

mod ann;
mod flat;

use std::sync::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    vectors: RwLock<Vectors>,
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
    /// An empty index of `dims`-long vectors.
    pub(crate) fn new(dims: usize) -> Index {
        Index {
            dims,
            vectors: RwLock::new(Vectors::Exact(Flat::new(dims))),
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
        self.bytes.load(Ordering::Acquire)
    }

    /// (vectors in an exact block, vectors in a graph).
    pub(crate) fn sizes(&self) -> (usize, usize) {
        match self.vectors.read().as_deref() {
            Ok(Vectors::Exact(f)) => (f.len(), 0),
            Ok(Vectors::Graph(g)) => (0, g.size()),
            Err(_) => (0, 0),
        }
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
        match &*self.vectors.read().map_err(poisoned)? {
            Vectors::Exact(flat) => Ok(Nearest::Exact(flat.search(query, k, keep))),
            Vectors::Graph(graph) => Ok(Nearest::Approximate(graph.search(query, k, keep)?)),
        }
    }

    /// Adds `rows` (key, vector); vectors of another length are skipped.
    /// Once the index would pass `exact_limit` vectors it becomes a graph
    /// (with the `ann` feature), built beside the block, which answers
    /// searches meanwhile. If any of the keys is held already, nothing is
    /// added and the count of those keys is returned. Blocking: a graph
    /// spreads a large batch over all cores but one. One caller adds at a
    /// time.
    pub(crate) fn add(&self, rows: &[(i64, &[f32])], exact_limit: usize) -> IndexResult<usize> {
        let rows: Vec<(i64, &[f32])> = rows
            .iter()
            .filter(|(_, v)| v.len() == self.dims)
            .copied()
            .collect();
        if let Vectors::Graph(graph) = &*self.vectors.write().map_err(poisoned)? {
            // Growing the graph reallocates it: no search meanwhile.
            graph.reserve(rows.len())?;
        }
        {
            let vectors = self.vectors.read().map_err(poisoned)?;
            let held = match &*vectors {
                Vectors::Exact(flat) => rows.iter().filter(|(k, _)| flat.contains(*k)).count(),
                Vectors::Graph(graph) => rows.iter().filter(|(k, _)| graph.contains(*k)).count(),
            };
            if held > 0 {
                return Ok(held);
            }
            match &*vectors {
                Vectors::Exact(flat) if GRAPHS && flat.len() + rows.len() > exact_limit => {
                    let graph = Graph::new(self.dims)?;
                    graph.reserve(flat.len() + rows.len())?;
                    graph.add(&flat.iter().collect::<Vec<_>>())?;
                    graph.add(&rows)?;
                    drop(vectors);
                    self.bytes.store(graph.bytes(), Ordering::Release);
                    *self.vectors.write().map_err(poisoned)? = Vectors::Graph(graph);
                    return Ok(0);
                }
                Vectors::Exact(_) => {}
                Vectors::Graph(graph) => {
                    graph.add(&rows)?;
                    self.bytes.store(graph.bytes(), Ordering::Release);
                    return Ok(0);
                }
            }
        }
        let mut vectors = self.vectors.write().map_err(poisoned)?;
        if let Vectors::Exact(flat) = &mut *vectors {
            flat.extend(rows);
            self.bytes.store(flat.bytes(), Ordering::Release);
        }
        Ok(0)
    }

    /// Removes the vectors under `keys` (keys not held are ignored).
    pub(crate) fn remove(&self, keys: &[i64]) -> IndexResult<()> {
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

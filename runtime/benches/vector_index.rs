//! Building an in-process store's search graph when chunks repeat:
//! boilerplate (headers, footers, log lines) embeds to the same vector
//! again and again. Each sample adds `n` documents of BENCH_DIMS-long
//! vectors (default 384) in batches of 1,000 to a fresh
//! [`InProcessVectorStore`] and waits until its graph holds them all (past
//! 4,096 documents a background thread builds it):
//!
//! - `identical`: every vector the same;
//! - `mostly_duplicate`: nine in ten are one of 20 boilerplate vectors,
//!   the rest distinct;
//! - `distinct`: every vector different, what the others are measured
//!   against.
//!
//! `cargo bench -p nodekit --features ann --bench vector_index`

use std::time::Duration;

use divan::Bencher;
use nodekit::document::Document;
use nodekit::vector_store::{Entry, InProcessVectorStore, VectorStore};

fn main() {
    divan::main();
}

const BATCH: usize = 1_000;

fn dims() -> usize {
    std::env::var("BENCH_DIMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(384)
}

/// Pseudo-random vectors (xorshift64), the same every run.
struct Vectors {
    state: u64,
    dims: usize,
}

impl Vectors {
    fn next(&mut self) -> Vec<f32> {
        (0..self.dims)
            .map(|_| {
                self.state ^= self.state << 13;
                self.state ^= self.state >> 7;
                self.state ^= self.state << 17;
                (self.state % 2_001) as f32 / 1_000.0 - 1.0
            })
            .collect()
    }
}

/// `n` entries, the `i`-th with the vector `pick` gives it from the
/// boilerplate vectors, or a fresh one where it gives none.
fn entries(n: usize, pick: impl Fn(usize) -> Option<usize>) -> Vec<Entry> {
    let mut vectors = Vectors {
        state: 0x9e37_79b9_7f4a_7c15,
        dims: dims(),
    };
    let boilerplate: Vec<Vec<f32>> = (0..20).map(|_| vectors.next()).collect();
    (0..n)
        .map(|i| Entry {
            document: Document::new(format!("chunk {i}")),
            vector: pick(i).map_or_else(|| vectors.next(), |b| boilerplate[b].clone()),
        })
        .collect()
}

/// Adds `entries` to a fresh store and waits for its graph to hold them.
fn insert(entries: Vec<Entry>) -> InProcessVectorStore {
    let store = InProcessVectorStore::new();
    let mut entries = entries.into_iter();
    loop {
        let batch: Vec<Entry> = entries.by_ref().take(BATCH).collect();
        if batch.is_empty() {
            break;
        }
        futures::executor::block_on(store.add_owned(batch)).unwrap();
    }
    while store.indexing() {
        std::thread::sleep(Duration::from_millis(1));
    }
    store
}

fn run(bencher: Bencher, n: usize, pick: impl Fn(usize) -> Option<usize> + Sync) {
    bencher
        .with_inputs(|| entries(n, &pick))
        .bench_values(insert);
}

#[divan::bench(args = [5_000, 12_500], sample_count = 3, sample_size = 1)]
fn identical(bencher: Bencher, n: usize) {
    run(bencher, n, |_| Some(0));
}

#[divan::bench(args = [5_000, 12_500], sample_count = 3, sample_size = 1)]
fn mostly_duplicate(bencher: Bencher, n: usize) {
    run(bencher, n, |i| (i % 10 != 0).then_some(i / 10 % 20));
}

#[divan::bench(args = [5_000, 12_500], sample_count = 3, sample_size = 1)]
fn distinct(bencher: Bencher, n: usize) {
    run(bencher, n, |_| None);
}

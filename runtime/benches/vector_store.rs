//! Vector stores and the text splitter at scale, on the same data and the
//! same work as the LangChain JS harness (`benches/vector-store/langchain`);
//! `benches/vector-store/run.sh` runs both and prints the ratios.
//!
//! The data (written to BENCH_DATA when missing, read from it otherwise,
//! so both sides read the same files): BENCH_N documents (default 10,000)
//! of 8–31 words from a 5,000-word vocabulary (word `w` drawn with
//! probability falling as 1/w), and BENCH_QUERIES (default 300) query
//! texts made the same way. Both sides embed with the same in-process
//! embedder, the Mastra harness's 384-dimension feature hashing (each word
//! adds ±1 to the dimension its SHA-1 picks; L2-normalised), so no model's
//! latency is in any figure and both do the same embedding work.
//!
//! For each store (BENCH_STORES, default "memory sqlite pgvector
//! pgvector_graph"; the last two need BENCH_DATABASE_URL, and
//! `pgvector_graph` is PGVector with its in-process index, pgvector's own
//! index off):
//! - insert: `DocumentStore::add_documents` (embedding included) in
//!   batches of 1,000, timed from the first to the last; the documents
//!   are searchable when each call returns;
//! - ready: until the store's search graph holds every document (in
//!   memory and SQLite a background thread builds it while inserts return;
//!   PostgreSQL's first search creates its HNSW index, or starts loading
//!   the in-process graph). Not in the search figures, and LangChain's
//!   first search is not either;
//! - search: `DocumentStore::search` with k = 4 (n8n's default),
//!   embedding the query included, each call timed, after BENCH_WARMUP
//!   (default 10) untimed searches, as the LangChain harness does;
//! - agreement: the share of the exact top 4 (a scan of every vector here)
//!   the store returns; recall: the share of the store's answers that are
//!   right, an answer being right when it scores at least the exact 4th
//!   best (feature hashing ties often: any of the tied documents is a
//!   right 4th);
//! - search while writing: the same searches again, in a loop for
//!   BENCH_WRITE_S seconds (default 5), while another task adds
//!   BENCH_WRITE_BATCH (default 100) new documents every
//!   BENCH_WRITE_EVERY_MS (default 20) and deletes half of each batch it
//!   adds: what a search pays for writers (and, on two cores, for the
//!   cores they take). No agreement: the writes change the answers.
//!
//! BENCH_CORPUS names a text file to split with the recursive splitter
//! (chunk size 1,000, overlap 200: the Default Data Loader's), once into
//! borrowed chunks (`chunks`) and once into owned ones (`split_text`); it
//! is written first when missing, BENCH_CORPUS_MB megabytes (default 50) of
//! paragraphs. Prints one JSON object (also written to BENCH_JSON).

mod common;

use common::{DIMS, HashEmbedder, hash_embed};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nodekit::document::Document;
use nodekit::text_splitter::{RecursiveCharacterTextSplitter, TextSplitter};
use nodekit::vector_store::pgvector::{PgVectorOptions, PgVectorStore};
use nodekit::vector_store::sqlite::SqliteVectorStore;
use nodekit::vector_store::{
    DocumentStore, Filter, InProcessVectorStore, Selection, VectorStore, VectorStoreOptions,
};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

const BATCH: usize = 1_000;
const K: usize = 4;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// p50 and p99; and, to see what a tail is made of, a histogram (counts
/// under 0.25, 0.5, 1, 2, 4, 8 ms and above) and the slowest calls with
/// their place in the order they ran (0 is the first).
fn stats(times: Vec<Duration>) -> Value {
    let mut v = times.clone();
    v.sort();
    let pct = |p: f64| {
        let i = ((p / 100.0) * v.len() as f64).ceil() as usize;
        round(v[i.clamp(1, v.len()) - 1].as_secs_f64() * 1000.0)
    };
    let bounds = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, f64::INFINITY];
    let mut histogram = vec![0usize; bounds.len()];
    for t in &times {
        let ms = t.as_secs_f64() * 1000.0;
        histogram[bounds
            .iter()
            .position(|b| ms < *b)
            .unwrap_or(bounds.len() - 1)] += 1;
    }
    let mut slowest: Vec<(usize, Duration)> = times.iter().copied().enumerate().collect();
    slowest.sort_by_key(|s| std::cmp::Reverse(s.1));
    let slowest: Vec<Value> = slowest
        .iter()
        .take(5)
        .map(|(i, t)| json!([i, round(t.as_secs_f64() * 1000.0)]))
        .collect();
    json!({ "p50_ms": pct(50.0), "p99_ms": pct(99.0),
            "histogram_ms": {"<0.25": histogram[0], "<0.5": histogram[1], "<1": histogram[2], "<2": histogram[3],
                             "<4": histogram[4], "<8": histogram[5], ">=8": histogram[6]},
            "slowest": slowest })
}

/// The texts' generator: xorshift32, as the agent-memory benchmark's.
struct Words {
    seed: u32,
}

impl Words {
    fn rand(&mut self) -> f64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 17;
        self.seed ^= self.seed << 5;
        f64::from(self.seed) / 4_294_967_296.0
    }
    fn sentence(&mut self) -> String {
        let n = 8 + (self.rand() * 24.0) as usize;
        (0..n)
            .map(|_| format!("w{}", (5000f64.powf(self.rand()) as usize).clamp(1, 5000)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The documents and the queries: from `dir`, written first when missing.
fn data(dir: &Path, n: usize, queries: usize) -> (Vec<String>, Vec<String>) {
    let meta = dir.join("meta.json");
    let fresh = std::fs::read_to_string(&meta)
        .ok()
        .and_then(|m| serde_json::from_str::<Value>(&m).ok())
        .is_some_and(|m| m["n"] == n && m["queries"] == queries)
        && dir.join("texts.json").exists()
        && dir.join("queries.json").exists();
    if !fresh {
        std::fs::create_dir_all(dir).unwrap();
        let mut words = Words { seed: 0x9e37_79b9 };
        let texts: Vec<String> = (0..n).map(|_| words.sentence()).collect();
        let qs: Vec<String> = (0..queries).map(|_| words.sentence()).collect();
        std::fs::write(
            dir.join("texts.json"),
            serde_json::to_string(&texts).unwrap(),
        )
        .unwrap();
        std::fs::write(
            dir.join("queries.json"),
            serde_json::to_string(&qs).unwrap(),
        )
        .unwrap();
        std::fs::write(
            &meta,
            json!({"n": n, "queries": queries, "dims": DIMS}).to_string(),
        )
        .unwrap();
    }
    let read = |name: &str| -> Vec<String> {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    (read("texts.json"), read("queries.json"))
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Each query's exact answer, by a scan of every vector.
struct Truth {
    /// The top `K`, best first (ties in the order of the documents).
    top: Vec<usize>,
    /// Every document scoring at least the `K`-th best: with ties at the
    /// edge, any `K` of them are a right answer.
    right: Vec<usize>,
}

/// The exact answers (the vectors are normalised).
fn exact(vectors: &[Vec<f32>], queries: &[Vec<f32>]) -> Vec<Truth> {
    queries
        .iter()
        .map(|q| {
            let mut scored: Vec<(f32, usize)> = vectors
                .iter()
                .enumerate()
                .map(|(i, v)| (dot(q, v), i))
                .collect();
            scored.select_nth_unstable_by(K - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let kth = scored[K - 1].0;
            let right = scored
                .iter()
                .filter(|(score, _)| *score >= kth - 1e-5)
                .map(|(_, i)| *i)
                .collect();
            scored.truncate(K);
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            Truth {
                top: scored.into_iter().map(|(_, i)| i).collect(),
                right,
            }
        })
        .collect()
}

async fn measure(
    store: Arc<dyn VectorStore>,
    texts: &[String],
    queries: &[String],
    truth: &[Truth],
    ready: impl AsyncFn() -> Duration,
) -> Value {
    let documents = Arc::new(DocumentStore::from_options(VectorStoreOptions {
        embedding_batch: BATCH,
        ..VectorStoreOptions::new(store, Arc::new(HashEmbedder))
    }));
    let docs: Vec<Document> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Document::new(t.clone()).with("i", i))
        .collect();
    let started = Instant::now();
    for batch in docs.chunks(BATCH) {
        documents.add_documents(batch).await.unwrap();
    }
    let insert = started.elapsed();
    let ready = ready().await;
    // Searches before the timed ones, the same on both sides: the first
    // few after a store is ready pay for cold connections and caches.
    for _ in 0..env("BENCH_WARMUP", 10) {
        documents.search("warm", K, &Filter::all()).await.unwrap();
    }
    let mut times = Vec::with_capacity(queries.len());
    let (mut same, mut right, mut total) = (0, 0, 0);
    for (q, expected) in queries.iter().zip(truth) {
        let t = Instant::now();
        let found = documents.search(q, K, &Filter::all()).await.unwrap();
        times.push(t.elapsed());
        let got: Vec<usize> = found
            .iter()
            .filter_map(|f| f.document.metadata["i"].as_u64().map(|i| i as usize))
            .collect();
        total += expected.top.len();
        same += expected.top.iter().filter(|e| got.contains(e)).count();
        right += got.iter().filter(|g| expected.right.contains(g)).count();
    }
    let searches = stats(times);
    let while_writing = search_while_writing(&documents, queries).await;
    json!({
        "insert": {"s": round(insert.as_secs_f64()), "docs_per_s": (texts.len() as f64 / insert.as_secs_f64()).round()},
        "ready_s": round(ready.as_secs_f64()),
        "search": searches,
        "search_while_writing": while_writing,
        "agreement_top4": round(same as f64 / total.max(1) as f64),
        "recall_top4": round(right as f64 / total.max(1) as f64),
    })
}

/// The searches timed again while a writer adds documents and deletes
/// half of each batch it adds.
async fn search_while_writing(documents: &Arc<DocumentStore>, queries: &[String]) -> Value {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = tokio::spawn({
        let (documents, stop) = (documents.clone(), stop.clone());
        let (batch, every) = (
            env("BENCH_WRITE_BATCH", 100),
            Duration::from_millis(env("BENCH_WRITE_EVERY_MS", 20) as u64),
        );
        async move {
            let mut words = Words { seed: 0x85eb_ca6b };
            let (mut added, mut deleted) = (0usize, 0usize);
            let mut tick = tokio::time::interval(every);
            let started = Instant::now();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                tick.tick().await;
                let docs: Vec<Document> = (0..batch)
                    .map(|_| Document::new(words.sentence()))
                    .collect();
                let mut ids = documents.add_documents(&docs).await.unwrap();
                added += ids.len();
                ids.truncate(ids.len() / 2);
                deleted += documents.delete(&Selection::Ids(ids)).await.unwrap() as usize;
            }
            let s = started.elapsed().as_secs_f64();
            json!({"added": added, "deleted": deleted, "docs_per_s": (added as f64 / s).round()})
        }
    });
    let mut times = Vec::new();
    let length = Duration::from_secs(env("BENCH_WRITE_S", 5) as u64);
    let started = Instant::now();
    for q in queries.iter().cycle() {
        let t = Instant::now();
        documents.search(q, K, &Filter::all()).await.unwrap();
        times.push(t.elapsed());
        if started.elapsed() >= length && times.len() >= queries.len() {
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut out = stats(times);
    out["writes"] = writer.await.unwrap();
    out
}

/// How long until `pending` says no more, polling.
async fn until(pending: impl Fn() -> bool) -> Duration {
    let t = Instant::now();
    while pending() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    t.elapsed()
}

/// A corpus of `mb` megabytes: paragraphs of 2 to 8 sentences, some lines
/// broken inside a paragraph.
fn write_corpus(path: &Path, mb: usize) {
    let mut words = Words { seed: 0x2545_f491 };
    let mut text = String::with_capacity(mb << 20);
    while text.len() < mb << 20 {
        let sentences = 2 + (words.rand() * 7.0) as usize;
        for s in 0..sentences {
            text.push_str(&words.sentence());
            text.push('.');
            text.push(if s + 1 < sentences && words.rand() < 0.2 {
                '\n'
            } else {
                ' '
            });
        }
        text.push_str("\n\n");
    }
    std::fs::write(path, text).unwrap();
}

/// The corpus split twice, each timed alone: `chunks` (borrowed from the
/// text, nothing copied; first, so it gets no warm memory) and then
/// `split_text` (each chunk copied into a `String` of its own). The two
/// must give the same chunks.
fn split(corpus: &Path) -> Value {
    if !corpus.exists() {
        write_corpus(corpus, env("BENCH_CORPUS_MB", 50));
    }
    let text = std::fs::read_to_string(corpus).unwrap();
    let splitter = RecursiveCharacterTextSplitter::new(1000, 200).unwrap();
    let started = Instant::now();
    let borrowed = splitter.chunks(&text);
    let borrowed_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let owned = splitter.split_text(&text);
    let owned_s = started.elapsed().as_secs_f64();
    assert_eq!(borrowed, owned, "the two forms disagree");
    let mut digest = Sha1::new();
    for c in &owned {
        digest.update(c.as_bytes());
        digest.update([0u8]);
    }
    let mb = text.len() as f64 / 1_048_576.0;
    json!({
        "bytes": text.len(),
        "s": round(borrowed_s),
        "mb_per_s": round(mb / borrowed_s),
        "owned_s": round(owned_s),
        "owned_mb_per_s": round(mb / owned_s),
        "chunks": owned.len(),
        "sha1": format!("{:x}", digest.finalize()),
    })
}

/// VmHWM in MiB.
fn peak_rss() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| round(kb / 1024.0))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(run());
    let text = serde_json::to_string_pretty(&out).unwrap();
    println!("{text}");
    if let Ok(file) = std::env::var("BENCH_JSON") {
        std::fs::write(file, &text).unwrap();
    }
}

/// PGVector on a table of its own (a fresh schema, dropped after).
async fn pgvector(
    url: &str,
    options: PgVectorOptions,
    texts: &[String],
    queries: &[String],
    truth: &[Truth],
) -> Value {
    let (admin, schema, connect) = common::pg_schema(url, "nodekit_vs_bench").await;
    let pool = nodekit::postgres::pool_options(nodekit::postgres::POOL_SIZE)
        .connect_with(PgVectorStore::session_options(connect))
        .await
        .unwrap();
    let store = Arc::new(
        PgVectorStore::open(
            &nodekit::postgres::Postgres::from_pool(pool.clone()),
            options,
        )
        .await
        .unwrap(),
    );
    let held = store.clone();
    let result = measure(store, texts, queries, truth, async || {
        let t = Instant::now();
        // The first search creates pgvector's index, or starts loading
        // the graph.
        held.search(&hash_embed("warm"), K, &Filter::all())
            .await
            .unwrap();
        until(|| held.indexing()).await;
        t.elapsed()
    })
    .await;
    pool.close().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&admin)
        .await
        .unwrap();
    result
}

async fn run() -> Value {
    let mut out = json!({"what": "nodekit vector stores, same documents, queries and feature-hashing embedder as the LangChain harness"});
    if let Ok(dir) = std::env::var("BENCH_DATA") {
        let n = env("BENCH_N", 10_000);
        let (texts, queries) = data(Path::new(&dir), n, env("BENCH_QUERIES", 300));
        let vectors: Vec<Vec<f32>> = texts.iter().map(|t| hash_embed(t)).collect();
        let truth = exact(
            &vectors,
            &queries.iter().map(|q| hash_embed(q)).collect::<Vec<_>>(),
        );
        drop(vectors);
        out["n"] = json!(texts.len());
        out["dims"] = json!(DIMS);
        let stores = std::env::var("BENCH_STORES")
            .unwrap_or_else(|_| "memory sqlite pgvector pgvector_graph".into());
        if stores.split_whitespace().any(|s| s == "memory") {
            let store = Arc::new(InProcessVectorStore::new());
            let held = store.clone();
            out["memory"] = measure(store, &texts, &queries, &truth, async || {
                until(|| held.indexing()).await
            })
            .await;
        }
        if stores.split_whitespace().any(|s| s == "sqlite") {
            let dir = std::env::temp_dir().join(format!("nodekit-bench-vs-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path: PathBuf = dir.join("vectors.db");
            let store = Arc::new(SqliteVectorStore::open(&path, "bench").await.unwrap());
            let held = store.clone();
            out["sqlite"] = measure(store, &texts, &queries, &truth, async || {
                let t = Instant::now();
                // A search starts the load of a collection not yet held.
                while !held.loaded() || held.indexing() {
                    let _ = held.search(&hash_embed("warm"), K, &Filter::all()).await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                t.elapsed()
            })
            .await;
            out["sqlite"]["db_file_mb"] = json!(round(
                ["", "-wal"]
                    .iter()
                    .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
                    .map(|m| m.len() as f64)
                    .sum::<f64>()
                    / 1_048_576.0
            ));
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Ok(url) = std::env::var("BENCH_DATABASE_URL")
            && !url.is_empty()
        {
            // pgvector's HNSW index; then the in-process graph (pgvector's
            // index off: it would only answer until the graph is loaded).
            let graph = PgVectorOptions {
                in_process_index: true,
                hnsw_index: false,
                ..PgVectorOptions::default()
            };
            for (name, options) in [
                ("pgvector", PgVectorOptions::default()),
                ("pgvector_graph", graph),
            ] {
                if stores.split_whitespace().any(|s| s == name) {
                    out[name] = pgvector(&url, options, &texts, &queries, &truth).await;
                }
            }
        }
    }
    if let Ok(corpus) = std::env::var("BENCH_CORPUS") {
        out["splitter"] = split(Path::new(&corpus));
    }
    out["peak_rss_mb"] = json!(peak_rss());
    out
}

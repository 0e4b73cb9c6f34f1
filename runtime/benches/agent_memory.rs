//! Agent memory at scale, on a SQLite file: the same messages and the same
//! deterministic 384-dimension embedder as the Mastra peer
//! (`../shared/peers/mastra-bench/bench.mjs`), so the two runs compare.
//!
//! With BENCH_N messages in one thread (default 100,000) plus a 50-message
//! thread of another user:
//! - load: the messages appended in batches of 1,000 and indexed in the
//!   background (embedding, sqlite-vec, the thread's graph);
//! - append: BENCH_APPENDS single-message appends (default 2,000), each
//!   embedded and indexed, timed until the index holds them all;
//! - context assembly p50/p99 (working memory + observations + recent 20 +
//!   top-5 recall with neighbours), recall alone and the recent window,
//!   over BENCH_ITERS distinct inputs (default 300);
//! - how many of the messages an exact search returns the graph's search
//!   returns too (BENCH_EXACT_QUERIES queries, default 20);
//! - resident memory (VmRSS / VmHWM).
//!
//! Prints one JSON object (also written to BENCH_JSON when set).
//! `BENCH_N=1000000 cargo bench -p nodekit --bench agent_memory`

use std::sync::Arc;
use std::time::{Duration, Instant};

use nodekit::agent_memory::context::{AssembleOptions, PartKind, assemble_with};
use nodekit::agent_memory::{MemoryConfig, Recaller, Store};
use nodekit::embed::Embedder;
use nodekit::message::Message;
use nodekit::model::BoxFuture;
use serde_json::json;
use sha1::{Digest, Sha1};

const DIMS: usize = 384;
const WORDS: &str = "invoice customer refund shipping delay postgres redis workflow node agent memory token window \
summary error retry webhook schedule cron email slack github issue deploy docker kubernetes backup \
password login oauth credential spreadsheet report chart budget travel hotel flight weather paris berlin \
tokyo coffee pizza recipe garden music guitar piano football tennis meeting calendar deadline project";

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The peer's xorshift32 and sentence generator, step for step.
struct Text {
    seed: u32,
    words: Vec<&'static str>,
}

impl Text {
    fn new() -> Text {
        Text {
            seed: 0x9e37_79b9,
            words: WORDS.split(' ').collect(),
        }
    }
    fn rand(&mut self) -> f64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 17;
        self.seed ^= self.seed << 5;
        f64::from(self.seed) / 4_294_967_296.0
    }
    fn sentence(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| {
                let i = (self.rand() * self.words.len() as f64) as usize;
                self.words[i]
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
    /// The peer's `makeMessage(i)`.
    fn message(&mut self, i: usize) -> Message {
        let n = 8 + (self.rand() * 24.0) as usize;
        if i.is_multiple_of(2) {
            Message::human(format!("Q{i}: {}", self.sentence(n)))
        } else {
            Message::ai(format!("A{i}: {}", self.sentence(n)))
        }
    }
}

/// The peer's feature-hashing embedder: every word adds ±1 to the dimension
/// a SHA-1 of the word picks; L2-normalised.
#[derive(Debug)]
struct HashEmbedder;

fn hash_embed(text: &str) -> Vec<f32> {
    let mut v = [0f64; DIMS];
    for w in text.to_lowercase().split_whitespace() {
        let h = Sha1::digest(w.as_bytes());
        let idx = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize % DIMS;
        v[idx] += if h[4] & 1 == 1 { 1.0 } else { -1.0 };
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let norm = if norm == 0.0 { 1.0 } else { norm };
    v.iter().map(|x| (x / norm) as f32).collect()
}

impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        "feature-hash-384"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
        Box::pin(async move { Ok(texts.iter().map(|t| hash_embed(t)).collect()) })
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1].as_secs_f64() * 1000.0
}

fn stats(mut v: Vec<Duration>) -> serde_json::Value {
    v.sort();
    json!({ "p50_ms": round(pct(&v, 50.0)), "p99_ms": round(pct(&v, 99.0)) })
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// VmRSS and VmHWM in MiB.
fn rss() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| round(kb / 1024.0))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn wait_indexed(store: &Store, recaller: &Recaller, thread: &str, total: usize) {
    recaller.flush().await.unwrap();
    while !store
        .unindexed("user-1", thread, 1)
        .await
        .unwrap()
        .is_empty()
    {
        recaller.flush().await.unwrap();
    }
    // The graph (built in the background once the thread passed the exact limit).
    if total as i64 > nodekit::agent_memory::recall::EXACT_LIMIT {
        let deadline = Instant::now() + Duration::from_secs(3600);
        while store.loaded_graphs().1 < total {
            assert!(Instant::now() < deadline, "the graph was never built");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn run() {
    let n = env("BENCH_N", 100_000);
    let appends = env("BENCH_APPENDS", 2_000);
    let iters = env("BENCH_ITERS", 300);
    let dir = std::env::temp_dir().join(format!("nodekit-bench-agent-memory-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("instance-ai-memory.db");
    let store = Store::open_sqlite(&path).await.unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder);
    let recaller = Recaller::spawn(store.clone(), embedder.clone());
    let thread = "thread-bench";
    let mut text = Text::new();

    // Another user's thread first, as the peer does (same random stream).
    let other: Vec<Message> = (0..50).map(|i| text.message(i)).collect();
    recaller
        .append("user-2", "thread-other", &other)
        .await
        .unwrap();

    eprintln!("loading {n} messages");
    let started = Instant::now();
    let mut i = 0;
    while i < n {
        let batch: Vec<Message> = (i..(i + 1000).min(n)).map(|j| text.message(j)).collect();
        i += batch.len();
        recaller.append("user-1", thread, &batch).await.unwrap();
    }
    let appended = started.elapsed();
    wait_indexed(&store, &recaller, thread, n).await;
    let loaded = started.elapsed();
    eprintln!("loaded in {loaded:?}");

    // Single-message appends, each embedded and indexed (graph included).
    let started = Instant::now();
    for j in n..n + appends {
        recaller
            .append("user-1", thread, &[text.message(j)])
            .await
            .unwrap();
    }
    let appends_returned = started.elapsed();
    wait_indexed(&store, &recaller, thread, n + appends).await;
    let appends_indexed = started.elapsed();

    // Working memory and an observation block, as a long-running agent has.
    store
        .set_working_memory(
            "user-1",
            "# User Information\n- **Name**: Ada\n- **Location**: Berlin\n- **Preferences**: short answers, metric units\n",
            None,
        )
        .await
        .unwrap();
    for k in 0..20 {
        let content = format!(
            "* 🔴 (09:{k:02}) User asked about {} and {}; the agent answered with {}.",
            text.sentence(6),
            text.sentence(4),
            text.sentence(8)
        );
        let first = (k * 50 + 1) as i64;
        store
            .add_observation("user-1", thread, 0, &content, first, first + 49)
            .await
            .unwrap();
    }

    let config = MemoryConfig::default()
        .embedder_model("feature-hash-384")
        .semantic_recall_top_k(5)
        .unwrap();
    let options = AssembleOptions {
        embedder: Some(&*embedder),
        recall_timeout: Some(Duration::from_secs(30)),
    };
    let mut assembly = Vec::with_capacity(iters);
    let mut recalled = 0;
    let mut shape = json!(null);
    for q in 0..iters {
        let input = format!("question {q}: {}", text.sentence(10));
        let t = Instant::now();
        let ctx = assemble_with(&store, &config, "user-1", thread, Some(&input), options)
            .await
            .unwrap();
        assembly.push(t.elapsed());
        let part = |kind| ctx.parts.iter().find(|p| p.kind == kind);
        recalled = part(PartKind::Recalled).map_or(0, |p| p.messages.len());
        shape = json!({
            "parts": ctx.parts.iter().map(|p| json!([p.kind, p.messages.len(), p.tokens])).collect::<Vec<_>>(),
            "total_tokens": ctx.total_tokens,
        });
    }
    let mut recall = Vec::with_capacity(iters);
    let recent: Vec<i64> = store
        .recent("user-1", thread, 20)
        .await
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    for q in 0..iters {
        let input = format!("recall {q}: {}", text.sentence(10));
        let t = Instant::now();
        store
            .recall_text("user-1", thread, &input, &*embedder, 5, &recent)
            .await
            .unwrap();
        recall.push(t.elapsed());
    }
    // How much of the exact search's answer the graph finds (the same
    // queries, the thread scanned exactly).
    let exact = store.clone().with_exact_limit(i64::MAX);
    let (mut found, mut expected) = (0, 0);
    for q in 0..env("BENCH_EXACT_QUERIES", 20) {
        let input = format!("exact {q}: {}", text.sentence(10));
        let v = hash_embed(&input);
        let by_graph = store.recall("user-1", thread, &v, 5, &[]).await.unwrap();
        let by_scan = exact.recall("user-1", thread, &v, 5, &[]).await.unwrap();
        let graph_seqs: std::collections::HashSet<i64> = by_graph.iter().map(|m| m.seq).collect();
        expected += by_scan.len();
        found += by_scan
            .iter()
            .filter(|m| graph_seqs.contains(&m.seq))
            .count();
    }
    let mut window = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let got = store.recent("user-1", thread, 20).await.unwrap();
        window.push(t.elapsed());
        assert_eq!(got.len(), 20);
    }
    let (rss_mb, peak_mb) = rss();
    let (graphs, graph_vectors) = store.loaded_graphs();
    let db_bytes: u64 = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
        .map(|m| m.len())
        .sum();
    let result = json!({
        "what": "nodekit agent memory on one SQLite file, same messages and 384-dim hash embedder as the Mastra peer",
        "n": n,
        "load": {
            "append_batches_s": round(appended.as_secs_f64()),
            "indexed_s": round(loaded.as_secs_f64()),
            "msgs_per_s": (n as f64 / loaded.as_secs_f64()).round(),
        },
        "append_single_with_embedding": {
            "count": appends,
            "returned_ms_per_message": round(appends_returned.as_secs_f64() * 1000.0 / appends as f64),
            "indexed_s": round(appends_indexed.as_secs_f64()),
            "msgs_per_s": (appends as f64 / appends_indexed.as_secs_f64()).round(),
        },
        "context_assembly": stats(assembly),
        "context_shape": shape,
        "recalled_messages": recalled,
        "recall_top5": stats(recall),
        "recall_agreement_with_exact": round(found as f64 / expected.max(1) as f64),
        "recent_window_20": stats(window),
        "rss_mb": rss_mb,
        "peak_rss_mb": peak_mb,
        "graphs": { "loaded": graphs, "vectors": graph_vectors },
        "db_file_mb": round(db_bytes as f64 / 1_048_576.0),
    });
    let out = serde_json::to_string_pretty(&result).unwrap();
    println!("{out}");
    if let Ok(file) = std::env::var("BENCH_JSON") {
        std::fs::write(file, &out).unwrap();
    }
    drop(recaller);
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

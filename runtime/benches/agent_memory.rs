//! Agent memory at scale: the same messages and the same deterministic
//! 384-dimension embedder as the Mastra harness
//! (`benches/agent-memory/mastra/bench.mjs`), the same steps, so the two
//! runs compare. `benches/agent-memory/run.sh` runs both.
//!
//! With BENCH_N messages in one thread (default 10,000) plus a 50-message
//! thread of another user:
//! - load: the messages appended in batches of 1,000 and indexed in the
//!   background, until every vector is held in memory;
//! - append with embedding: BENCH_APPENDS (default 1,000) single-message
//!   `Recaller::append` calls, timed until the last one is embedded,
//!   written and held in memory;
//! - storage-only append: BENCH_APPENDS single-message `Store::append`
//!   calls into another thread (no embedding), each call timed: in the
//!   store under test and, on SQLite, in a second file opened with
//!   `Durability::ProcessCrash` (`synchronous = NORMAL`, as Mastra's);
//! - recall, as Mastra's `recall` with a search string
//!   (`Recall::recent_and_recalled`): the 20 newest messages, and the input
//!   embedded, the top 5 outside those 20 with 2 messages before and 1
//!   after each; over BENCH_ITERS (default 300) distinct inputs;
//! - context assembly (working memory, 20 observations, the recent 20 and
//!   recall, with token counts) and the recent window alone;
//! - agreement with exact search: a second thread of BENCH_N messages
//!   whose texts come from a 5,000-word vocabulary and a dense embedder
//!   (each word a fixed pseudo-random Gaussian vector, a text the
//!   normalised sum), so near neighbours are not ties; the share of the
//!   exact top 5 the store's search returns, over BENCH_EXACT_QUERIES
//!   (default 50) queries (BENCH_AGREEMENT=0 skips it);
//! - resident memory (VmRSS and VmHWM) and what the recall cache holds.
//!
//! BENCH_THREADS=T (with BENCH_N per thread) measures a server with many
//! users instead: T threads of BENCH_N messages in one process, then
//! recall in threads picked at random, resident memory and the cache.
//!
//! BENCH_DATABASE_URL=postgres://... runs on PostgreSQL (a fresh schema,
//! dropped afterwards) instead of a SQLite file.
//!
//! Prints one JSON object (also written to BENCH_JSON when set).

mod common;

use common::{DIMS, HashEmbedder, hash_embed};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nodekit::__bench::recall::{held, nearest, nearest_exact};
use nodekit::agent_memory::context::{AssembleOptions, PartKind, assemble_with};
use nodekit::agent_memory::{Durability, MemoryConfig, Recall, Recaller, Store};
use nodekit::embed::Embedder;
use nodekit::message::Message;
use nodekit::model::BoxFuture;
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

const WORDS: &str = "invoice customer refund shipping delay postgres redis workflow node agent memory token window \
summary error retry webhook schedule cron email slack github issue deploy docker kubernetes backup \
password login oauth credential spreadsheet report chart budget travel hotel flight weather paris berlin \
tokyo coffee pizza recipe garden music guitar piano football tennis meeting calendar deadline project";
const USER: &str = "user-1";
const THREAD: &str = "thread-bench";

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
    /// 8-31 words of a 5,000-word vocabulary, word `w` drawn with
    /// probability falling as `1 / w` (common words common, most rare).
    fn wide_sentence(&mut self) -> String {
        let n = 8 + (self.rand() * 24.0) as usize;
        (0..n)
            .map(|_| {
                let w = (5000f64.powf(self.rand()) as usize).clamp(1, 5000);
                format!("w{w}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// A dense embedder: each word a fixed pseudo-random Gaussian vector
/// (seeded by the word's SHA-1), a text the normalised sum of its words'.
#[derive(Debug, Default)]
struct DenseEmbedder {
    words: Mutex<HashMap<String, Arc<Vec<f32>>>>,
}

impl DenseEmbedder {
    fn word(&self, w: &str) -> Arc<Vec<f32>> {
        let mut words = self.words.lock().unwrap();
        words
            .entry(w.to_owned())
            .or_insert_with(|| {
                let h = Sha1::digest(w.as_bytes());
                let mut s = u64::from_be_bytes(h[..8].try_into().unwrap()) | 1;
                let mut uniform = || {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
                };
                Arc::new(
                    (0..DIMS)
                        .map(|_| {
                            let (a, b) = (uniform(), uniform());
                            ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()) as f32
                        })
                        .collect(),
                )
            })
            .clone()
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; DIMS];
        for w in text.split_whitespace() {
            for (x, y) in v.iter_mut().zip(self.word(w).iter()) {
                *x += y;
            }
        }
        normalised(v)
    }
}

impl Embedder for DenseEmbedder {
    fn name(&self) -> &str {
        "dense-384"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
        Box::pin(async move { Ok(texts.iter().map(|t| self.embed_one(t)).collect()) })
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1].as_secs_f64() * 1000.0
}

fn stats(mut v: Vec<Duration>) -> Value {
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

fn cache(recall: &Recall) -> Value {
    let c = recall.cache_stats();
    json!({
        "threads": c.threads,
        "exact_vectors": c.exact_vectors,
        "graph_vectors": c.graph_vectors,
        "mb": round(c.bytes as f64 / 1_048_576.0),
        "budget_mb": round(c.budget as f64 / 1_048_576.0),
    })
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

/// The store under test and how to clean up after it.
struct Db {
    store: Store,
    file: Option<std::path::PathBuf>,
    pg: Option<(sqlx::PgPool, String)>,
}

async fn open(n: usize) -> Db {
    if let Ok(url) = std::env::var("BENCH_DATABASE_URL") {
        let (admin, schema, options) = common::pg_schema(&url, "nodekit_bench").await;
        let store = Store::postgres(&nodekit::postgres::Postgres::from_options(options))
            .await
            .unwrap();
        return Db {
            store,
            file: None,
            pg: Some((admin, schema)),
        };
    }
    let dir = std::env::temp_dir().join(format!("nodekit-bench-agent-memory-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("instance-ai-memory.db");
    let store = Store::open_sqlite(&path).await.unwrap();
    Db {
        store,
        file: Some(path),
        pg: None,
    }
}

impl Db {
    fn bytes(&self) -> Option<u64> {
        let path = self.file.as_ref()?;
        Some(
            ["", "-wal"]
                .iter()
                .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
                .map(|m| m.len())
                .sum(),
        )
    }

    async fn close(self) {
        self.store.close().await;
        if let Some((admin, schema)) = self.pg {
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE"
            )))
            .execute(&admin)
            .await
            .unwrap();
        }
        if let Some(dir) = self.file.as_ref().and_then(|p| p.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Until every message of the thread is embedded and held in memory.
async fn wait_indexed(store: &Store, recaller: &Recaller, thread: &str) {
    let recall = Recall::new(store.db());
    recaller.flush().await.unwrap();
    while !recall.unindexed(USER, thread, 1).await.unwrap().is_empty() {
        recaller.flush().await.unwrap();
    }
    let total = store.thread(USER, thread).await.unwrap().unwrap().last_seq as usize;
    let deadline = Instant::now() + Duration::from_secs(3600);
    loop {
        if held(&recall, thread) == Some(total) {
            return;
        }
        // A search loads a thread that is not held.
        let _ = nearest(&recall, USER, thread, &hash_embed("load"), 1).await;
        assert!(Instant::now() < deadline, "the thread was never loaded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn load(
    store: &Store,
    recaller: &Recaller,
    thread: &str,
    n: usize,
    mut next: impl FnMut(usize) -> Message,
) {
    let mut i = 0;
    while i < n {
        let batch: Vec<Message> = (i..(i + 1000).min(n)).map(&mut next).collect();
        i += batch.len();
        store.append(USER, thread, &batch).await.unwrap();
        recaller.notify(USER, thread);
    }
}

async fn run() {
    let n = env("BENCH_N", 10_000);
    let threads = env("BENCH_THREADS", 1);
    let db = open(n).await;
    let result = if threads > 1 {
        many_threads(&db, n, threads).await
    } else {
        one_thread(&db, n).await
    };
    let out = serde_json::to_string_pretty(&result).unwrap();
    println!("{out}");
    if let Ok(file) = std::env::var("BENCH_JSON") {
        std::fs::write(file, &out).unwrap();
    }
    db.close().await;
}

async fn one_thread(db: &Db, n: usize) -> Value {
    let appends = env("BENCH_APPENDS", 1_000);
    let iters = env("BENCH_ITERS", 300);
    let store = &db.store;
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder);
    let recaller = Recaller::spawn(Recall::new(store.db()), embedder.clone());
    let mut text = Text::new();

    // Another user's thread first, as the peer does (same random stream).
    let other: Vec<Message> = (0..50).map(|i| text.message(i)).collect();
    store
        .append("user-2", "thread-other", &other)
        .await
        .unwrap();
    recaller.notify("user-2", "thread-other");

    eprintln!("loading {n} messages");
    let started = Instant::now();
    load(store, &recaller, THREAD, n, |j| text.message(j)).await;
    let appended = started.elapsed();
    wait_indexed(store, &recaller, THREAD).await;
    let loaded = started.elapsed();
    eprintln!("loaded in {loaded:?}");

    // Single-message appends, each embedded, written and held.
    let mut returned = Vec::with_capacity(appends);
    let started = Instant::now();
    for j in n..n + appends {
        let t = Instant::now();
        store
            .append(USER, THREAD, &[text.message(j)])
            .await
            .unwrap();
        recaller.notify(USER, THREAD);
        returned.push(t.elapsed());
    }
    wait_indexed(store, &recaller, THREAD).await;
    let appends_indexed = started.elapsed();

    // Storage only: the message written and committed, nothing else.
    let mut storage_only = json!({ "count": appends });
    let lighter = match db.file.as_ref() {
        Some(path) => Some(
            Store::open_sqlite_with(path.with_extension("normal.db"), Durability::ProcessCrash)
                .await
                .unwrap(),
        ),
        None => None,
    };
    let durabilities = [("store", Some(store)), ("process_crash", lighter.as_ref())];
    for (name, s) in durabilities {
        let Some(s) = s else { continue };
        let mut calls = Vec::with_capacity(appends);
        let started = Instant::now();
        for j in 0..appends {
            let m = text.message(j);
            let t = Instant::now();
            s.append(USER, "thread-storage-only", &[m]).await.unwrap();
            calls.push(t.elapsed());
        }
        let mut figures = stats(calls);
        figures["msgs_per_s"] = json!((appends as f64 / started.elapsed().as_secs_f64()).round());
        storage_only[name] = figures;
    }
    if let Some(s) = lighter {
        s.close().await;
    }

    // Working memory and an observation block, as a long-running agent has.
    store
        .set_working_memory(
            USER,
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
            .add_observation(USER, THREAD, 0, &content, first, first + 49)
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
    let mut shape = json!(null);
    for q in 0..iters {
        let input = format!("question {q}: {}", text.sentence(10));
        let t = Instant::now();
        let ctx = assemble_with(store, &config, USER, THREAD, Some(&input), options)
            .await
            .unwrap();
        assembly.push(t.elapsed());
        shape = json!({
            "parts": ctx.parts.iter().map(|p| json!([p.kind, p.messages.len(), p.tokens])).collect::<Vec<_>>(),
            "recalled": ctx.parts.iter().find(|p| p.kind == PartKind::Recalled).map_or(0, |p| p.messages.len()),
            "total_tokens": ctx.total_tokens,
        });
    }
    // Recall as Mastra's: the recent window, then the search around it.
    let mut recall = Vec::with_capacity(iters);
    let mut recalled = 0;
    for q in 0..iters {
        let input = format!("recall {q}: {}", text.sentence(10));
        let t = Instant::now();
        let (recent, found) = Recall::new(store.db())
            .recent_and_recalled(USER, THREAD, &input, &*embedder, 20, 5)
            .await
            .unwrap();
        recall.push(t.elapsed());
        recalled = recent.len() + found.len();
    }
    let mut window = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let got = store.recent(USER, THREAD, 20).await.unwrap();
        window.push(t.elapsed());
        assert_eq!(got.len(), 20);
    }
    let held = cache(&Recall::new(store.db()));
    let (rss_mb, peak_mb) = rss();
    let agreement = if env("BENCH_AGREEMENT", 1) == 1 {
        agreement(store, n).await
    } else {
        json!(null)
    };
    drop(recaller);
    json!({
        "what": "nodekit agent memory, same messages and 384-dim hash embedder as the Mastra harness",
        "database": if db.pg.is_some() { "postgres" } else { "sqlite" },
        "n": n,
        "load": {
            "append_batches_s": round(appended.as_secs_f64()),
            "indexed_s": round(loaded.as_secs_f64()),
            "msgs_per_s": (n as f64 / loaded.as_secs_f64()).round(),
        },
        "append_with_embedding": {
            "count": appends,
            "returned": stats(returned),
            "indexed_s": round(appends_indexed.as_secs_f64()),
            "msgs_per_s": (appends as f64 / appends_indexed.as_secs_f64()).round(),
        },
        "append_storage_only": storage_only,
        "recall": stats(recall),
        "recall_messages": recalled,
        "context_assembly": stats(assembly),
        "context_shape": shape,
        "recent_window_20": stats(window),
        "agreement_with_exact": agreement,
        "rss_mb": rss_mb,
        "peak_rss_mb": peak_mb,
        "recall_cache": held,
        "db_file_mb": db.bytes().map(|b| round(b as f64 / 1_048_576.0)),
    })
}

/// A second thread of `n` messages with wide-vocabulary texts and the
/// dense embedder; the share of the exact top 5 the store's search finds.
async fn agreement(store: &Store, n: usize) -> Value {
    let recall = Recall::new(store.db());
    let dense = Arc::new(DenseEmbedder::default());
    let recaller = Recaller::spawn(Recall::new(store.db()), dense.clone());
    let mut text = Text::new();
    let thread = "thread-dense";
    eprintln!("loading {n} wide-vocabulary messages");
    load(store, &recaller, thread, n, |_| {
        Message::human(text.wide_sentence())
    })
    .await;
    wait_indexed(store, &recaller, thread).await;
    let queries = env("BENCH_EXACT_QUERIES", 50);
    let (mut found, mut expected) = (0, 0);
    let mut search = Vec::with_capacity(queries);
    for _ in 0..queries {
        let v = dense.embed_one(&text.wide_sentence());
        let t = Instant::now();
        let by_store = nearest(&recall, USER, thread, &v, 5).await.unwrap();
        search.push(t.elapsed());
        let by_scan = nearest_exact(&recall, USER, thread, &v, 5).await.unwrap();
        expected += by_scan.len();
        found += by_scan.iter().filter(|s| by_store.contains(s)).count();
    }
    drop(recaller);
    json!({
        "embedder": "dense-384 over a 5,000-word vocabulary",
        "queries": queries,
        "top5_share": round(found as f64 / expected.max(1) as f64),
        "search": stats(search),
        "answered_by": if n as i64 > recall.exact_limit() { "graph" } else { "exact scan" },
    })
}

/// `threads` threads of `n` messages, then recall in threads picked at random.
async fn many_threads(db: &Db, n: usize, threads: usize) -> Value {
    let iters = env("BENCH_ITERS", 1000);
    let store = &db.store;
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder);
    let recaller = Recaller::spawn(Recall::new(store.db()), embedder.clone());
    let mut text = Text::new();
    eprintln!("loading {threads} threads of {n} messages");
    let started = Instant::now();
    for t in 0..threads {
        load(store, &recaller, &format!("thread-{t}"), n, |j| {
            text.message(j)
        })
        .await;
        if t % 100 == 99 {
            recaller.flush().await.unwrap();
        }
    }
    recaller.flush().await.unwrap();
    let loaded = started.elapsed();
    let mut recall = Vec::with_capacity(iters);
    for q in 0..iters {
        let thread = format!("thread-{}", (text.rand() * threads as f64) as usize);
        let input = format!("recall {q}: {}", text.sentence(10));
        let t = Instant::now();
        Recall::new(store.db())
            .recent_and_recalled(USER, &thread, &input, &*embedder, 20, 5)
            .await
            .unwrap();
        recall.push(t.elapsed());
    }
    let (rss_mb, peak_mb) = rss();
    drop(recaller);
    json!({
        "what": "many threads in one process",
        "database": if db.pg.is_some() { "postgres" } else { "sqlite" },
        "threads": threads,
        "messages_per_thread": n,
        "load_s": round(loaded.as_secs_f64()),
        "recall_random_thread": stats(recall),
        "rss_mb": rss_mb,
        "peak_rss_mb": peak_mb,
        "recall_cache": cache(&Recall::new(store.db())),
        "db_file_mb": db.bytes().map(|b| round(b as f64 / 1_048_576.0)),
    })
}

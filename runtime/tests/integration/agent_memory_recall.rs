//! Semantic recall (tier 5) on SQLite (sqlite-vec), PostgreSQL with pgvector
//! and PostgreSQL without it (the fallback), with a
//! deterministic embedder served over real HTTP on 127.0.0.1 in the OpenAI
//! embeddings protocol and called through `OpenAiEmbedder`.
//!
//! PostgreSQL tests need `DATABASE_URL` and `PGVECTOR_DATABASE_URL`
//! (`scripts/services.sh`): outside CI
//! a missing server skips them with a reason; under `CI=true` it fails them.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::stores::Pg;
use nodekit::agent_memory::{
    AssembleOptions, IndexKind, MemoryConfig, PartKind, Recall, Recaller, Store, StoredMessage,
    assemble_with,
};
use nodekit::embed::{Embedder, EmbeddingsConfig, OpenAiEmbedder};
use nodekit::message::Message;
use nodekit_test_support::embeddings::bag_of_words;
use serde_json::json;

async fn sqlite() -> Store {
    crate::stores::sqlite("recall").await
}

/// How the store's vectors are indexed, once it has some.
async fn index_kind(store: &Store) -> IndexKind {
    Recall::new(store.db())
        .recall_index()
        .await
        .unwrap()
        .expect("vectors were written")
        .kind
}

/// Runs `$body(&store)` on SQLite, on PostgreSQL without pgvector (its
/// fallback) and on PostgreSQL with pgvector.
macro_rules! on_every_backend {
    ($body:ident: $sqlite:ident, $postgres:ident, $pgvector:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            $body(&sqlite().await).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            let Some(pg) = Pg::new().await else { return };
            $body(&pg.store).await;
            pg.drop().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $pgvector() {
            let Some(pg) = Pg::pgvector().await else {
                return;
            };
            $body(&pg.store).await;
            pg.drop().await;
        }
    };
}

on_every_backend!(
    recalled_tool_pairs: sqlite_recalled_tool_pairs,
    postgres_recalled_tool_pairs,
    pgvector_recalled_tool_pairs
);
on_every_backend!(
    slow_embedder: sqlite_slow_embedder,
    postgres_slow_embedder,
    pgvector_slow_embedder
);
on_every_backend!(
    resident_exact_search: sqlite_resident_exact_search,
    postgres_resident_exact_search,
    pgvector_resident_exact_search
);
on_every_backend!(
    failing_then_recovery: sqlite_failing_embedder_then_recovery,
    postgres_failing_embedder_then_recovery,
    pgvector_failing_embedder_then_recovery
);

/// The embeddings server of the tests, and what it embeds with.
struct EmbedServer(nodekit_test_support::embeddings::EmbedServer);

impl EmbedServer {
    async fn start(dims: usize) -> EmbedServer {
        EmbedServer(nodekit_test_support::embeddings::EmbedServer::start(dims).await)
    }

    fn embedder(&self) -> Arc<dyn Embedder> {
        self.embedder_with_timeout(5.0)
    }

    fn embedder_with_timeout(&self, timeout_secs: f64) -> Arc<dyn Embedder> {
        let mut c = EmbeddingsConfig::new("sk-test", "bow");
        c.base_url = self.0.base_url.clone();
        c.max_retries = 0;
        c.timeout_secs = timeout_secs;
        Arc::new(OpenAiEmbedder::new(c).unwrap())
    }
}

impl std::ops::Deref for EmbedServer {
    type Target = nodekit_test_support::embeddings::EmbedServer;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// 30 messages, human and AI in turn; "zebra stripes" at seqs 10, 22 and 27.
fn conversation() -> Vec<Message> {
    (1..=30)
        .map(|seq| {
            let text = if [10, 22, 27].contains(&seq) {
                format!("zebra stripes {seq}")
            } else {
                format!("filler line {seq} about the weather")
            };
            if seq % 2 == 1 {
                Message::human(text)
            } else {
                Message::ai(text)
            }
        })
        .collect()
}

/// Recall on, with a recent window of 8.
fn recall_config() -> MemoryConfig {
    MemoryConfig::default()
        .embedder_model("bow")
        .last_messages(8)
        .unwrap()
}

fn seqs(found: &[StoredMessage]) -> Vec<i64> {
    found.iter().map(|m| m.seq).collect()
}

/// Neighbours with context, dedup against the recent window, isolation,
/// dimension mismatch.
async fn neighbours_isolation_dims(store: &Store) {
    let recall = Recall::new(store.db());
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    store.append("r", "t1", &conversation()).await.unwrap();
    // Another thread of r and a thread of another resource, same words.
    store.append("r", "t2", &conversation()).await.unwrap();
    store.append("other", "t3", &conversation()).await.unwrap();
    for (r, t) in [("r", "t1"), ("r", "t2"), ("other", "t3")] {
        assert_eq!(recall.index_pending(r, t, &*embedder).await.unwrap(), 30);
        assert!(recall.unindexed(r, t, 100).await.unwrap().is_empty());
    }
    // Already indexed: nothing more.
    assert_eq!(
        recall.index_pending("r", "t1", &*embedder).await.unwrap(),
        0
    );
    let index = recall.recall_index().await.unwrap().unwrap();
    assert_eq!(index.dims, 384);

    // Recent window = seqs 23..=30 (holds the match at 27).
    let recent: Vec<i64> = (23..=30).collect();
    let found = recall
        .search_text("r", "t1", "zebra stripes", &*embedder, 2, &recent)
        .await
        .unwrap();
    // Matches 22 and 10 (27 is recent): 2 before and 1 after each, minus 23.
    assert_eq!(seqs(&found), vec![8, 9, 10, 11, 20, 21, 22]);
    assert!(found.iter().all(|m| m.thread_id == "t1"));
    assert_eq!(found[2].message.text(), "zebra stripes 10");
    // Overlapping ranges are merged without duplicates.
    let close = recall
        .search("r", "t1", &bag_of_words("zebra stripes", 384), 3, &[])
        .await
        .unwrap();
    assert_eq!(
        seqs(&close),
        vec![8, 9, 10, 11, 20, 21, 22, 23, 25, 26, 27, 28]
    );

    // Isolation: another resource's thread recalls nothing, as an unknown
    // thread does, and the search claims neither.
    for thread in ["t1", "never-written"] {
        let found = recall
            .search_text("other", thread, "zebra", &*embedder, 5, &[])
            .await
            .unwrap();
        assert!(found.is_empty(), "{thread}");
        assert_eq!(store.thread("other", thread).await.unwrap(), None);
    }
    let theirs = store.threads("other").await.unwrap();
    assert!(theirs.iter().all(|t| t.id == "t3"), "{theirs:?}");
    let theirs = recall
        .search_text("other", "t3", "zebra stripes", &*embedder, 5, &[])
        .await
        .unwrap();
    assert!(theirs.iter().all(|m| m.thread_id == "t3"));
    // A thread with no vectors recalls nothing, even with the same words elsewhere.
    store
        .append("r", "empty", &[Message::human("nothing here")])
        .await
        .unwrap();
    let none = recall
        .search_text("r", "empty", "zebra stripes", &*embedder, 5, &[])
        .await
        .unwrap();
    assert!(none.is_empty());

    // Context assembly fills the Recalled part between observations and recent.
    let config = recall_config();
    let options = AssembleOptions {
        embedder: Some(&*embedder),
        recall_timeout: None,
    };
    let ctx = assemble_with(store, &config, "r", "t1", Some("zebra stripes"), options)
        .await
        .unwrap();
    let kinds: Vec<PartKind> = ctx.parts.iter().map(|p| p.kind).collect();
    let at = kinds.iter().position(|k| *k == PartKind::Recalled).unwrap();
    assert_eq!(kinds[at + 1], PartKind::Recent);
    let recalled = &ctx.parts[at];
    assert!(recalled.tokens > 0);
    let texts: Vec<String> = recalled.messages.iter().map(Message::text).collect();
    assert!(texts.contains(&"zebra stripes 10".to_owned()), "{texts:?}");
    assert!(texts.contains(&"zebra stripes 22".to_owned()), "{texts:?}");
    assert!(!texts.contains(&"zebra stripes 27".to_owned()), "{texts:?}");
    // Without an embedder model recall is off.
    let off = assemble_with(
        store,
        &MemoryConfig::default().last_messages(8).unwrap(),
        "r",
        "t1",
        Some("zebra stripes"),
        options,
    )
    .await
    .unwrap();
    assert!(off.parts.iter().all(|p| p.kind != PartKind::Recalled));

    // Another dimension is a clear error, on write and on query.
    let small = EmbedServer::start(128).await;
    store
        .append("r", "t4", &[Message::human("zebra")])
        .await
        .unwrap();
    let e = recall
        .index_pending("r", "t4", &*small.embedder())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("384") && e.contains("128"), "{e}");
    let e = recall
        .search("r", "t1", &[0.5; 128], 3, &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("384") && e.contains("128"), "{e}");
}

/// A failing embedder: appends and context assembly keep working, nothing is
/// lost, and the background indexer catches up once the embedder is back.
async fn failing_then_recovery(store: &Store) {
    let recall = Recall::new(store.db());
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    http.fail.store(true, Ordering::SeqCst);
    let recaller = Recaller::spawn(recall.clone(), embedder.clone());
    let stored = store.append("r", "t", &conversation()).await.unwrap();
    recaller.notify("r", "t");
    assert_eq!(stored.len(), 30);
    assert!(recaller.flush().await.is_err());
    assert_eq!(recall.unindexed("r", "t", 100).await.unwrap().len(), 30);
    let config = recall_config();
    let options = AssembleOptions {
        embedder: Some(&*embedder),
        recall_timeout: None,
    };
    let ctx = assemble_with(store, &config, "r", "t", Some("zebra stripes"), options)
        .await
        .unwrap();
    assert!(ctx.parts.iter().any(|p| p.kind == PartKind::Recent));
    assert!(ctx.parts.iter().all(|p| p.kind != PartKind::Recalled));

    http.fail.store(false, Ordering::SeqCst);
    assert_eq!(recaller.flush().await.unwrap(), 30);
    assert!(recall.unindexed("r", "t", 100).await.unwrap().is_empty());
    // More messages are picked up in the background, without a flush.
    store
        .append("r", "t", &[Message::human("okapi spotted")])
        .await
        .unwrap();
    recaller.notify("r", "t");
    let mut waited = 0;
    while !recall.unindexed("r", "t", 10).await.unwrap().is_empty() {
        assert!(waited < 100, "the background indexer never caught up");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        waited += 1;
    }
    let ctx = assemble_with(store, &config, "r", "t", Some("zebra stripes"), options)
        .await
        .unwrap();
    assert!(ctx.parts.iter().any(|p| p.kind == PartKind::Recalled));
    // A new Recaller catches up on what a previous process left.
    store
        .append("r", "t", &[Message::human("left behind")])
        .await
        .unwrap();
    let again = Recaller::spawn(recall.clone(), embedder);
    again.catch_up();
    again.flush().await.unwrap();
    assert!(recall.unindexed("r", "t", 10).await.unwrap().is_empty());
}

/// Threads held in memory, and the vectors of their graphs.
fn graphs(recall: &Recall) -> (usize, usize) {
    let held = recall.cache_stats();
    (held.threads, held.graph_vectors)
}

/// Long threads go through the in-memory graph: built in the background,
/// caught up with this store's writes and with another store's on the same
/// database (another process), in agreement with the exact search, and
/// dropped with its thread.
async fn graph_search(store: &Store, other: &Store) {
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    let recall = Recall::new(store.db()).with_exact_limit(50);
    let other_recall = Recall::new(other.db()).with_exact_limit(50);
    // Words drawn from a small vocabulary, so texts overlap as real ones do
    // (a vector orthogonal to all others is a needle no approximate search
    // promises to find).
    let mut seed = 7u64;
    let mut text = |tag: &str| {
        let words: Vec<String> = (0..6)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("w{}", (seed >> 33) % 30)
            })
            .collect();
        format!("{tag} {}", words.join(" "))
    };
    let texts: Vec<String> = (1..=200).map(|i| text(&format!("m{i}"))).collect();
    let filler: Vec<Message> = texts.iter().map(|t| Message::human(t.as_str())).collect();
    store.append("r", "t", &filler).await.unwrap();
    assert_eq!(
        recall.index_pending("r", "t", &*embedder).await.unwrap(),
        200
    );
    let loaded = |n: usize| (1, n);
    let mut waited = 0;
    while graphs(&recall) != loaded(200) {
        assert!(
            waited < 400,
            "the graph was never built: {:?}",
            recall.cache_stats()
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        waited += 1;
    }
    // Written through this store: the write catches the graph up.
    let zebra = text("zebra");
    store
        .append("r", "t", &[Message::human(zebra.as_str())])
        .await
        .unwrap();
    recall.index_pending("r", "t", &*embedder).await.unwrap();
    assert_eq!(graphs(&recall), loaded(201));
    let found = recall
        .search_text("r", "t", &zebra, &*embedder, 1, &[])
        .await
        .unwrap();
    assert_eq!(seqs(&found), vec![199, 200, 201]);
    // Written by another process: found by the catch-up before the search.
    // (A search reads new rows after it answers: a later one finds them.)
    let okapi = text("okapi");
    other
        .append("r", "t", &[Message::human(okapi.as_str())])
        .await
        .unwrap();
    other_recall
        .index_pending("r", "t", &*embedder)
        .await
        .unwrap();
    let mut waited = 0;
    let found = loop {
        let found = recall
            .search_text("r", "t", &okapi, &*embedder, 1, &[])
            .await
            .unwrap();
        if seqs(&found).contains(&202) || waited == 100 {
            break found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        waited += 1;
    };
    assert_eq!(seqs(&found), vec![200, 201, 202]);
    assert_eq!(graphs(&recall), loaded(202));
    // The same answers as the exact search.
    let exact = recall.clone().with_exact_limit(i64::MAX);
    for i in [3, 17, 150] {
        let q = &texts[i - 1];
        let by_graph = recall
            .search_text("r", "t", q, &*embedder, 1, &[])
            .await
            .unwrap();
        let by_scan = exact
            .search_text("r", "t", q, &*embedder, 1, &[])
            .await
            .unwrap();
        assert_eq!(seqs(&by_graph), seqs(&by_scan), "query {q}");
        assert!(seqs(&by_graph).contains(&(i as i64)), "query {q}");
    }
    assert!(store.delete_thread("r", "t").await.unwrap());
    assert_eq!(recall.cache_stats().threads, 0);
}

/// Texts of 6 words from a 30-word vocabulary after a unique tag, so texts
/// overlap as real ones do.
fn overlapping_texts(n: usize) -> Vec<String> {
    let mut seed = 11u64;
    (1..=n)
        .map(|i| {
            let words: Vec<String> = (0..6)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    format!("w{}", (seed >> 33) % 30)
                })
                .collect();
            format!("m{i} {}", words.join(" "))
        })
        .collect()
}

async fn wait_held(recall: &Recall, what: impl Fn(&nodekit::agent_memory::RecallCache) -> bool) {
    let mut waited = 0;
    while !what(&recall.cache_stats()) {
        assert!(waited < 400, "never held: {:?}", recall.cache_stats());
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        waited += 1;
    }
}

/// A short thread is loaded into memory after its first write and searched
/// exactly there: the same answers as the database's own index gave before
/// it was loaded, and new messages are found at once.
async fn resident_exact_search(store: &Store) {
    let recall = Recall::new(store.db());
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    let texts = overlapping_texts(300);
    let messages: Vec<Message> = texts.iter().map(|t| Message::human(t.as_str())).collect();
    store.append("r", "exact", &messages).await.unwrap();
    // Answers from the database, before the thread is held.
    let mut before = Vec::new();
    for i in [1usize, 77, 300] {
        let found = recall
            .search_text("r", "exact", &texts[i - 1], &*embedder, 1, &[])
            .await
            .unwrap();
        before.push(found);
    }
    assert!(before.iter().all(Vec::is_empty), "nothing is indexed yet");
    recall
        .index_pending("r", "exact", &*embedder)
        .await
        .unwrap();
    wait_held(&recall, |c| c.threads == 1 && c.exact_vectors == 300).await;
    assert_eq!(recall.cache_stats().graph_vectors, 0);
    for i in [1usize, 77, 300] {
        let found = recall
            .search_text("r", "exact", &texts[i - 1], &*embedder, 1, &[])
            .await
            .unwrap();
        assert!(
            seqs(&found).contains(&(i as i64)),
            "query {i}: {:?}",
            seqs(&found)
        );
    }
    // Written by this process: held as soon as the write returns.
    store
        .append("r", "exact", &[Message::human("quokka smiles")])
        .await
        .unwrap();
    recall
        .index_pending("r", "exact", &*embedder)
        .await
        .unwrap();
    assert_eq!(recall.cache_stats().exact_vectors, 301);
    let found = recall
        .search_text("r", "exact", "quokka smiles", &*embedder, 1, &[])
        .await
        .unwrap();
    assert_eq!(seqs(&found), vec![299, 300, 301]);
    // Another resource asking for the thread finds nothing, though this
    // process holds it; deleting drops it.
    assert!(
        recall
            .search_text("intruder", "exact", "quokka", &*embedder, 1, &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.delete_thread("r", "exact").await.unwrap());
    assert_eq!(recall.cache_stats().threads, 0);
}

/// The memory held for recall stays within its budget: the least recently
/// used threads are dropped, and a dropped thread is still searched (from
/// the database, then loaded again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_cache_stays_within_its_budget() {
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    // About 62 KB a thread of 40 messages: room for three.
    let store = crate::stores::sqlite("budget").await;
    let recall = Recall::new(store.db()).with_cache_bytes(200_000);
    let texts = overlapping_texts(40);
    let messages: Vec<Message> = texts.iter().map(|t| Message::human(t.as_str())).collect();
    for t in 0..8 {
        let thread = format!("t{t}");
        store.append("r", &thread, &messages).await.unwrap();
        recall
            .index_pending("r", &thread, &*embedder)
            .await
            .unwrap();
        // Past the budget for a moment after a page is read, then evicted.
        wait_held(&recall, |c| c.bytes <= 200_000 && c.exact_vectors >= 40).await;
        let held = recall.cache_stats();
        assert!(held.exact_vectors <= 3 * 40, "{held:?}");
    }
    // t0 was dropped long ago: still answered, then held again.
    let found = recall
        .search_text("r", "t0", &texts[9], &*embedder, 1, &[])
        .await
        .unwrap();
    assert!(seqs(&found).contains(&10), "{:?}", seqs(&found));
    wait_held(&recall, |c| {
        c.exact_vectors <= 3 * 40 && c.exact_vectors % 40 == 0
    })
    .await;
    let found = recall
        .search_text("r", "t0", &texts[9], &*embedder, 1, &[])
        .await
        .unwrap();
    assert!(seqs(&found).contains(&10), "{:?}", seqs(&found));
}

/// Stores opened on one database in one process share their graphs: a node
/// that opens its store for each run finds the graph the last run built.
#[tokio::test]
async fn sqlite_stores_share_graphs() {
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    let path = crate::stores::temp_db("shared");
    let first = Store::open_sqlite(&path).await.unwrap();
    let first_recall = Recall::new(first.db()).with_exact_limit(10);
    let messages: Vec<Message> = (1..=40)
        .map(|i| Message::human(format!("message {i} w{} w{}", i % 7, i % 5)))
        .collect();
    first.append("r", "t", &messages).await.unwrap();
    first_recall
        .index_pending("r", "t", &*embedder)
        .await
        .unwrap();
    let mut waited = 0;
    while graphs(&first_recall) != (1, 40) {
        assert!(waited < 400, "the graph was never built");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        waited += 1;
    }
    first.close().await;
    let second = Store::open_sqlite(&path).await.unwrap();
    assert_eq!(graphs(&Recall::new(second.db())), (1, 40));
    let elsewhere = crate::stores::sqlite("elsewhere").await;
    assert_eq!(graphs(&Recall::new(elsewhere.db())), (0, 0));
}

/// A recalled range never splits a tool call from its results: it grows
/// back to the call of a result it starts with and on to the results of a
/// call it ends with.
async fn recalled_tool_pairs(store: &Store) {
    let recall = Recall::new(store.db());
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder();
    let call = |ids: &[&str]| Message {
        tool_calls: ids
            .iter()
            .map(|id| nodekit::message::ToolCall {
                id: (*id).into(),
                name: "weather".into(),
                args: json!({"city": "Oslo"}),
            })
            .collect(),
        ..Message::ai("")
    };
    let mut messages = vec![
        Message::human("filler opening"),
        call(&["c1"]),
        Message::tool("cloudy and cold", "c1"),
        Message::human("filler question"),
        Message::human("zebra stripes"),
        call(&["c2", "c3"]),
        Message::tool("rain", "c2"),
        Message::tool("snow", "c3"),
    ];
    messages.extend((9..=40).map(|i| Message::human(format!("filler line {i}"))));
    store.append("r", "pairs", &messages).await.unwrap();
    recall
        .index_pending("r", "pairs", &*embedder)
        .await
        .unwrap();
    let found = recall
        .search_text("r", "pairs", "zebra stripes", &*embedder, 1, &[])
        .await
        .unwrap();
    // The match (5) with 3..=6, grown to the call at 2 and the results at 7 and 8.
    assert_eq!(seqs(&found), vec![2, 3, 4, 5, 6, 7, 8]);
}

#[tokio::test]
async fn sqlite_graph_search() {
    let path = crate::stores::temp_db("graph");
    let store = Store::open_sqlite(&path).await.unwrap();
    // Another process: a store with graphs of its own.
    let url = format!("sqlite://{}", path.display());
    let other = Store::from_sqlite_pool(sqlx::SqlitePool::connect(&url).await.unwrap())
        .await
        .unwrap();
    graph_search(&store, &other).await;
    // The deleted thread's sqlite-vec rows went with it.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM nodekit_am_vec")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn postgres_graph_search() {
    let Some(pg) = Pg::new().await else { return };
    // Another process: a store with graphs of its own (other session
    // settings make it another database to this one's).
    let options = pg.options.clone().options([("application_name", "other")]);
    let other = Store::postgres(&nodekit::postgres::Postgres::from_options(options))
        .await
        .unwrap();
    graph_search(&pg.store, &other).await;
    other.close().await;
    pg.drop().await;
}

/// Long threads through pgvector's HNSW index, short ones exactly; the
/// index rows go with a deleted thread.
#[tokio::test]
async fn pgvector_long_thread_search() {
    let Some(pg) = Pg::pgvector().await else {
        return;
    };
    let other = Store::postgres(&nodekit::postgres::Postgres::from_options(
        pg.options.clone(),
    ))
    .await
    .unwrap();
    graph_search(&pg.store, &other).await;
    other.close().await;
    assert_eq!(index_kind(&pg.store).await, IndexKind::PgVector);
    let pool = sqlx::PgPool::connect_with(pg.options.clone())
        .await
        .unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM nodekit_am_vectors")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0, "a deleted thread's pgvector rows");
    pool.close().await;
    pg.drop().await;
}

#[tokio::test]
async fn pgvector_neighbours_isolation_and_dimensions() {
    let Some(pg) = Pg::pgvector().await else {
        return;
    };
    neighbours_isolation_dims(&pg.store).await;
    assert_eq!(index_kind(&pg.store).await, IndexKind::PgVector);
    pg.drop().await;
}

/// A slow embedder never holds up a request: appends return at once, the
/// context comes back within the recall timeout without recalled messages,
/// and the index catches up once the embedder is fast again.
async fn slow_embedder(store: &Store) {
    let http = EmbedServer::start(384).await;
    let embedder = http.embedder_with_timeout(10.0);
    http.delay_ms.store(3_000, Ordering::SeqCst);
    let recall = Recall::new(store.db());
    let recaller = Recaller::spawn(recall.clone(), embedder.clone());
    let started = std::time::Instant::now();
    store.append("r", "slow", &conversation()).await.unwrap();
    recaller.notify("r", "slow");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let config = recall_config();
    let options = AssembleOptions {
        embedder: Some(&*embedder),
        recall_timeout: Some(std::time::Duration::from_millis(300)),
    };
    let started = std::time::Instant::now();
    let ctx = assemble_with(store, &config, "r", "slow", Some("zebra stripes"), options)
        .await
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(ctx.parts.iter().any(|p| p.kind == PartKind::Recent));
    assert!(ctx.parts.iter().all(|p| p.kind != PartKind::Recalled));
    // Fast again: the background indexer finishes and recall comes back.
    http.delay_ms.store(0, Ordering::SeqCst);
    recaller.flush().await.unwrap();
    assert!(recall.unindexed("r", "slow", 100).await.unwrap().is_empty());
    let ctx = assemble_with(store, &config, "r", "slow", Some("zebra stripes"), options)
        .await
        .unwrap();
    assert!(ctx.parts.iter().any(|p| p.kind == PartKind::Recalled));
}

#[tokio::test]
async fn sqlite_neighbours_isolation_and_dimensions() {
    let store = sqlite().await;
    neighbours_isolation_dims(&store).await;
    assert_eq!(index_kind(&store).await, IndexKind::SqliteVec);
}

#[tokio::test]
async fn postgres_neighbours_isolation_and_dimensions() {
    let Some(pg) = Pg::new().await else { return };
    neighbours_isolation_dims(&pg.store).await;
    // The fallback, on a server without pgvector (as services.sh starts).
    let pool = sqlx::PgPool::connect_with(pg.options.clone())
        .await
        .unwrap();
    let has_pgvector: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    if !has_pgvector {
        assert_eq!(index_kind(&pg.store).await, IndexKind::BruteForce);
    }
    pg.drop().await;
}

/// A thread deleted and imported again (its creation time and seqs kept)
/// is indexed again: how far the old one was indexed is forgotten.
#[tokio::test]
async fn reimported_thread_is_indexed_again() {
    let store = sqlite().await;
    let http = EmbedServer::start(384).await;
    let recall = Recall::new(store.db());
    let recaller = Recaller::spawn(recall.clone(), http.embedder());
    store.append("r", "t", &conversation()).await.unwrap();
    recaller.notify("r", "t");
    recaller.flush().await.unwrap();
    assert!(recall.unindexed("r", "t", 100).await.unwrap().is_empty());
    let export = store.export_thread("r", "t").await.unwrap();
    assert!(store.delete_thread("r", "t").await.unwrap());
    store.import_thread("r", export).await.unwrap();
    assert!(!recall.unindexed("r", "t", 100).await.unwrap().is_empty());
    recaller.notify("r", "t");
    recaller.flush().await.unwrap();
    assert!(recall.unindexed("r", "t", 100).await.unwrap().is_empty());
    let found = recall
        .search_text("r", "t", "zebra stripes", &*http.embedder(), 1, &[])
        .await
        .unwrap();
    assert!(!found.is_empty());
}

/// The agent's path: a `ThreadMemory` with recall indexes what it saves in
/// the background and recalls by the input when it loads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_memory_recalls_by_the_input() {
    use nodekit::agent_memory::{MemoryConfig, ThreadMemory};
    use nodekit::memory::Memory;
    let store = sqlite().await;
    // 384 dimensions, as in the benchmarks: with few, the hashed
    // words of short replies collide with the query's.
    let server = EmbedServer::start(384).await;
    let config = MemoryConfig::default()
        .embedder_model("bag-of-words")
        .semantic_recall_top_k(1)
        .unwrap()
        .last_messages(2)
        .unwrap()
        .without_working_memory();
    let memory = ThreadMemory::new(store.clone(), config, "ada", "t")
        .await
        .unwrap()
        .with_recall(server.embedder());
    memory
        .save("my cat is called zebra stripes", "noted")
        .await
        .unwrap();
    for i in 0..6 {
        memory
            .save(&format!("filler line {i} about the weather"), "ok")
            .await
            .unwrap();
    }
    // Indexing runs in the background; wait until it has caught up.
    let recall = Recall::new(store.db());
    for _ in 0..100 {
        if recall.unindexed("ada", "t", 100).await.unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let loaded: Vec<String> = memory
        .load_for("zebra stripes")
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert!(
        loaded.contains(&"my cat is called zebra stripes".to_owned()),
        "{loaded:?}"
    );
    // The recent window is still last, and the input is not repeated.
    assert_eq!(loaded.last().unwrap(), "ok");
    assert!(!loaded.contains(&"zebra stripes".to_owned()));
    let plain: Vec<String> = memory
        .load()
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(plain, ["filler line 5 about the weather", "ok"]);
}

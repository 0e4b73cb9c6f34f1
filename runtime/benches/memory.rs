//! Conversation memory on each store: with BENCH_SESSIONS × BENCH_MESSAGES
//! stored (default 1,000 × 1,000), the latency of loading a 20-message
//! window (`MemoryOptions::buffer_window`, k = 10) and of saving one exchange, p50 and
//! p99 over BENCH_OPS random sessions. PostgreSQL and Redis come from
//! `DATABASE_URL` / `REDIS_URL` (`eval "$(scripts/services.sh)"`); a store
//! without its variable is skipped. Data is loaded once and reused.
//!
//! `cargo bench -p nodekit --bench memory`

use std::sync::Arc;
use std::time::{Duration, Instant};

use nodekit::history::ChatHistory;
use nodekit::history::postgres::PostgresChatHistory;
use nodekit::history::redis::RedisChatHistory;
use nodekit::history::sqlite::SqliteChatHistory;
use nodekit::memory::{ConversationMemory, Memory, MemoryOptions};
use serde_json::json;

const TABLE: &str = "bench_chat_histories";

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

/// A deterministic pseudo-random sequence (no extra crate for a benchmark).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn message(session: usize, i: usize) -> String {
    let kind = if i.is_multiple_of(2) { "human" } else { "ai" };
    json!({"type": kind, "data": {"content": format!("message {i} of session {session}: some ordinary chat text"), "additional_kwargs": {}, "response_metadata": {}}}).to_string()
}

async fn run() {
    let (sessions, messages, ops) = (
        env("BENCH_SESSIONS", 1000),
        env("BENCH_MESSAGES", 1000),
        env("BENCH_OPS", 2000),
    );
    println!("{sessions} sessions × {messages} messages; {ops} operations per measurement\n");
    println!("| store | window load p50 | p99 | save exchange p50 | p99 |");
    println!("|---|---:|---:|---:|---:|");
    let mut results = Vec::new();

    let dir = std::env::temp_dir().join("nodekit-bench-memory");
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite_path = dir.join("memory.db").to_string_lossy().into_owned();
    load_sqlite(&sqlite_path, sessions, messages).await;
    let path = sqlite_path.clone();
    let r = measure("SQLite", sessions, ops, move |s| {
        let path = path.clone();
        async move {
            Arc::new(SqliteChatHistory::open(&path, TABLE, &s).await.unwrap())
                as Arc<dyn ChatHistory>
        }
    })
    .await;
    results.push(r);

    if let Ok(url) = std::env::var("DATABASE_URL") {
        load_postgres(&url, sessions, messages).await;
        let pg = nodekit::postgres::Postgres::new(&url.parse().unwrap()).unwrap();
        let r = measure("PostgreSQL", sessions, ops, move |s| {
            let pg = pg.clone();
            async move {
                Arc::new(PostgresChatHistory::open(&pg, TABLE, &s).await.unwrap())
                    as Arc<dyn ChatHistory>
            }
        })
        .await;
        results.push(r);
    } else {
        eprintln!("PostgreSQL skipped: DATABASE_URL is not set");
    }

    if let Ok(url) = std::env::var("REDIS_URL") {
        load_redis(&url, sessions, messages).await;
        let r = measure("Redis", sessions, ops, move |s| {
            let url = url.clone();
            async move {
                Arc::new(RedisChatHistory::connect(&url, &s, None).await.unwrap())
                    as Arc<dyn ChatHistory>
            }
        })
        .await;
        results.push(r);
    } else {
        eprintln!("Redis skipped: REDIS_URL is not set");
    }
    results.push(token_buffer(std::env::var("DATABASE_URL").ok()).await);
    if let Ok(path) = std::env::var("BENCH_JSON") {
        std::fs::write(path, serde_json::to_string_pretty(&results).unwrap()).unwrap();
    }
}

/// `tokenBuffer` (2,000 tokens, gpt-4o-mini's tokenizer) loads on a
/// 10,000-message history, in process and on PostgreSQL.
async fn token_buffer(database_url: Option<String>) -> serde_json::Value {
    const HISTORY: usize = 10_000;
    let in_process: Arc<dyn ChatHistory> =
        Arc::new(nodekit::history::InProcessHistory::session("bench-tokens"));
    if in_process.messages().await.unwrap().is_empty() {
        let all: Vec<_> = (0..HISTORY)
            .map(|i| {
                nodekit::message::Message::from_json(&serde_json::from_str(&message(0, i)).unwrap())
                    .unwrap()
            })
            .collect();
        in_process.add_messages(&all).await.unwrap();
    }
    let mut stores = vec![("in process", in_process)];
    if let Some(url) = database_url {
        let h = PostgresChatHistory::open(&pg(&url), TABLE, "bench-tokens")
            .await
            .unwrap();
        if h.messages().await.unwrap().len() < HISTORY {
            let all: Vec<_> = (0..HISTORY)
                .map(|i| {
                    nodekit::message::Message::from_json(
                        &serde_json::from_str(&message(0, i)).unwrap(),
                    )
                    .unwrap()
                })
                .collect();
            h.add_messages(&all).await.unwrap();
        }
        stores.push(("PostgreSQL", Arc::new(h)));
    }
    println!(
        "\n| tokenBuffer (2,000 tokens) on {HISTORY} messages | load p50 | p99 | messages kept |"
    );
    println!("|---|---:|---:|---:|");
    let mut out = Vec::new();
    for (name, history) in stores {
        let memory = nodekit::memory::ConversationMemory::new(MemoryOptions::token_buffer(
            history,
            2000,
            "gpt-4o-mini",
        ));
        let mut times = Vec::new();
        let mut kept = 0;
        for _ in 0..200 {
            let start = Instant::now();
            kept = memory.load().await.unwrap().len();
            times.push(start.elapsed());
        }
        times.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let (p50, p99) = (us(times[100]), us(times[198]));
        println!("| {name} | {p50:.0} µs | {p99:.0} µs | {kept} |");
        out.push(json!({"store": name, "token_buffer_p50_us": p50, "token_buffer_p99_us": p99, "kept": kept}));
    }
    json!({"token_buffer": out})
}

fn session_name(i: usize) -> String {
    format!("bench-{i}")
}

/// p50/p99 of window loads and exchange saves on random sessions. Histories
/// are opened before timing: the numbers are per operation, as an agent sees them.
async fn measure<F, Fut>(store: &str, sessions: usize, ops: usize, open: F) -> serde_json::Value
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Arc<dyn ChatHistory>>,
{
    let mut rng = Lcg(42);
    let mut opened = Vec::new();
    for _ in 0..ops.min(500) {
        let h = open(session_name(rng.next(sessions))).await;
        opened.push(ConversationMemory::new(MemoryOptions::buffer_window(h, 10)));
    }
    let mut loads = Vec::with_capacity(ops);
    let mut saves = Vec::with_capacity(ops);
    for i in 0..ops {
        let memory = &opened[i % opened.len()];
        let start = Instant::now();
        let window = memory.load().await.unwrap();
        loads.push(start.elapsed());
        assert_eq!(window.len(), 20);
        let start = Instant::now();
        memory.save("a question", "an answer").await.unwrap();
        saves.push(start.elapsed());
    }
    let pct = |v: &mut Vec<Duration>, p: f64| {
        v.sort();
        v[((v.len() as f64 - 1.0) * p) as usize]
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (l50, l99, s50, s99) = (
        pct(&mut loads, 0.5),
        pct(&mut loads, 0.99),
        pct(&mut saves, 0.5),
        pct(&mut saves, 0.99),
    );
    println!(
        "| {store} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs |",
        us(l50),
        us(l99),
        us(s50),
        us(s99)
    );
    json!({"store": store, "load_p50_us": us(l50), "load_p99_us": us(l99), "save_p50_us": us(s50), "save_p99_us": us(s99)})
}

async fn load_sqlite(path: &str, sessions: usize, messages: usize) {
    let h = SqliteChatHistory::open(path, TABLE, "bench-0")
        .await
        .unwrap();
    if h.messages().await.unwrap().len() >= messages {
        return;
    }
    eprintln!("loading SQLite ({})", path);
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{path}"))
        .await
        .unwrap();
    for s in 0..sessions {
        let mut tx = pool.begin().await.unwrap();
        for i in 0..messages {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO {TABLE} (session_id, message) VALUES (?, ?)"
            )))
            .bind(session_name(s))
            .bind(message(s, i))
            .execute(&mut *tx)
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
}

async fn load_postgres(url: &str, sessions: usize, messages: usize) {
    let h = PostgresChatHistory::open(&pg(url), TABLE, "bench-0")
        .await
        .unwrap();
    if h.messages().await.unwrap().len() >= messages {
        return;
    }
    eprintln!("loading PostgreSQL");
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    // Generated in the server: a million rows in seconds, in LangChain's stored form.
    let sql = format!(
        "INSERT INTO {TABLE} (session_id, message)
         SELECT 'bench-' || s, jsonb_build_object(
             'type', CASE WHEN m % 2 = 0 THEN 'human' ELSE 'ai' END,
             'data', jsonb_build_object('content', 'message ' || m || ' of session ' || s || ': some ordinary chat text',
                                        'additional_kwargs', '{{}}'::jsonb, 'response_metadata', '{{}}'::jsonb))
         FROM generate_series(0, $1 - 1) AS s, generate_series(0, $2 - 1) AS m
         ORDER BY m, s"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(sessions as i32)
        .bind(messages as i32)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE {TABLE}")))
        .execute(&pool)
        .await
        .unwrap();
}

async fn load_redis(url: &str, sessions: usize, messages: usize) {
    let client = redis::Client::open(url).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let len: usize = redis::cmd("LLEN")
        .arg(session_name(0))
        .query_async(&mut c)
        .await
        .unwrap();
    if len >= messages {
        return;
    }
    eprintln!("loading Redis");
    for s in 0..sessions {
        let values: Vec<String> = (0..messages).map(|i| message(s, i)).collect();
        let _: () = redis::cmd("LPUSH")
            .arg(session_name(s))
            .arg(values)
            .query_async(&mut c)
            .await
            .unwrap();
    }
}

/// A pool to the server at `url`, with nodekit's policy.
fn pg(url: &str) -> nodekit::postgres::Postgres {
    nodekit::postgres::Postgres::new(&url.parse().unwrap()).unwrap()
}

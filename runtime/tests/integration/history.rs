//! Chat histories on real stores: a SQLite file, and the PostgreSQL and
//! Redis servers started by `scripts/services.sh` (`DATABASE_URL`,
//! `REDIS_URL`). Outside CI a missing server skips its tests with a reason;
//! under `CI=true` it fails them.

use std::sync::Arc;

use nodekit::history::ChatHistory;
use nodekit::history::postgres::PostgresChatHistory;
use nodekit::history::redis::RedisChatHistory;
use nodekit::history::sqlite::SqliteChatHistory;
use nodekit::message::{Message, Role};
use nodekit::postgres::Postgres;
use serde_json::json;

use nodekit_test_support::{server, unique};

/// A pool to the server at `url`, with nodekit's policy.
fn pg(url: &str) -> Postgres {
    Postgres::new(&url.parse().unwrap()).unwrap()
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().map(Message::text).collect()
}

/// What every store must do.
async fn common(
    make: impl Fn(String) -> std::pin::Pin<Box<dyn Future<Output = Arc<dyn ChatHistory>> + Send>>,
) {
    // Round trip, order, roles and clear.
    let h = make(unique("s")).await;
    let mut ai = Message::ai("calling");
    ai.tool_calls.push(nodekit::message::ToolCall {
        id: "c".into(),
        name: "t".into(),
        args: json!({"a": 1}),
    });
    h.add_messages(&[
        Message::system("sys"),
        Message::human("hi"),
        ai.clone(),
        Message::tool("ok", "c"),
        // A free role (LangChain's `ChatMessage`).
        Message::chat("critic", "meh"),
    ])
    .await
    .unwrap();
    h.add_message(&Message::ai("bye")).await.unwrap();
    let got = h.messages().await.unwrap();
    assert_eq!(texts(&got), ["sys", "hi", "calling", "ok", "meh", "bye"]);
    assert_eq!(got[2], ai);
    assert_eq!(got[3].role, Role::Tool);
    assert_eq!(got[4], Message::chat("critic", "meh"));
    // A window reads only the newest messages, oldest first.
    assert_eq!(texts(&h.last_messages(2).await.unwrap()), ["meh", "bye"]);
    assert!(h.last_messages(0).await.unwrap().is_empty());
    assert_eq!(h.last_messages(99).await.unwrap().len(), 6);

    // Sessions are isolated, also with injection attempts in the id.
    let evil = make("x'); DROP TABLE n8n_chat_histories; --".into()).await;
    evil.add_message(&Message::human("evil")).await.unwrap();
    assert_eq!(texts(&evil.messages().await.unwrap()), ["evil"]);
    assert_eq!(h.messages().await.unwrap().len(), 6);
    h.clear().await.unwrap();
    assert!(h.messages().await.unwrap().is_empty());
    assert_eq!(evil.messages().await.unwrap().len(), 1);
    evil.clear().await.unwrap();

    // 100 concurrent writers to one session: nothing lost, every exchange kept together.
    let session = unique("concurrent");
    let writers: Vec<_> = (0..100)
        .map(|i| {
            let h = make(session.clone());
            tokio::spawn(async move {
                let h = h.await;
                h.add_messages(&[
                    Message::human(format!("q{i}")),
                    Message::ai(format!("a{i}")),
                ])
                .await
                .unwrap();
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let all = make(session).await.messages().await.unwrap();
    assert_eq!(all.len(), 200);
    for pair in all.chunks(2) {
        assert_eq!(
            pair[0].text().replace('q', ""),
            pair[1].text().replace('a', ""),
            "an exchange was split"
        );
    }

    // Every kind of block comes back as it went, in LangChain's stored form.
    let h = make(unique("blocks")).await;
    let blocks = crate::message::with_every_block();
    h.add_messages(&blocks).await.unwrap();
    assert_eq!(h.messages().await.unwrap(), blocks);
    h.clear().await.unwrap();

    // 10 MB and odd Unicode.
    let h = make(unique("big")).await;
    let big = "é🦀\u{200b}\u{fffd}".repeat(10 * 1024 * 1024 / 12);
    h.add_message(&Message::human(big.as_str())).await.unwrap();
    assert_eq!(h.messages().await.unwrap()[0].text(), big);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_history() {
    let dir = nodekit_test_support::scratch_dir().join(unique("nodekit-sqlite"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chat.db").to_string_lossy().into_owned();
    let p = path.clone();
    common(move |session| {
        let p = p.clone();
        Box::pin(async move {
            Arc::new(
                SqliteChatHistory::open(&p, "n8n_chat_histories", &session)
                    .await
                    .unwrap(),
            ) as Arc<dyn ChatHistory>
        })
    })
    .await;

    // NUL bytes survive in SQLite.
    let h = SqliteChatHistory::open(&path, "n8n_chat_histories", "nul")
        .await
        .unwrap();
    h.add_message(&Message::human("a\0b")).await.unwrap();
    assert_eq!(h.messages().await.unwrap()[0].text(), "a\0b");

    // A corrupted row is skipped; the rest loads.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{path}"))
        .await
        .unwrap();
    sqlx::query("INSERT INTO n8n_chat_histories (session_id, message) VALUES ('nul', 'not json')")
        .execute(&pool)
        .await
        .unwrap();
    h.add_message(&Message::ai("after")).await.unwrap();
    assert_eq!(texts(&h.messages().await.unwrap()), ["a\0b", "after"]);

    // Table names are validated.
    let e = SqliteChatHistory::open(&path, "t; DROP TABLE x", "s")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("SQLite: invalid table name"), "{e}");

    // A database's refusal keeps the driver's error: a caller can match a
    // unique violation and walk down to sqlx's error after `?`.
    sqlx::query("CREATE TABLE one_per_session (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL UNIQUE, message TEXT NOT NULL)")
        .execute(&pool)
        .await
        .unwrap();
    let h = SqliteChatHistory::open(&path, "one_per_session", "s")
        .await
        .unwrap();
    async fn save_two(h: &SqliteChatHistory) -> nodekit::Result<()> {
        h.add_message(&Message::human("first")).await?;
        h.add_message(&Message::human("second")).await?;
        Ok(())
    }
    let e = save_two(&h).await.unwrap_err();
    let nodekit::Error::Database(store) = &e else {
        panic!("expected a database error, got {e:?}")
    };
    assert!(store.is_unique_violation(), "{e}");
    assert_eq!(
        store.kind(),
        nodekit::error::StoreErrorKind::UniqueViolation
    );
    assert_eq!(store.backend(), Some(nodekit::error::Backend::Sqlite));
    let source = std::error::Error::source(&e).expect("the driver's error");
    let sqlx::Error::Database(db) = source.downcast_ref::<sqlx::Error>().expect("sqlx's error")
    else {
        panic!("expected sqlx's database error, got {source:?}")
    };
    assert!(db.is_unique_violation(), "{db}");
    assert!(e.to_string().starts_with("SQLite: "), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_history() {
    let Some(url) = server("DATABASE_URL") else {
        return;
    };
    let table = unique("chat");
    // One pool for the test's many histories, as an application would share it.
    let shared = Postgres::from_pool(
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(16)
            .connect(&url)
            .await
            .unwrap(),
    );
    let (p, t) = (shared.clone(), table.clone());
    common(move |session| {
        let (p, t) = (p.clone(), t.clone());
        Box::pin(async move {
            Arc::new(PostgresChatHistory::open(&p, &t, &session).await.unwrap())
                as Arc<dyn ChatHistory>
        })
    })
    .await;

    // Many first uses of a new table at once (n8n workers starting) all
    // succeed: PostgreSQL's `CREATE TABLE IF NOT EXISTS` alone can collide.
    let fresh = unique("chat_fresh");
    let firsts: Vec<_> = (0..16)
        .map(|i| {
            let (p, t) = (shared.clone(), fresh.clone());
            tokio::spawn(async move {
                let h = PostgresChatHistory::open(&p, &t, &format!("s{i}")).await?;
                h.add_message(&Message::human("first")).await
            })
        })
        .collect();
    for first in firsts {
        first.await.unwrap().unwrap();
    }

    // Rows are LangChain's stored form in jsonb, so n8n and LangChain read them.
    let h = PostgresChatHistory::open(&pg(&url), &table, "layout")
        .await
        .unwrap();
    h.add_message(&Message::human("hello")).await.unwrap();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let row: (serde_json::Value,) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT message FROM \"{table}\" WHERE session_id = 'layout'"
    )))
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        row.0,
        json!({"type": "human", "content": "hello", "additional_kwargs": {}, "response_metadata": {}})
    );
    // A row as LangChain JS's PostgresChatMessageHistory writes it reads back.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO \"{table}\" (session_id, message) VALUES ('layout', '{{\"type\": \"ai\", \"content\": \"from LangChain\", \"tool_calls\": [], \"additional_kwargs\": {{}}, \"response_metadata\": {{}}, \"invalid_tool_calls\": []}}')"
    )))
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(
        texts(&h.messages().await.unwrap()),
        ["hello", "from LangChain"]
    );
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DELETE FROM \"{table}\" WHERE message->>'content' = 'from LangChain'"
    )))
    .execute(&pool)
    .await
    .unwrap();
    let index: (i64,) = sqlx::query_as(
        "SELECT count(*) FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%(session_id, id)%'",
    )
    .bind(&table)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(index.0, 1);

    // NUL cannot go into jsonb: a clear error, and nothing of the batch is written.
    let e = h
        .add_messages(&[Message::human("fine"), Message::ai("a\0b")])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot hold the NUL character"), "{e}");
    assert_eq!(texts(&h.messages().await.unwrap()), ["hello"]);

    // A corrupted row (valid JSON, not a message) is skipped.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO \"{table}\" (session_id, message) VALUES ('layout', '{{\"type\": 5}}')"
    )))
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(texts(&h.messages().await.unwrap()), ["hello"]);
    for t in [&table, &fresh] {
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE \"{t}\"")))
            .execute(&pool)
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_is_a_clear_error_without_the_password() {
    let e = PostgresChatHistory::open(&pg("postgres://user:s3cret-pw@127.0.0.1:9/db"), "t", "s")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("PostgreSQL: cannot connect"), "{e}");
    // At once, not after the pool's 10 s of retries.
    assert!(e.contains("refused"), "{e}");
    assert!(!e.contains("s3cret-pw"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_history() {
    let Some(url) = server("REDIS_URL") else {
        return;
    };
    let u = url.clone();
    common(move |session| {
        let u = u.clone();
        Box::pin(async move {
            Arc::new(
                RedisChatHistory::connect(&u, &session, Some(3600))
                    .await
                    .unwrap(),
            ) as Arc<dyn ChatHistory>
        })
    })
    .await;

    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let key = unique("layout");
    let h = RedisChatHistory::connect(&url, &key, Some(100))
        .await
        .unwrap();
    h.add_messages(&[Message::human("first"), Message::ai("second")])
        .await
        .unwrap();
    // n8n's layout: newest first, LangChain's stored JSON, TTL set.
    let raw: Vec<String> = redis::cmd("LRANGE")
        .arg(&key)
        .arg(0)
        .arg(-1)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&raw[0]).unwrap(),
        Message::ai("second").to_stored()
    );
    let ttl: i64 = redis::cmd("TTL")
        .arg(&key)
        .query_async(&mut c)
        .await
        .unwrap();
    assert!((1..=100).contains(&ttl), "{ttl}");

    // NUL survives; a corrupted entry is skipped.
    h.add_message(&Message::human("a\0b")).await.unwrap();
    let _: () = redis::cmd("LPUSH")
        .arg(&key)
        .arg("not json")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(
        texts(&h.messages().await.unwrap()),
        ["first", "second", "a\0b"]
    );

    // A key of another type.
    let other = unique("string");
    let _: () = redis::cmd("SET")
        .arg(&other)
        .arg("x")
        .query_async(&mut c)
        .await
        .unwrap();
    let e = RedisChatHistory::connect(&url, &other, None)
        .await
        .unwrap()
        .messages()
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds something other than a list"), "{e}");
    let _: () = redis::cmd("DEL")
        .arg(&key)
        .arg(&other)
        .query_async(&mut c)
        .await
        .unwrap();
}

/// A TCP proxy to `target` whose connections all break when `cut` fires.
async fn proxy(target: String, cut: tokio_util::sync::CancellationToken) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = cut.cancelled() => return,
                accepted = listener.accept() => {
                    let Ok((mut inbound, _)) = accepted else { return };
                    let (target, cut) = (target.clone(), cut.clone());
                    tokio::spawn(async move {
                        let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await else { return };
                        tokio::select! {
                            _ = cut.cancelled() => {}
                            _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        }
                    });
                }
            }
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_gone_mid_conversation_leaves_no_half_exchange() {
    let Some(url) = server("DATABASE_URL") else {
        return;
    };
    // postgres://user@host:port/db: route the history through a proxy we can cut.
    let rest = url.trim_start_matches("postgres://");
    let (user, rest) = rest.split_once('@').unwrap();
    let (host_port, db) = rest.split_once('/').unwrap();
    let cut = tokio_util::sync::CancellationToken::new();
    let addr = proxy(host_port.to_owned(), cut.clone()).await;
    let table = unique("gone");
    let h = PostgresChatHistory::open(&pg(&format!("postgres://{user}@{addr}/{db}")), &table, "s")
        .await
        .unwrap();
    h.add_messages(&[Message::human("q1"), Message::ai("a1")])
        .await
        .unwrap();
    cut.cancel();
    let e = h
        .add_messages(&[Message::human("q2"), Message::ai("a2")])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("PostgreSQL: "), "{e}");
    let direct = PostgresChatHistory::open(&pg(&url), &table, "s")
        .await
        .unwrap();
    assert_eq!(texts(&direct.messages().await.unwrap()), ["q1", "a1"]);
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE \"{table}\"")))
        .execute(&pool)
        .await
        .unwrap();
}

//! Unit tests on a SQLite file: windowing, token counts, versions, export.

use serde_json::json;

use super::*;
use nodekit_core::message::ToolCall;

fn temp_db(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    nodekit_test_support::scratch_dir().join(format!(
        "nodekit-am-unit-{name}-{}-{nanos}.db",
        std::process::id()
    ))
}

fn call(id: &str) -> Message {
    Message {
        tool_calls: vec![ToolCall {
            id: id.into(),
            name: "lookup".into(),
            args: json!({"q": id}),
        }],
        ..Message::ai("")
    }
}

#[tokio::test]
async fn recent_extends_back_to_the_tool_call() {
    let store = Store::open_sqlite(temp_db("recent")).await.unwrap();
    let msgs = vec![
        Message::human("hi"),    // 1
        call("a"),               // 2
        Message::human("noise"), // 3 (unusual, but keeps the walk honest)
        Message {
            tool_calls: vec![
                ToolCall {
                    id: "b".into(),
                    name: "x".into(),
                    args: json!({}),
                },
                ToolCall {
                    id: "c".into(),
                    name: "y".into(),
                    args: json!({}),
                },
            ],
            ..Message::ai("")
        }, // 4
        Message::tool("rb", "b"), // 5
        Message::tool("rc", "c"), // 6
        Message::ai("done"),     // 7
    ];
    store.append("r", "t", &msgs).await.unwrap();
    let seqs = |v: Vec<StoredMessage>| v.iter().map(|m| m.seq).collect::<Vec<_>>();
    // Window of 2 is [6, 7]: 6 answers call c in message 4, so 4..=7.
    assert_eq!(
        seqs(store.recent("r", "t", 2).await.unwrap()),
        vec![4, 5, 6, 7]
    );
    assert_eq!(
        seqs(store.recent("r", "t", 3).await.unwrap()),
        vec![4, 5, 6, 7]
    );
    // A window starting at the call itself is untouched.
    assert_eq!(
        seqs(store.recent("r", "t", 4).await.unwrap()),
        vec![4, 5, 6, 7]
    );
    assert_eq!(seqs(store.recent("r", "t", 1).await.unwrap()), vec![7]);
    assert_eq!(
        seqs(store.recent("r", "t", 100).await.unwrap()),
        (1..=7).collect::<Vec<_>>()
    );
    assert!(store.recent("r", "t", 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn recent_drops_results_whose_call_is_lost() {
    let store = Store::open_sqlite(temp_db("orphan")).await.unwrap();
    let msgs = vec![
        Message::human("q"),
        Message::tool("r1", "gone"),
        Message::ai("a"),
    ];
    store.append("r", "t", &msgs).await.unwrap();
    let got = store.recent("r", "t", 2).await.unwrap();
    assert_eq!(got.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![3]);
}

#[tokio::test]
async fn token_counts_are_stored_once_and_summed() {
    let store = Store::open_sqlite(temp_db("tokens")).await.unwrap();
    let m = Message::human("hello world");
    let expected = Tokenizer::Cl100kBase.count("hello world") as i64 + MESSAGE_OVERHEAD_TOKENS;
    let stored = store
        .append("r", "t", &[m.clone(), m.clone(), call("z")])
        .await
        .unwrap();
    assert_eq!(stored[0].token_count, expected);
    assert_eq!(
        stored.iter().map(|s| s.seq).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let all: i64 = stored.iter().map(|s| s.token_count).sum();
    assert_eq!(store.unobserved_tokens("r", "t", 0).await.unwrap(), all);
    assert_eq!(
        store.unobserved_tokens("r", "t", 2).await.unwrap(),
        stored[2].token_count
    );
    assert_eq!(store.unobserved_tokens("r", "t", 3).await.unwrap(), 0);
    let back = store.messages_range("r", "t", 1, 3).await.unwrap();
    assert_eq!(
        back.iter().map(|s| s.token_count).collect::<Vec<_>>(),
        stored.iter().map(|s| s.token_count).collect::<Vec<_>>()
    );
    assert_eq!(back[2].message, call("z"));
    assert_eq!(store.message_count("r", "t").await.unwrap(), 3);
}

#[tokio::test]
async fn working_memory_versions_and_conflicts() {
    let store = Store::open_sqlite(temp_db("wm")).await.unwrap();
    assert_eq!(store.working_memory("r").await.unwrap(), None);
    let v1 = store.set_working_memory("r", "one", Some(0)).await.unwrap();
    assert_eq!(v1.version, 1);
    let err = store
        .set_working_memory("r", "x", Some(0))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.downcast_ref(),
            Some(crate::AgentMemoryError::WorkingMemoryConflict {
                expected: 0,
                actual: 1,
                ..
            })
        ),
        "{err}"
    );
    let v2 = store.set_working_memory("r", "two", Some(1)).await.unwrap();
    assert_eq!((v2.version, v2.content.as_str()), (2, "two"));
    assert!(store.set_working_memory("r", "x", Some(1)).await.is_err());
    let v3 = store.set_working_memory("r", "three", None).await.unwrap();
    assert_eq!(v3.version, 3);
    assert_eq!(store.working_memory("r").await.unwrap(), Some(v3));
    assert_eq!(store.working_memory("other").await.unwrap(), None);
}

#[tokio::test]
async fn reopening_migrates_once_and_keeps_data() {
    let path = temp_db("reopen");
    let store = Store::open_sqlite(&path).await.unwrap();
    store
        .append("r", "t", &[Message::human("kept")])
        .await
        .unwrap();
    store.close().await;
    let store = Store::open_sqlite(&path).await.unwrap();
    assert_eq!(
        store.recent("r", "t", 5).await.unwrap()[0].message.text(),
        "kept"
    );
    let t = store.thread("r", "t").await.unwrap().unwrap();
    assert_eq!(t.last_seq, 1);
}

#[tokio::test]
async fn ids_are_checked() {
    let store = Store::open_sqlite(temp_db("ids")).await.unwrap();
    assert!(store.thread("", "t").await.is_err());
    assert!(store.thread("r", "").await.is_err());
    assert!(store.thread("r", &"x".repeat(256)).await.is_err());
    assert!(store.thread("r", "a\0b").await.is_err());
}

/// An append is one command on SQLite: a thread of another resource takes
/// nothing and leaves no transaction open; content comes back byte for byte.
#[tokio::test]
async fn append_is_atomic_and_keeps_content() {
    for durability in [Durability::PowerLoss, Durability::ProcessCrash] {
        let store = Store::open_sqlite_with(temp_db("append"), durability)
            .await
            .unwrap();
        let odd = Message::human("ünïcödé \"quotes\" \\ 1.50e3 \u{1F980}");
        let first = store
            .append("r", "t", &[Message::human("one"), odd.clone()])
            .await
            .unwrap();
        assert_eq!(first.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![1, 2]);
        let err = store
            .append("intruder", "t", &[Message::human("mine now")])
            .await
            .unwrap_err();
        assert!(
            matches!(
                err.downcast_ref(),
                Some(crate::AgentMemoryError::ThreadOwnership { .. })
            ),
            "{err}"
        );
        // The writer is usable: no transaction was left open.
        let next = store
            .append("r", "t", &[Message::ai("three")])
            .await
            .unwrap();
        assert_eq!(next[0].seq, 3);
        let all = store.recent("r", "t", 10).await.unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[1].message, odd);
        assert_eq!(all[1].id, first[1].id);
        store.close().await;
    }
}

/// Token counts no write makes (a database written before imports were
/// checked: a negative count, or counts whose sum overflows) never make a
/// read fail or panic: the sums saturate, and a negative count adds 0.
#[tokio::test]
async fn token_sums_saturate() {
    let store = Store::open_sqlite(temp_db("sums")).await.unwrap();
    let msgs: Vec<Message> = (0..3).map(|i| Message::human(format!("m{i}"))).collect();
    store.append("r", "big", &msgs).await.unwrap();
    store.append("r", "negative", &msgs).await.unwrap();
    let Pools::Sqlite { write, .. } = store.db().pools() else {
        unreachable!("a SQLite store")
    };
    for (thread, tokens) in [("big", i64::MAX), ("negative", -1)] {
        sqlx::query("UPDATE nodekit_am_messages SET token_count = $2 WHERE thread_id = $1")
            .bind(thread)
            .bind(tokens)
            .execute(write)
            .await
            .unwrap();
    }
    assert_eq!(
        store.unobserved_tokens("r", "big", 0).await.unwrap(),
        i64::MAX
    );
    let config = crate::MemoryConfig::default().without_working_memory();
    let big = crate::assemble(&store, &config, "r", "big", None)
        .await
        .unwrap();
    assert_eq!(big.total_tokens, usize::MAX);
    let negative = crate::assemble(&store, &config, "r", "negative", Some("hi"))
        .await
        .unwrap();
    assert_eq!(negative.parts[0].tokens, 0);
    assert_eq!(negative.total_tokens, negative.parts[1].tokens);
}

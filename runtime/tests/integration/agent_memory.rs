//! Agent-memory storage on real databases: SQLite files (also shared by two
//! processes, and written by a process killed with SIGKILL) and the
//! PostgreSQL server started by `scripts/services.sh` (`DATABASE_URL`).
//! Outside CI a missing server skips the PostgreSQL tests with a reason;
//! under `CI=true` it fails them. Every PostgreSQL test works in a schema of
//! its own, dropped at the end.

use nodekit::postgres::Postgres;
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::stores::{Pg, sqlite, temp_db, unique};
use nodekit::Error;
use nodekit::agent_memory::{MemoryConfig, Store, ThreadMemory, assemble};
use nodekit::message::{Message, ToolCall};
use serde_json::json;

fn tool_exchange(id: &str) -> Vec<Message> {
    vec![
        Message {
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "search".into(),
                args: json!({"q": id, "n": 3}),
            }],
            ..Message::ai("")
        },
        Message::tool(format!("result {id}"), id),
    ]
}

// ------------------------------------------------------------ shared bodies

/// 50 concurrent appends of two messages each to one thread: seqs 1..=100,
/// none lost or doubled, each batch contiguous.
async fn concurrent_appends(store: Store) {
    let resource = unique("res");
    let mut tasks = Vec::new();
    for i in 0..50 {
        let (store, resource) = (store.clone(), resource.clone());
        tasks.push(tokio::spawn(async move {
            let batch = [
                Message::human(format!("task {i} a")),
                Message::ai(format!("task {i} b")),
            ];
            store.append(&resource, "shared", &batch).await.unwrap()
        }));
    }
    let mut seqs = Vec::new();
    for t in tasks {
        let stored = t.await.unwrap();
        assert_eq!(stored[1].seq, stored[0].seq + 1, "a batch stays together");
        seqs.extend(stored.iter().map(|s| s.seq));
    }
    seqs.sort();
    assert_eq!(seqs, (1..=100).collect::<Vec<i64>>());
    let all = store
        .messages_range(&resource, "shared", 1, 1000)
        .await
        .unwrap();
    assert_eq!(
        all.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (1..=100).collect::<Vec<i64>>()
    );
    let texts: HashSet<String> = all.iter().map(|m| m.message.text()).collect();
    assert_eq!(texts.len(), 100);
    assert_eq!(store.message_count(&resource, "shared").await.unwrap(), 100);
    assert_eq!(
        store
            .thread(&resource, "shared")
            .await
            .unwrap()
            .unwrap()
            .last_seq,
        100
    );
    assert!(all.iter().all(|m| m.token_count > 0));
}

/// 50 concurrent working-memory updates of one resource: versions 1..=50,
/// each update its own, the last one stored.
async fn concurrent_working_memory(store: Store) {
    let resource = unique("res");
    let mut tasks = Vec::new();
    for i in 0..50 {
        let (store, resource) = (store.clone(), resource.clone());
        tasks.push(tokio::spawn(async move {
            store
                .set_working_memory(&resource, &format!("# update {i}"), None)
                .await
                .unwrap()
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    let mut versions: Vec<i64> = results.iter().map(|w| w.version).collect();
    versions.sort();
    assert_eq!(versions, (1..=50).collect::<Vec<i64>>());
    let last = store.working_memory(&resource).await.unwrap().unwrap();
    assert_eq!(last.version, 50);
    let winner = results.iter().find(|w| w.version == 50).unwrap();
    assert_eq!(last.content, winner.content);
}

/// Every read of `thread` as `resource` finds nothing and creates nothing.
async fn reads_nothing(store: &Store, resource: &str, thread: &str) {
    assert_eq!(store.thread(resource, thread).await.unwrap(), None);
    assert!(store.recent(resource, thread, 20).await.unwrap().is_empty());
    assert!(store.recent(resource, thread, 0).await.unwrap().is_empty());
    assert!(
        store
            .messages_range(resource, thread, 0, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.message_count(resource, thread).await.unwrap(), 0);
    assert_eq!(
        store.unobserved_tokens(resource, thread, 0).await.unwrap(),
        0
    );
    assert_eq!(store.plan(resource, thread).await.unwrap(), None);
    assert!(store.events(resource, thread).await.unwrap().is_empty());
    assert!(
        store
            .observations(resource, thread)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .current_observations(resource, thread)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.observation_marks(resource, thread).await.unwrap(),
        Default::default()
    );
    let recall = nodekit::agent_memory::Recall::new(store.db());
    assert!(
        recall
            .unindexed(resource, thread, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        recall
            .search(resource, thread, &[1.0; 8], 5, &[])
            .await
            .unwrap()
            .is_empty()
    );
    let config = MemoryConfig::default().without_working_memory();
    let context = assemble(store, &config, resource, thread, Some("hi"))
        .await
        .unwrap();
    assert_eq!(context.parts.len(), 1, "only the input: {context:?}");
    ThreadMemory::new(store.clone(), config, resource, thread)
        .await
        .unwrap();
    assert_eq!(store.thread(resource, thread).await.unwrap(), None);
    assert!(
        store
            .threads(resource)
            .await
            .unwrap()
            .iter()
            .all(|t| t.id != thread)
    );
}

/// Two resources: nothing of A's is visible to B, also with guessed ids.
async fn isolation(store: Store) {
    let a = unique("alice");
    let b = unique("bob");
    let ta = unique("thread-a");
    store
        .append(&a, &ta, &[Message::human("alice's secret")])
        .await
        .unwrap();
    store.append(&a, &ta, &tool_exchange("c1")).await.unwrap();
    store
        .set_plan(&a, &ta, json!({"goal": "secret plan"}))
        .await
        .unwrap();
    store
        .record_event(&a, &ta, "tool_call", json!({"x": 1}))
        .await
        .unwrap();
    store
        .add_observation(&a, &ta, 0, "alice observed", 1, 3)
        .await
        .unwrap();
    store
        .set_working_memory(&a, "alice's memory", None)
        .await
        .unwrap();
    let export = store.export_thread(&a, &ta).await.unwrap();

    let owned = |e: Error| {
        assert!(
            matches!(
                e.downcast_ref(),
                Some(nodekit::agent_memory::AgentMemoryError::ThreadOwnership { .. })
            ),
            "expected an ownership error, got {e}"
        );
        assert!(!e.to_string().contains(&a), "the owner leaked: {e}");
    };
    // B's writes to A's thread are refused.
    owned(
        store
            .append(&b, &ta, &[Message::human("intrude")])
            .await
            .unwrap_err(),
    );
    owned(store.append(&b, &ta, &[]).await.unwrap_err());
    owned(store.set_plan(&b, &ta, json!({})).await.unwrap_err());
    owned(
        store
            .record_event(&b, &ta, "x", json!(null))
            .await
            .unwrap_err(),
    );
    owned(
        store
            .add_observation(&b, &ta, 0, "x", 1, 1)
            .await
            .unwrap_err(),
    );
    owned(store.activate_buffered(&b, &ta).await.unwrap_err());
    owned(store.activate_reflection(&b, &ta).await.unwrap_err());
    owned(store.delete_thread(&b, &ta).await.unwrap_err());
    owned(
        store
            .set_thread_info(&b, &ta, Some("x"), json!({}))
            .await
            .unwrap_err(),
    );
    owned(store.import_thread(&b, export.clone()).await.unwrap_err());

    // B's reads of A's thread look like reads of a thread that does not
    // exist: empty, and no error that tells them apart. Nor do B's reads of
    // ids nobody wrote claim them.
    let fresh = unique("fresh");
    for guess in [
        ta.as_str(),
        fresh.as_str(),
        "thread-a",
        "1",
        "%",
        "' OR 1=1 --",
        &ta.to_uppercase(),
    ] {
        reads_nothing(&store, &b, guess).await;
        if guess != ta {
            assert!(!store.delete_thread(&b, guess).await.unwrap());
        }
    }
    let unknown = store.export_thread(&b, &fresh).await.unwrap_err();
    let foreign = store.export_thread(&b, &ta).await.unwrap_err();
    assert_eq!(
        foreign.to_string(),
        unknown.to_string().replace(&fresh, &ta)
    );
    assert!(store.threads(&b).await.unwrap().is_empty());
    assert_eq!(store.working_memory(&b).await.unwrap(), None);
    assert_eq!(store.working_memory("%").await.unwrap(), None);
    // The id B only read is still free for its first writer.
    store
        .append(&a, &fresh, &[Message::human("mine")])
        .await
        .unwrap();
    store.delete_thread(&a, &fresh).await.unwrap();

    // A's data is untouched.
    assert_eq!(store.message_count(&a, &ta).await.unwrap(), 3);
    assert_eq!(store.thread(&a, &ta).await.unwrap().unwrap().last_seq, 3);
    assert_eq!(
        store.plan(&a, &ta).await.unwrap(),
        Some(json!({"goal": "secret plan"}))
    );
    assert_eq!(store.events(&a, &ta).await.unwrap().len(), 1);
    assert_eq!(store.threads(&a).await.unwrap().len(), 1);
    assert_eq!(
        store.working_memory(&a).await.unwrap().unwrap().content,
        "alice's memory"
    );
}

/// A full thread, exported: deleted, imported back, exported again, equal.
async fn export_round_trip(store: Store) -> serde_json::Value {
    let r = unique("res");
    let t = unique("thread");
    let mut msgs = vec![Message::system("be brief"), Message::human("hello ✓")];
    msgs.extend(tool_exchange("call_1"));
    msgs.push(Message::ai("done"));
    store.append(&r, &t, &msgs).await.unwrap();
    store
        .set_thread_info(
            &r,
            &t,
            Some("Title"),
            json!({"iterationLog": [{"attempt": 1}]}),
        )
        .await
        .unwrap();
    store
        .set_plan(
            &r,
            &t,
            json!({"goal": "g", "phase": "build", "iteration": 2, "steps": [{"id": "s1", "status": "done"}]}),
        )
        .await
        .unwrap();
    store
        .add_observation(&r, &t, 0, "User said hello.", 1, 2)
        .await
        .unwrap();
    store
        .record_event(&r, &t, "plan_updated", json!({"phase": "build"}))
        .await
        .unwrap();
    let export = store.export_thread(&r, &t).await.unwrap();
    assert_eq!(export["messages"].as_array().unwrap().len(), 5);

    let err = store.import_thread(&r, export.clone()).await.unwrap_err();
    assert!(err.to_string().contains("exists already"), "{err}");
    assert!(store.delete_thread(&r, &t).await.unwrap());
    assert!(store.threads(&r).await.unwrap().is_empty());
    assert_eq!(store.message_count(&r, &t).await.unwrap(), 0);
    assert_eq!(store.plan(&r, &t).await.unwrap(), None);

    let info = store.import_thread(&r, export.clone()).await.unwrap();
    assert_eq!(info.last_seq, 5);
    assert_eq!(store.export_thread(&r, &t).await.unwrap(), export);
    let back = store.recent(&r, &t, 20).await.unwrap();
    assert_eq!(
        back.iter().map(|m| m.message.clone()).collect::<Vec<_>>(),
        msgs
    );
    // Appends continue after the imported seqs.
    let next = store
        .append(&r, &t, &[Message::human("more")])
        .await
        .unwrap();
    assert_eq!(next[0].seq, 6);
    export
}

/// An export with one bad field is refused whole, naming the field and its
/// record, and nothing of it is kept: every field of the format is checked.
async fn bad_imports_are_refused_whole(store: Store, export: serde_json::Value) {
    let r = unique("importer");
    let t = export["thread"]["id"].as_str().unwrap().to_owned();
    let exporter = export["thread"]["resourceId"].as_str().unwrap();
    assert!(store.delete_thread(exporter, &t).await.unwrap());
    let cases: &[(&str, serde_json::Value, &str)] = &[
        (
            "/messages/1/tokenCount",
            json!(-1),
            "messages[1].tokenCount",
        ),
        (
            "/messages/1/tokenCount",
            json!(1u64 << 40),
            "messages[1].tokenCount",
        ),
        (
            "/messages/1/tokenCount",
            json!("many"),
            "messages[1].tokenCount",
        ),
        ("/messages/0/seq", json!(0), "messages[0].seq"),
        ("/messages/2/seq", json!(2), "messages[2].seq"),
        ("/messages/4/createdAt", json!(-1), "messages[4].createdAt"),
        (
            "/messages/4/createdAt",
            json!(i64::MAX),
            "messages[4].createdAt",
        ),
        (
            "/messages/3/message",
            json!({"type": "nope"}),
            "messages[3].message",
        ),
        ("/thread/lastSeq", json!(-3), "thread.lastSeq"),
        ("/thread/createdAt", json!(-1), "thread.createdAt"),
        ("/thread/updatedAt", json!(1u64 << 60), "thread.updatedAt"),
        ("/thread/title", json!("a\0b"), "thread.title"),
        (
            "/observations/0/tokenCount",
            json!(-7),
            "observations[0].tokenCount",
        ),
        (
            "/observations/0/firstSeq",
            json!(0),
            "observations[0].firstSeq",
        ),
        (
            "/observations/0/lastSeq",
            json!(6),
            "observations[0].lastSeq",
        ),
        (
            "/observations/0/generation",
            json!(-1),
            "observations[0].generation",
        ),
        (
            "/observations/0/createdAt",
            json!(-1),
            "observations[0].createdAt",
        ),
        ("/events/0/createdAt", json!(-1), "events[0].createdAt"),
        ("/events/0/kind", json!("x\0"), "events[0].kind"),
    ];
    for (pointer, value, field) in cases {
        let mut bad = export.clone();
        *bad.pointer_mut(pointer).unwrap() = value.clone();
        let err = store.import_thread(&r, bad).await.unwrap_err().to_string();
        assert!(err.contains(field), "{pointer} = {value}: {err}");
        assert!(err.len() < 600, "{err}");
        assert_eq!(store.thread(&r, &t).await.unwrap(), None, "{pointer}");
    }
    assert!(store.threads(&r).await.unwrap().is_empty());
    // The export itself imports.
    store.import_thread(&r, export).await.unwrap();
    assert_eq!(store.message_count(&r, &t).await.unwrap(), 5);
}

// ------------------------------------------------------------------ SQLite

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_concurrent_appends() {
    concurrent_appends(sqlite("appends").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_concurrent_working_memory() {
    concurrent_working_memory(sqlite("wm").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_isolation() {
    isolation(sqlite("isolation").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_export_round_trip() {
    let store = sqlite("export").await;
    let export = export_round_trip(store.clone()).await;
    bad_imports_are_refused_whole(store, export).await;
}

/// Context assembly in the documented order, with the working-memory and
/// plan tools writing what the next request sees; per-part token counts.
async fn context_and_tools(store: Store) {
    use nodekit::agent_memory::{MemoryConfig, PartKind, assemble, plan, working_memory};
    use nodekit::tool::Tool;
    let config = MemoryConfig::default().last_messages(4).unwrap();
    let (user, thread) = (unique("user"), unique("thread"));

    // A new thread: the template, nothing else.
    let ctx = assemble(&store, &config, &user, &thread, Some("hello"))
        .await
        .unwrap();
    let kinds: Vec<PartKind> = ctx.parts.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [PartKind::WorkingMemory, PartKind::Input]);
    assert!(ctx.parts[0].messages[0].text().contains("- **Name**:"));

    // The tools write working memory (refusing the empty template) and the plan.
    let wm = working_memory::tool(store.clone(), &user, &config.template);
    let refused = wm.call(json!({"memory": config.template})).await.unwrap();
    assert_eq!(refused["success"], false, "{refused}");
    let filled = config.template.replace("- **Name**:", "- **Name**: Ada");
    let saved = wm.call(json!({"memory": filled})).await.unwrap();
    assert_eq!(saved, json!({"success": true, "version": 1}));
    let planner = plan::tool(store.clone(), &user, &thread);
    let saved = planner
        .call(json!({"goal": "Ship wf-1", "currentPhase": "build", "iteration": 1, "steps": [{"title": "Trigger", "status": "done"}]}))
        .await
        .unwrap();
    assert_eq!(saved["success"], true, "{saved}");

    for i in 0..6 {
        store
            .append(
                &user,
                &thread,
                &[
                    Message::human(format!("question {i}")),
                    Message::ai(format!("answer {i}")),
                ],
            )
            .await
            .unwrap();
    }
    let ctx = assemble(&store, &config, &user, &thread, Some("next"))
        .await
        .unwrap();
    let kinds: Vec<PartKind> = ctx.parts.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            PartKind::WorkingMemory,
            PartKind::Plan,
            PartKind::Recent,
            PartKind::Input
        ]
    );
    assert!(ctx.parts[0].messages[0].text().contains("- **Name**: Ada"));
    assert!(
        ctx.parts[1].messages[0]
            .text()
            .contains("1. [done] Trigger")
    );
    let recent: Vec<String> = ctx.parts[2].messages.iter().map(Message::text).collect();
    assert_eq!(recent, ["question 4", "answer 4", "question 5", "answer 5"]);
    assert!(ctx.parts.iter().all(|p| p.tokens > 0));
    assert_eq!(
        ctx.total_tokens,
        ctx.parts.iter().map(|p| p.tokens).sum::<usize>()
    );
    assert_eq!(ctx.messages().len(), 1 + 1 + 4 + 1);

    // Working memory is the user's across threads; a sub-agent runs without it.
    let other = unique("thread");
    let ctx = assemble(&store, &config, &user, &other, None)
        .await
        .unwrap();
    assert!(ctx.parts[0].messages[0].text().contains("Ada"));
    let stateless = config.clone().without_working_memory();
    let ctx = assemble(&store, &stateless, &user, &other, None)
        .await
        .unwrap();
    assert!(ctx.parts.is_empty());
    // Another user sees none of it: the thread reads as an unknown one.
    let stranger = unique("user");
    let unknown = assemble(&store, &config, &stranger, &unique("thread"), None)
        .await
        .unwrap();
    assert!(!unknown.parts[0].messages[0].text().contains("Ada"));
    let theirs = assemble(&store, &config, &stranger, &thread, None)
        .await
        .unwrap();
    assert_eq!(theirs.parts, unknown.parts);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_context_and_tools() {
    context_and_tools(sqlite("context").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_context_and_tools() {
    let Some(pg) = Pg::new().await else { return };
    context_and_tools(pg.store.clone()).await;
    pg.drop().await;
}

// -------------------------------------------------------------- PostgreSQL

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_concurrent_appends() {
    let Some(pg) = Pg::new().await else { return };
    concurrent_appends(pg.store.clone()).await;
    pg.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_concurrent_working_memory() {
    let Some(pg) = Pg::new().await else { return };
    concurrent_working_memory(pg.store.clone()).await;
    pg.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_isolation() {
    let Some(pg) = Pg::new().await else { return };
    isolation(pg.store.clone()).await;
    pg.drop().await;
}

/// The round trip on PostgreSQL, and a SQLite export imported into
/// PostgreSQL exports identically (the two backends agree).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_export_round_trip_and_sqlite_to_postgres() {
    let Some(pg) = Pg::new().await else { return };
    let export = export_round_trip(pg.store.clone()).await;
    bad_imports_are_refused_whole(pg.store.clone(), export).await;
    let from_sqlite = export_round_trip(sqlite("to_pg").await).await;
    let resource = from_sqlite["thread"]["resourceId"]
        .as_str()
        .unwrap()
        .to_owned();
    let thread = from_sqlite["thread"]["id"].as_str().unwrap().to_owned();
    pg.store
        .import_thread(&resource, from_sqlite.clone())
        .await
        .unwrap();
    assert_eq!(
        pg.store.export_thread(&resource, &thread).await.unwrap(),
        from_sqlite
    );
    pg.drop().await;
}

/// Migrating twice (a second process starting) changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_reopen_is_idempotent() {
    let Some(pg) = Pg::new().await else { return };
    let options = pg.options.clone();
    let (one, two) = (
        Postgres::from_options(options.clone()),
        Postgres::from_options(options),
    );
    let (a, b) = tokio::join!(Store::postgres(&one), Store::postgres(&two));
    let (a, b) = (a.unwrap(), b.unwrap());
    a.append("r", "t", &[Message::human("x")]).await.unwrap();
    assert_eq!(b.message_count("r", "t").await.unwrap(), 1);
    a.close().await;
    b.close().await;
    pg.drop().await;
}

// ------------------------------------------------- processes and SIGKILL

const CHILD_DB: &str = "NODEKIT_AM_CHILD_DB";
const CHILD_TAG: &str = "NODEKIT_AM_CHILD_TAG";
const CHILD_COUNT: &str = "NODEKIT_AM_CHILD_COUNT";

/// Not a test on its own: the writer process the tests below start (this
/// binary again, filtered to this function). Appends pairs of messages and
/// prints `ack TAG I SEQ` after each commit, flushed, so the parent knows
/// exactly what was acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durability_child() {
    let Ok(path) = std::env::var(CHILD_DB) else {
        return;
    };
    let tag = std::env::var(CHILD_TAG).unwrap();
    let count: u64 = std::env::var(CHILD_COUNT)
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(u64::MAX);
    let store = Store::open_sqlite(&path).await.unwrap();
    let mut out = std::io::stdout();
    for i in 0..count {
        let batch = [
            Message::human(format!("{tag}-{i}-a")),
            Message::ai(format!("{tag}-{i}-b")),
        ];
        let stored = store.append("proc", "t", &batch).await.unwrap();
        writeln!(out, "ack {tag} {i} {}", stored[1].seq).unwrap();
        out.flush().unwrap();
    }
}

fn spawn_child(path: &std::path::Path, tag: &str, count: Option<u64>) -> std::process::Child {
    // The test's name in this program: its module path without the crate's.
    let child = module_path!().split_once("::").map_or("", |(_, m)| m);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        &format!("{child}::durability_child"),
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_DB, path)
    .env(CHILD_TAG, tag)
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    if let Some(c) = count {
        cmd.env(CHILD_COUNT, c.to_string());
    }
    cmd.spawn().unwrap()
}

/// Reads `ack` lines: (tag, i) -> seq of the second message.
fn read_acks(
    child: &mut std::process::Child,
    stop_after: Option<usize>,
) -> BTreeMap<(String, u64), i64> {
    let mut acks = BTreeMap::new();
    let stdout = child.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        // libtest prints `test durability_child ... ` before the first ack,
        // without a newline.
        let Some(start) = line.find("ack ") else {
            continue;
        };
        let parts: Vec<&str> = line[start..].split_whitespace().collect();
        if let ["ack", tag, i, seq] = parts[..] {
            acks.insert(
                (tag.to_owned(), i.parse().unwrap()),
                seq.parse::<i64>().unwrap(),
            );
            if stop_after.is_some_and(|n| acks.len() >= n) {
                // SIGKILL, mid-stream: the child is writing its next batch.
                child.kill().unwrap();
                break;
            }
        }
    }
    child.wait().unwrap();
    acks
}

/// Checks the file: seqs 1..=n without gaps, every acknowledged pair present
/// at its seqs, no message twice.
async fn check_file(path: &std::path::Path, acks: &BTreeMap<(String, u64), i64>) -> usize {
    let store = Store::open_sqlite(path).await.unwrap();
    let all = store
        .messages_range("proc", "t", 1, i64::MAX)
        .await
        .unwrap();
    let seqs: Vec<i64> = all.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=all.len() as i64).collect::<Vec<_>>(), "no gaps");
    let texts: HashSet<String> = all.iter().map(|m| m.message.text()).collect();
    assert_eq!(texts.len(), all.len(), "no duplicates");
    assert_eq!(all.len() % 2, 0, "batches are atomic");
    for ((tag, i), seq) in acks {
        let b = &all[(*seq - 1) as usize];
        let a = &all[(*seq - 2) as usize];
        assert_eq!(a.message.text(), format!("{tag}-{i}-a"));
        assert_eq!(b.message.text(), format!("{tag}-{i}-b"));
    }
    assert_eq!(
        store.thread("proc", "t").await.unwrap().unwrap().last_seq,
        all.len() as i64
    );
    store.close().await;
    all.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_kill_9_loses_nothing_committed() {
    let path = temp_db("kill9");
    // The schema first, so each child only writes.
    Store::open_sqlite(&path).await.unwrap().close().await;
    let mut acks = BTreeMap::new();
    for round in 0..3 {
        let mut child = spawn_child(&path, &format!("k{round}"), None);
        let got = tokio::task::spawn_blocking(move || read_acks(&mut child, Some(150)))
            .await
            .unwrap();
        assert!(got.len() >= 150);
        acks.extend(got);
        let stored = check_file(&path, &acks).await;
        assert!(stored >= acks.len() * 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_processes_lose_nothing() {
    let path = temp_db("two_procs");
    let mut one = spawn_child(&path, "p1", Some(100));
    let mut two = spawn_child(&path, "p2", Some(100));
    let (a, b) = tokio::join!(
        tokio::task::spawn_blocking(move || read_acks(&mut one, None)),
        tokio::task::spawn_blocking(move || read_acks(&mut two, None)),
    );
    let mut acks = a.unwrap();
    acks.extend(b.unwrap());
    assert_eq!(acks.len(), 200, "both children finished");
    assert_eq!(check_file(&path, &acks).await, 400);
}

/// A database failure under agent memory keeps its cause through `?`:
/// `AgentMemoryError::Store`, then the driver's error, with the kind a
/// caller matches on.
#[tokio::test]
async fn a_driver_error_keeps_its_cause() {
    use nodekit::agent_memory::AgentMemoryError;
    use nodekit::error::{Backend, StoreErrorKind};
    let path = temp_db("cause");
    let store = Store::open_sqlite(&path).await.unwrap();
    // One message per resource: the second append breaks a unique index.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query("CREATE UNIQUE INDEX one_per_resource ON nodekit_am_messages (resource_id)")
        .execute(&pool)
        .await
        .unwrap();
    async fn two(store: &Store) -> nodekit::Result<()> {
        store.append("ada", "t", &[Message::human("one")]).await?;
        store.append("ada", "t", &[Message::human("two")]).await?;
        Ok(())
    }
    let e = two(&store).await.unwrap_err();
    let Some(AgentMemoryError::Store(cause)) = e.downcast_ref() else {
        panic!("expected a database error, got {e:?}")
    };
    assert_eq!(cause.kind(), StoreErrorKind::UniqueViolation, "{e}");
    assert_eq!(cause.backend(), Some(Backend::Sqlite));
    // Error -> StoreError -> sqlx::Error.
    let first = std::error::Error::source(&e).expect("a source");
    assert!(
        first.downcast_ref::<nodekit::error::StoreError>().is_some(),
        "{first:?}"
    );
    let driver = first.source().expect("the driver's error");
    let sqlx::Error::Database(db) = driver.downcast_ref::<sqlx::Error>().expect("sqlx's error")
    else {
        panic!("expected sqlx's database error, got {driver:?}")
    };
    assert!(db.is_unique_violation());
    // Only the first message was stored: the failed append wrote nothing.
    assert_eq!(store.recent("ada", "t", 10).await.unwrap().len(), 1);
    store.close().await;
}

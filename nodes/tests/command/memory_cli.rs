//! `nodekit memory`: threads, the assembled context, export and import, on
//! SQLite files written through the runtime's store.

use std::process::{Command, Output};

use nodekit::agent_memory::Store;
use nodekit::message::Message;
use serde_json::{Value, json};

/// `nodekit memory --db DB ARGS...` with `env` set.
fn memory(db: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nodekit"));
    cmd.args(["memory", "--db", db]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env_remove("DB_TYPE").output().unwrap()
}

fn json_out(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn temp(name: &str) -> String {
    nodekit_test_support::scratch_dir()
        .join(format!(
            "nodekit-memory-cli-{}-{name}.db",
            std::process::id()
        ))
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_context_export_and_import() {
    let (db, copy) = (temp("a"), temp("b"));
    let store = Store::open_sqlite(&db).await.unwrap();
    store
        .append(
            "ada",
            "t1",
            &[
                Message::human("I build Slack workflows"),
                Message::ai("Noted."),
            ],
        )
        .await
        .unwrap();
    store
        .set_working_memory("ada", "# User Context\n- **Name**: Ada\n", None)
        .await
        .unwrap();
    store
        .set_thread_info("ada", "t2", Some("second"), json!({}))
        .await
        .unwrap();
    store.close().await;

    let threads = json_out(&memory(&db, &["threads", "--resource", "ada"], &[]));
    let ids: Vec<&str> = threads
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{threads}");
    assert!(ids.contains(&"t1") && ids.contains(&"t2"));
    let none = json_out(&memory(&db, &["threads", "--resource", "bob"], &[]));
    assert_eq!(none, json!([]));

    let ctx = json_out(&memory(
        &db,
        &[
            "context",
            "--resource",
            "ada",
            "--thread",
            "t1",
            "--input",
            "hi",
        ],
        &[("N8N_INSTANCE_AI_LAST_MESSAGES", "1")],
    ));
    let kinds: Vec<&str> = ctx["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["workingMemory", "recent", "input"], "{ctx}");
    assert_eq!(ctx["parts"][1]["messages"].as_array().unwrap().len(), 1);
    assert!(
        ctx["totalTokens"]
            .as_u64()
            .unwrap_or(ctx["total_tokens"].as_u64().unwrap_or(0))
            > 0
    );

    // Another resource reads nothing of the thread: it looks unknown.
    let theirs = json_out(&memory(
        &db,
        &["context", "--resource", "bob", "--thread", "t1"],
        &[],
    ));
    let unknown = json_out(&memory(
        &db,
        &["context", "--resource", "bob", "--thread", "never-written"],
        &[],
    ));
    assert_eq!(theirs["parts"], unknown["parts"], "{theirs}");
    assert!(!theirs.to_string().contains("Slack"), "{theirs}");

    // Export, import into another file, export again: the same thread.
    let export = memory(&db, &["export", "--resource", "ada", "--thread", "t1"], &[]);
    let exported = json_out(&export);
    let file = temp("export").replace(".db", ".json");
    std::fs::write(&file, &export.stdout).unwrap();
    json_out(&memory(
        &copy,
        &["import", "--resource", "ada", &format!("@{file}")],
        &[],
    ));
    let again = json_out(&memory(
        &copy,
        &["export", "--resource", "ada", "--thread", "t1"],
        &[],
    ));
    assert_eq!(again["messages"], exported["messages"]);

    // A bad setting names its variable.
    let out = memory(
        &db,
        &["threads", "--resource", "ada"],
        &[("N8N_INSTANCE_AI_LAST_MESSAGES", "lots")],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("N8N_INSTANCE_AI_LAST_MESSAGES"));

    for f in [&db, &copy, &file] {
        remove_db(f);
    }
}

/// Reading a context claims nothing: after another resource read a new
/// thread id, its first writer still gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_claims_no_thread() {
    let db = temp("claims");
    Store::open_sqlite(&db).await.unwrap().close().await;
    json_out(&memory(
        &db,
        &["context", "--resource", "bob", "--thread", "fresh"],
        &[],
    ));
    let store = Store::open_sqlite(&db).await.unwrap();
    assert_eq!(store.thread("bob", "fresh").await.unwrap(), None);
    store
        .append("alice", "fresh", &[Message::human("mine")])
        .await
        .unwrap();
    store.close().await;
    remove_db(&db);
}

/// An import with a bad field is refused whole, naming the field and the
/// record; nothing of it is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_import_is_refused_whole() {
    let db = temp("bad-import");
    let store = Store::open_sqlite(&db).await.unwrap();
    store
        .append("ada", "t1", &[Message::human("one"), Message::ai("two")])
        .await
        .unwrap();
    let good = store.export_thread("ada", "t1").await.unwrap();
    store.delete_thread("ada", "t1").await.unwrap();
    store.close().await;
    let mut bad = good.clone();
    bad["messages"][1]["tokenCount"] = json!(-1);
    let file = temp("bad-import").replace(".db", ".json");
    std::fs::write(&file, bad.to_string()).unwrap();
    let out = memory(
        &db,
        &["import", "--resource", "ada", &format!("@{file}")],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("messages[1].tokenCount"), "{err}");
    let store = Store::open_sqlite(&db).await.unwrap();
    assert_eq!(store.thread("ada", "t1").await.unwrap(), None);
    assert!(store.threads("ada").await.unwrap().is_empty());
    store.close().await;

    // The good file imports, and its context sums its tokens.
    std::fs::write(&file, good.to_string()).unwrap();
    json_out(&memory(
        &db,
        &["import", "--resource", "ada", &format!("@{file}")],
        &[],
    ));
    let ctx = json_out(&memory(
        &db,
        &["context", "--resource", "ada", "--thread", "t1"],
        &[],
    ));
    assert!(ctx["totalTokens"].as_u64().unwrap() > 0, "{ctx}");
    remove_db(&db);
    let _ = std::fs::remove_file(&file);
}

fn remove_db(f: &str) {
    let _ = std::fs::remove_file(f);
    let _ = std::fs::remove_file(format!("{f}-wal"));
    let _ = std::fs::remove_file(format!("{f}-shm"));
}

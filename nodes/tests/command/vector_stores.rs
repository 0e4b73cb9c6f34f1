//! The vector store, loader and splitter nodes in workflows (n8n's export
//! format), run by nodekit's runner and by `nodekit run`, `index` and
//! `query`: embeddings from a bag-of-words model served over real HTTP on
//! 127.0.0.1, chat turns from a scripted OpenAI-compatible server.

use std::process::Command;
use std::sync::Arc;

use nodekit::Catalog;
use nodekit::workflow::{RunOptions, Workflow};
use nodekit_test_support::embeddings::{EmbedServer, bag_of_words};
use nodekit_test_support::openai::{Reply, Server};
use nodekit_test_support::unique;
use serde_json::{Value, json};

const DIMS: usize = 256;

fn credentials(embeddings: &str) -> Arc<nodekit::node::Credentials> {
    Arc::new(
        json!({"openAiApi": {"apiKey": "sk-local", "url": embeddings}})
            .as_object()
            .unwrap()
            .clone(),
    )
}

/// A workflow: the trigger, `store` (a vector store node of `mode` with
/// `params`) and its embeddings node; in insert mode, a loader reading the
/// chat input through a 40-character splitter.
fn workflow(store_type: &str, mode: &str, params: Value) -> Workflow {
    let mut parameters = params;
    parameters["mode"] = json!(mode);
    let mut nodes = vec![
        json!({"name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "parameters": {}}),
        json!({"name": "Store", "type": store_type, "parameters": parameters}),
        json!({"name": "Embeddings", "type": "nodekit-nodes.embeddingsOpenAiCompatible", "parameters": {"model": "bow"}}),
    ];
    let mut connections = json!({
        "When chat message received": {"main": [[{"node": "Store", "type": "main", "index": 0}]]},
        "Embeddings": {"ai_embedding": [[{"node": "Store", "type": "ai_embedding", "index": 0}]]},
    });
    if mode == "insert" {
        nodes.push(json!({"name": "Loader", "type": "nodekit-nodes.documentDefaultDataLoader", "parameters": {
            "jsonMode": "expressionData", "jsonData": "={{ $json.chatInput }}", "textSplittingMode": "custom",
            "options": {"metadata": {"metadataValues": [{"name": "topic", "value": "animals"}]}}}}));
        nodes.push(json!({"name": "Splitter", "type": "nodekit-nodes.textSplitterRecursiveCharacterTextSplitter", "parameters": {"chunkSize": 40}}));
        connections["Loader"] =
            json!({"ai_document": [[{"node": "Store", "type": "ai_document", "index": 0}]]});
        connections["Splitter"] = json!({"ai_textSplitter": [[{"node": "Loader", "type": "ai_textSplitter", "index": 0}]]});
    }
    Workflow::from_json(&json!({"nodes": nodes, "connections": connections}).to_string()).unwrap()
}

const TEXT: &str = "Zebras have black and white stripes.\n\nLions hunt on the savanna at night.\nParrots can learn words.";

async fn run(wf: &Workflow, input: &str, embeddings: &str) -> Vec<Value> {
    nodekit_nodes::link();
    let options = RunOptions {
        input: json!({"chatInput": input, "sessionId": "s"}),
        credentials: credentials(embeddings),
        ..RunOptions::default()
    };
    wf.run(Catalog::global(), options).await.unwrap().items
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_then_get_many_in_memory() {
    let server = EmbedServer::start(DIMS).await;
    let key = unique("kb");
    let store = "nodekit-nodes.vectorStoreInMemory";
    let inserted = run(
        &workflow(store, "insert", json!({"memoryKey": key})),
        TEXT,
        &server.base_url,
    )
    .await;
    let texts: Vec<&str> = inserted
        .iter()
        .map(|i| i["pageContent"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "Zebras have black and white stripes.",
            "Lions hunt on the savanna at night.",
            "Parrots can learn words."
        ]
    );
    assert_eq!(
        inserted[1]["metadata"],
        json!({"source": "blob", "blobType": "text/plain", "loc": {"lines": {"from": 3, "to": 3}}, "topic": "animals"})
    );
    // Output keys in n8n's order.
    assert_eq!(
        inserted[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["metadata", "pageContent"]
    );
    let found = run(
        &workflow(
            store,
            "load",
            json!({"memoryKey": key, "prompt": "={{ $json.chatInput }}", "topK": 2}),
        ),
        "which animal has black and white stripes",
        &server.base_url,
    )
    .await;
    assert_eq!(found.len(), 2);
    assert_eq!(
        found[0]["document"]["pageContent"],
        "Zebras have black and white stripes."
    );
    assert_eq!(found[0]["document"]["metadata"]["topic"], "animals");
    let score = found[0]["score"].as_f64().unwrap();
    let expected = {
        let (q, d) = (
            bag_of_words("which animal has black and white stripes", DIMS),
            bag_of_words(TEXT.lines().next().unwrap(), DIMS),
        );
        q.iter().zip(&d).map(|(a, b)| f64::from(a * b)).sum::<f64>()
    };
    assert!((score - expected).abs() < 1e-5, "{score} vs {expected}");
    // Clear Store empties it before an insert.
    let again = run(
        &workflow(
            store,
            "insert",
            json!({"memoryKey": key, "clearStore": true}),
        ),
        "Only parrots now.",
        &server.base_url,
    )
    .await;
    assert_eq!(again.len(), 1);
    let found = run(
        &workflow(
            store,
            "load",
            json!({"memoryKey": key, "prompt": "stripes", "topK": 5}),
        ),
        "x",
        &server.base_url,
    )
    .await;
    assert_eq!(found.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_searches_the_store_as_a_tool() {
    let server = EmbedServer::start(DIMS).await;
    let key = unique("kb");
    let store = "nodekit-nodes.vectorStoreInMemory";
    run(
        &workflow(store, "insert", json!({"memoryKey": key})),
        TEXT,
        &server.base_url,
    )
    .await;
    // The chat model, then the query's embedding, then the answer, all from one scripted server.
    let query_vector = bag_of_words("zebra stripes", DIMS);
    let model = Server::start(vec![
        Reply::json(200, &json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "call_kb", "type": "function", "function": {"name": "Knowledge_Base", "arguments": "{\"input\":\"zebra stripes\"}"}}
            ]}}]})),
        Reply::json(200, &json!({"object": "list", "model": "bow", "data": [{"object": "embedding", "index": 0, "embedding": query_vector}]})),
        Reply::json(200, &json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Zebras are striped."}}]})),
    ])
    .await;
    let wf = Workflow::from_json(
        &json!({
            "nodes": [
                {"name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "parameters": {}},
                {"name": "AI Agent", "type": "nodekit-nodes.agent", "parameters": {}},
                {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "parameters": {"model": "m"}},
                {"name": "Knowledge Base", "type": store, "parameters": {"mode": "retrieve-as-tool", "memoryKey": key, "toolDescription": "Facts about animals.", "topK": 1}},
                {"name": "Embeddings", "type": "nodekit-nodes.embeddingsOpenAiCompatible", "parameters": {"model": "bow"}}
            ],
            "connections": {
                "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
                "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
                "Knowledge Base": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
                "Embeddings": {"ai_embedding": [[{"node": "Knowledge Base", "type": "ai_embedding", "index": 0}]]}
            }
        })
        .to_string(),
    )
    .unwrap();
    let items = run(&wf, "What has stripes?", &model.base_url).await;
    assert_eq!(items[0]["output"], "Zebras are striped.");
    let seen = model.seen();
    let tool = &seen[0].body["tools"][0]["function"];
    assert_eq!(tool["name"], "Knowledge_Base");
    assert_eq!(tool["description"], "Facts about animals.");
    assert_eq!(tool["parameters"]["required"], json!(["input"]));
    assert_eq!(seen[1].path, "/v1/embeddings");
    let result = &seen[2].tool_results()[0];
    let text = result[0]["text"].as_str().unwrap();
    let doc: Value = serde_json::from_str(text).unwrap();
    assert_eq!(doc["pageContent"], "Zebras have black and white stripes.");
    assert_eq!(doc["metadata"]["topic"], "animals");
    assert!(doc["id"].is_string());
}

/// `nodekit run` with the PGVector node: documents inserted by one run are
/// found by the next; with `NODEKIT_PGVECTOR_IN_PROCESS_INDEX=true` the
/// store puts its version trigger on the table (the in-process index is
/// on), without it the table is left as n8n made it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_store_across_processes_and_its_in_process_index() {
    let Some(url) = nodekit_test_support::server("PGVECTOR_DATABASE_URL") else {
        return;
    };
    let server = EmbedServer::start(DIMS).await;
    let dir = nodekit_test_support::scratch_dir().join(unique("nodekit_pgvs_cli"));
    std::fs::create_dir_all(&dir).unwrap();
    let creds = dir.join("credentials.json");
    std::fs::write(
        &creds,
        json!({
            "openAiApi": {"apiKey": "sk-local", "url": server.base_url},
            "postgres": nodekit_test_support::postgres_credential(&url),
        })
        .to_string(),
    )
    .unwrap();
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    let has_trigger = async |table: &str| -> bool {
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = 'nodekit_vector_version')",
        )
        .bind(table)
        .fetch_one(&admin)
        .await
        .unwrap()
    };
    for indexed in [false, true] {
        let table = unique("nk_pgvs");
        for (mode, params, message) in [
            ("insert", json!({"tableName": table}), TEXT),
            (
                "load",
                json!({"tableName": table, "prompt": "={{ $json.chatInput }}", "topK": 1}),
                "lions at night",
            ),
        ] {
            let path = dir.join(format!("{table}-{mode}.json"));
            let wf = workflow("nodekit-nodes.vectorStorePGVector", mode, params);
            let text = json!({
                "nodes": wf.nodes.iter().map(|n| json!({
                    "name": n.name, "type": n.node_type, "typeVersion": n.type_version, "parameters": n.parameters
                })).collect::<Vec<_>>(),
                "connections": wf.connections,
            });
            std::fs::write(&path, text.to_string()).unwrap();
            let mut command = Command::new(env!("CARGO_BIN_EXE_nodekit"));
            command
                .args(["run", path.to_str().unwrap(), "--message", message])
                .args(["--credentials", creds.to_str().unwrap()])
                .env_remove("NODEKIT_PGVECTOR_IN_PROCESS_INDEX");
            if indexed {
                command.env("NODEKIT_PGVECTOR_IN_PROCESS_INDEX", "true");
            }
            let out = command.output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            if mode == "load" {
                assert!(
                    stdout.contains("Lions hunt on the savanna at night."),
                    "{stdout}"
                );
            }
        }
        assert_eq!(has_trigger(&table).await, indexed, "{table}");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
            .execute(&admin)
            .await
            .unwrap();
    }
    admin.close().await;
}

/// SQLite keeps documents between runs of `nodekit run`, and `index` and
/// `query` fill and search the same kind of file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_across_processes_and_the_index_command() {
    let server = EmbedServer::start(DIMS).await;
    let dir = nodekit_test_support::scratch_dir().join(unique("nodekit_vs_cli"));
    std::fs::create_dir_all(dir.join("notes/deep")).unwrap();
    let db = dir.join("vectors.db");
    let creds = dir.join("credentials.json");
    std::fs::write(
        &creds,
        json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}, "sqlite": {"databasePath": db}}).to_string(),
    )
    .unwrap();
    let nodekit = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_nodekit"))
            .args(args)
            .args(["--credentials", creds.to_str().unwrap()])
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Two runs of a workflow: insert, then get many.
    let store = "nodekit-nodes.vectorStoreSqlite";
    for (mode, params, message) in [
        ("insert", json!({"collection": "kb"}), TEXT),
        (
            "load",
            json!({"collection": "kb", "prompt": "={{ $json.chatInput }}", "topK": 1}),
            "lions at night",
        ),
    ] {
        let path = dir.join(format!("{mode}.json"));
        let wf = workflow(store, mode, params);
        let mut text = json!({"nodes": [], "connections": {}});
        // The workflow as n8n exports it (name, nodes with credentials, connections).
        text["nodes"] = serde_json::to_value(wf.nodes.iter().map(|n| json!({
            "name": n.name, "type": n.node_type, "typeVersion": n.type_version, "parameters": n.parameters
        })).collect::<Vec<_>>()).unwrap();
        text["connections"] = Value::Object(wf.connections.clone());
        std::fs::write(&path, text.to_string()).unwrap();
        let (ok, stdout, stderr) = nodekit(&["run", path.to_str().unwrap(), "--message", message]);
        assert!(ok, "{stderr}");
        if mode == "load" {
            let items: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
            assert!(
                stdout.contains("Lions hunt on the savanna at night."),
                "{stdout} {items}"
            );
        }
    }
    // `index` a folder: Markdown and text, nested; a non-UTF-8 file is named and skipped.
    std::fs::write(
        dir.join("notes/zebra.md"),
        "# Zebras\n\nZebras have stripes.\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes/deep/parrot.txt"), "Parrots talk.").unwrap();
    std::fs::write(dir.join("notes/empty.md"), "").unwrap();
    std::fs::write(dir.join("notes/latin1.txt"), b"caf\xe9").unwrap();
    std::fs::write(dir.join("notes/image.png"), b"\x89PNG").unwrap();
    let store_arg = format!("sqlite:{}", db.display());
    let (ok, stdout, stderr) = nodekit(&[
        "index",
        dir.join("notes").to_str().unwrap(),
        "--store",
        &store_arg,
        "--model",
        "bow",
    ]);
    assert!(
        !ok,
        "a file could not be read: the command fails after indexing the others"
    );
    assert!(
        stderr.contains("latin1.txt is not UTF-8 text (byte 3)"),
        "{stderr}"
    );
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["files"], 4);
    assert_eq!(summary["indexed"], 2);
    assert_eq!(summary["empty"], 1);
    assert_eq!(summary["failed"], json!(["latin1.txt"]));
    let (ok, stdout, stderr) = nodekit(&[
        "query",
        "zebra stripes",
        "--store",
        &store_arg,
        "--model",
        "bow",
        "-k",
        "1",
    ]);
    assert!(ok, "{stderr}");
    let found: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(found[0]["document"]["metadata"]["source"], "zebra.md");
    assert_eq!(
        found[0]["document"]["metadata"]["loc"]["lines"],
        json!({"from": 1, "to": 3})
    );
    // Indexing again replaces a file's chunks instead of adding them twice.
    nodekit(&[
        "index",
        dir.join("notes").to_str().unwrap(),
        "--store",
        &store_arg,
        "--model",
        "bow",
    ]);
    let (_, stdout, _) = nodekit(&[
        "query",
        "parrots talk",
        "--store",
        &store_arg,
        "--model",
        "bow",
        "-k",
        "10",
        "--filter",
        "{\"source\": \"deep/parrot.txt\"}",
    ]);
    let found: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1);
    // A filter on a key no document has is named.
    let (ok, _, stderr) = nodekit(&[
        "query",
        "x",
        "--store",
        &store_arg,
        "--model",
        "bow",
        "--filter",
        "{\"sorce\": \"a\"}",
    ]);
    assert!(
        !ok && stderr.contains("`sorce`, which no document has"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `index` warns, before splitting, when the overlap is more than half the
/// chunk size: on text without separators each chunk then moves on by
/// `size - overlap` characters, and the warning says how many chunks that
/// makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_warns_when_the_overlap_is_more_than_half_the_chunk_size() {
    let server = EmbedServer::start(DIMS).await;
    let dir = nodekit_test_support::scratch_dir().join(unique("nodekit_vs_overlap"));
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    std::fs::write(dir.join("notes/line.txt"), "x".repeat(3000)).unwrap();
    let store = format!("sqlite:{}", dir.join("vectors.db").display());
    let credentials = json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}});
    let index = |size: &str, overlap: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_nodekit"))
            .args(["index", dir.join("notes").to_str().unwrap()])
            .args(["--store", &store, "--model", "bow"])
            .args(["--chunk-size", size, "--chunk-overlap", overlap])
            .env("NODEKIT_CREDENTIALS", credentials.to_string())
            .env_remove("NODEKIT_CREDENTIALS_FILE")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        (summary["chunks"].as_u64().unwrap(), stderr)
    };
    // Chunks start 40 characters apart: ceil((3000 - 60) / 40).
    let (chunks, stderr) = index("100", "60");
    assert_eq!(chunks, 74);
    assert!(
        stderr.contains("warning: --chunk-overlap 60 is more than half of --chunk-size 100")
            && stderr.contains("about 74 chunks (an estimate)"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("warning").count(), 1, "{stderr}");
    let (chunks, stderr) = index("100", "50");
    assert_eq!(chunks, 59);
    assert!(!stderr.contains("warning"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Executions of a PGVector node that share their owner's pools (the n8n
/// bridge's, `nodekit serve`'s) share one connection pool: many at once
/// stay within the pool's connections, and the table is checked once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_executions_share_one_pool() {
    let Some(url) = nodekit_test_support::server("PGVECTOR_DATABASE_URL") else {
        return;
    };
    nodekit_nodes::link();
    let server = EmbedServer::start(DIMS).await;
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    // A login that may hold as many connections as one shared pool opens.
    let role = unique("nk_pool");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'pw' CONNECTION LIMIT {limit};
         CREATE SCHEMA {role} AUTHORIZATION {role};",
        limit = nodekit::postgres::POOL_SIZE
    )))
    .execute(&admin)
    .await
    .unwrap();
    let mut postgres = nodekit_test_support::postgres_credential(&url);
    postgres["user"] = json!(role);
    postgres["password"] = json!("pw");
    let credentials = Arc::new(
        json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}, "postgres": postgres})
            .as_object()
            .unwrap()
            .clone(),
    );
    let pools = nodekit::node::SharedPools::default();
    let run = |mode: &str, params: Value, message: &str| {
        let wf = workflow("nodekit-nodes.vectorStorePGVector", mode, params);
        let options = RunOptions {
            input: json!({"chatInput": message, "sessionId": "s"}),
            credentials: credentials.clone(),
            pools: pools.clone(),
            ..RunOptions::default()
        };
        async move { wf.run(Catalog::global(), options).await }
    };
    let table = json!({"tableName": "docs"});
    run("insert", table.clone(), TEXT).await.unwrap();
    let load = json!({"tableName": "docs", "prompt": "={{ $json.chatInput }}", "topK": 1});
    let runs: Vec<_> = (0..24)
        .map(|_| tokio::spawn(run("load", load.clone(), "lions at night")))
        .collect();
    for run in runs {
        let items = run.await.unwrap().unwrap().items;
        assert!(
            items[0]
                .to_string()
                .contains("Lions hunt on the savanna at night."),
            "{items:?}"
        );
    }
    drop(pools);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}';
         DROP SCHEMA {role} CASCADE; DROP ROLE {role};"
    )))
    .execute(&admin)
    .await
    .unwrap();
    admin.close().await;
}

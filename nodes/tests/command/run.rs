//! `nodekit run` and `nodekit chat` end to end: a workflow with an agent,
//! memory and two tools, against a scripted OpenAI-compatible server.

use nodekit_test_support::openai as support;

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::{Reply, Server};

const WORKFLOW: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/workflows/agent-with-tools.json"
);

fn nodekit(args: Vec<String>, base_url: &str, stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(args)
        .env(
            "NODEKIT_CREDENTIALS",
            json!({"openAiApi": {"apiKey": "sk-local", "url": base_url}}).to_string(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn tool_turn(url: &str) -> Reply {
    Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_think", "type": "function", "function": {"name": "Think", "arguments": "{\"thought\":\"need the number\"}"}}
        ]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [
            {"index": 1, "id": "call_fetch", "type": "function", "function": {"name": "Fetch", "arguments": format!("{{\"url\":\"{url}\"}}")}}
        ]}, "finish_reason": "tool_calls"}]}),
    ])
}

fn text_turn(text: &str) -> Reply {
    Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant", "content": &text[..3]}}]}),
        json!({"choices": [{"delta": {"content": &text[3..]}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}}),
    ])
}

/// `nodekit run <WORKFLOW> --message <message> --log` against the scripted
/// server at `base`: its standard output and error, once it succeeded.
async fn run_logged(base: &str, message: &str) -> (String, String) {
    let args = vec![
        "run".into(),
        WORKFLOW.into(),
        "--message".into(),
        message.into(),
        "--log".into(),
    ];
    let base = base.to_owned();
    let out = tokio::task::spawn_blocking(move || nodekit(args, &base, ""))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "stderr: {stderr}");
    (stdout, stderr)
}

/// The run log `--log` writes to standard error after the tool lines.
fn run_log_of(stderr: &str) -> Value {
    let start = if stderr.starts_with("{\n") {
        0
    } else {
        stderr.find("\n{\n").expect("a run log") + 1
    };
    serde_json::from_str(&stderr[start..]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_a_workflow_with_memory_and_two_tools() {
    // Replies in arrival order: model (two tool calls), the Fetch tool's GET, model (answer).
    let server = Server::start_with(|base| {
        vec![
            tool_turn(&format!("{base}/data")),
            Reply::raw(200, "text/plain", b"the number is 42"),
            text_turn("It is 42."),
        ]
    })
    .await;
    let (stdout, stderr) = run_logged(&server.base_url, "What is the number?").await;
    assert_eq!(
        stdout, "It is 42.\n",
        "the answer alone, ended by a newline"
    );
    let log = run_log_of(&stderr);
    assert!(
        stderr.contains("[tool Think {\"thought\":\"need the number\"}]"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[tool Fetch answered: the number is 42]"),
        "{stderr}"
    );

    // What the model was sent.
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let first = &seen[0].body;
    assert_eq!(first["model"], "gpt-4o-mini");
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "You are terse. Use the tools."})
    );
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "What is the number?"})
    );
    let tool_names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tool_names, ["Think", "Fetch"]);
    assert_eq!(
        first["tools"][1]["function"]["parameters"]["required"],
        json!(["url"])
    );
    assert_eq!(seen[1].path, "/v1/data");
    let last = seen[2].body["messages"].as_array().unwrap();
    assert_eq!(
        last[3],
        json!({"role": "tool", "content": "need the number", "tool_call_id": "call_think"})
    );
    assert_eq!(last[4]["content"], "the number is 42");

    // The run log: every call, by node.
    let actions = |node: &str| -> Vec<String> {
        log[node]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["action"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(actions("Chat Model"), ["stream", "stream"]);
    assert_eq!(actions("Memory"), ["loadMemory", "saveMemory"]);
    assert_eq!(actions("Think"), ["tool"]);
    assert_eq!(actions("Fetch"), ["tool"]);
    assert_eq!(
        log["Chat Model"][1]["data"]["tokenUsage"]["totalTokens"],
        24
    );
    assert_eq!(
        log["Memory"][1]["inputOverride"]["json"],
        json!({"input": "What is the number?", "output": "It is 42."})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_answer_finishes_the_run_with_an_empty_output_and_a_warning() {
    // A stream that stops with empty deltas: no text, no tool calls.
    let server = Server::start(vec![Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant"}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
    ])])
    .await;
    let (stdout, stderr) = run_logged(&server.base_url, "Say nothing").await;
    let (answer, _) = stdout.split_once('\n').unwrap();
    let log = run_log_of(&stderr);
    assert_eq!(answer, "");
    let agent = log["AI Agent"].as_array().unwrap();
    assert_eq!(agent.len(), 1, "{log}");
    assert_eq!(agent[0]["action"], "warning");
    assert_eq!(
        agent[0]["data"]["json"]["warning"],
        nodekit::agent::EMPTY_ANSWER
    );
}

/// A reader that goes away (`nodekit run ... | head -c 10`) ends the run
/// quietly with 141 (128 + SIGPIPE), as other command-line programs do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_goes_away_ends_the_run_quietly() {
    // Far more than a pipe holds (64 KiB): the answer is still streaming when the reader leaves.
    let piece = "x".repeat(8192);
    let mut deltas: Vec<Value> = (0..64)
        .map(|_| json!({"choices": [{"delta": {"content": piece}}]}))
        .collect();
    deltas.push(json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}));
    let server = Server::start(vec![Reply::sse(&deltas)]).await;
    let credentials =
        json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}}).to_string();
    let (head, out) = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nodekit"))
            .args(["run", WORKFLOW, "--message", "Write a lot"])
            .env("NODEKIT_CREDENTIALS", credentials)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 10];
        // The pipe's reading end closes when this statement ends.
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        (head, child.wait_with_output().unwrap())
    })
    .await
    .unwrap();
    assert_eq!(&head, b"xxxxxxxxxx");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_remembers_the_conversation() {
    let server = Server::start(vec![text_turn("Hi Ada."), text_turn("You are Ada.")]).await;
    let base = server.base_url.clone();
    let args = vec![
        "chat".into(),
        WORKFLOW.into(),
        "--session".into(),
        "s1".into(),
    ];
    let out = tokio::task::spawn_blocking(move || nodekit(args, &base, "I am Ada\nWho am I?\n"))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Hi Ada.\nYou are Ada.\n"
    );
    let second = &server.seen()[1].body["messages"];
    assert_eq!(second[1], json!({"role": "user", "content": "I am Ada"}));
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": "Hi Ada."})
    );
    assert_eq!(second[3], json!({"role": "user", "content": "Who am I?"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_clear_errors() {
    // The model server refuses the key.
    let server = Server::start(vec![Reply::json(
        401,
        &json!({"error": {"message": "bad key"}}),
    )])
    .await;
    let base = server.base_url.clone();
    let out = tokio::task::spawn_blocking(move || {
        nodekit(
            vec![
                "run".into(),
                WORKFLOW.into(),
                "--message".into(),
                "hi".into(),
            ],
            &base,
            "",
        )
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("model call failed: the API key was refused (HTTP 401): bad key"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-local"));

    // A workflow that is not one.
    let out = nodekit(
        vec![
            "run".into(),
            "/nonexistent.json".into(),
            "--message".into(),
            "hi".into(),
        ],
        "http://127.0.0.1:9",
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("nodekit: cannot read workflow /nonexistent.json")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embeddings_node_supplies_a_logged_embedder() {
    use nodekit::node::Supply;
    use nodekit::node::SupplyContext;
    use nodekit::run_log::RunLog;
    nodekit_nodes::link();
    let server = Server::start(vec![Reply::json(
        200,
        &json!({"data": [{"index": 0, "embedding": [0.5, 0.25]}]}),
    )])
    .await;
    let entry = nodekit::Catalog::global()
        .find("embeddingsOpenAiCompatible")
        .unwrap();
    let supply = entry.runtime.supply.expect("the embeddings node supplies");
    let log = RunLog::new();
    let mut credentials = serde_json::Map::new();
    credentials.insert(
        "openAiApi".into(),
        json!({"apiKey": "sk-e", "url": server.base_url}),
    );
    let ctx = SupplyContext::new(
        "Embeddings",
        std::sync::Arc::new(credentials),
        json!({}),
        log.clone(),
    );
    let params = json!({"model": "nomic-embed-text", "options": {"dimensions": 2}});
    let Supply::Embedder(embedder) = ctx.supply(supply, params).await.unwrap() else {
        panic!("expected an embedder")
    };
    assert_eq!(
        embedder.embed(&["hello".into()]).await.unwrap(),
        [vec![0.5, 0.25]]
    );
    assert_eq!(server.seen()[0].body["dimensions"], 2);
    assert_eq!(server.seen()[0].body["model"], "nomic-embed-text");
    assert_eq!(log.entries()[0].action, "embed");
}

/// A workflow with an agent, a chat model and the given memory node.
fn memory_workflow(memory_type: &str, memory_params: Value) -> String {
    json!({
        "nodes": [
            {"name": "Trigger", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "parameters": {}},
            {"name": "AI Agent", "type": "nodekit-nodes.agent", "parameters": {}},
            {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "parameters": {"model": "m"}},
            {"name": "Memory", "type": memory_type, "parameters": memory_params}
        ],
        "connections": {
            "Trigger": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Memory": {"ai_memory": [[{"node": "AI Agent", "type": "ai_memory", "index": 0}]]}
        }
    })
    .to_string()
}

/// Two separate `nodekit run` processes: the second sees the first exchange.
async fn memory_survives_processes(memory_type: &str, memory_params: Value, credentials: Value) {
    let server = Server::start(vec![text_turn("Hi Ada."), text_turn("You are Ada.")]).await;
    let dir = nodekit_test_support::scratch_dir().join(format!(
        "nodekit-memory-{}-{}",
        memory_type.replace('.', "-"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let workflow = dir.join("workflow.json");
    std::fs::write(&workflow, memory_workflow(memory_type, memory_params)).unwrap();
    let session = format!("s-{}-{}", std::process::id(), memory_type.len());
    let mut creds = credentials;
    creds["openAiApi"] = json!({"apiKey": "sk", "url": server.base_url});
    for message in ["I am Ada", "Who am I?"] {
        let (w, c, s, d) = (
            workflow.clone(),
            creds.to_string(),
            session.clone(),
            dir.clone(),
        );
        let out = tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_nodekit"))
                .args([
                    "run",
                    w.to_str().unwrap(),
                    "--message",
                    message,
                    "--session",
                    &s,
                ])
                .env("NODEKIT_CREDENTIALS", c)
                .current_dir(d)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let second = &server.seen()[1].body["messages"];
    assert_eq!(
        second[1],
        json!({"role": "user", "content": "I am Ada"}),
        "{memory_type}"
    );
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": "Hi Ada."}),
        "{memory_type}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_memory_persists_across_runs() {
    memory_survives_processes(
        "nodekit-nodes.memorySqliteChat",
        json!({"databasePath": "chat.db"}),
        json!({}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_memory_persists_across_runs() {
    let Some(url) = nodekit_test_support::server("DATABASE_URL") else {
        return;
    };
    let creds = json!({"postgres": nodekit_test_support::postgres_credential(&url)});
    memory_survives_processes(
        "nodekit-nodes.memoryPostgresChat",
        json!({"tableName": format!("e2e_{}", std::process::id())}),
        creds,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_memory_persists_across_runs() {
    let Some(url) = nodekit_test_support::server("REDIS_URL") else {
        return;
    };
    let rest = url.trim_start_matches("redis://");
    let (host, port) = rest.split_once(':').unwrap();
    let creds = json!({"redis": {"host": host, "port": port.trim_end_matches('/').parse::<u16>().unwrap()}});
    memory_survives_processes(
        "nodekit-nodes.memoryRedisChat",
        json!({"sessionTTL": 600}),
        creds,
    )
    .await;
}

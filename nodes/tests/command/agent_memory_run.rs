//! The Agent Memory node in a workflow run by `nodekit run`: the agent gets
//! the memory's tools, working memory written in one conversation reaches
//! the model in the next, and each thread keeps its own messages.

use nodekit_test_support::openai as support;

use std::process::Command;

use serde_json::{Value, json};
use support::{Reply, Server};

fn workflow(db: &str) -> Value {
    json!({
        "name": "Agent with agent memory",
        "nodes": [
            {"name": "Chat", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "typeVersion": 1.1, "parameters": {}},
            {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
            {"name": "Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1, "parameters": {"model": "gpt-4o-mini"}},
            {"name": "Memory", "type": "nodekit-nodes.memoryAgent", "typeVersion": 1, "parameters": {"resourceId": "ada", "databasePath": db}}
        ],
        "connections": {
            "Chat": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Memory": {"ai_memory": [[{"node": "AI Agent", "type": "ai_memory", "index": 0}]]}
        }
    })
}

fn text(t: &str) -> Reply {
    Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant", "content": t}, "finish_reason": "stop"}]}),
    ])
}

fn run(path: &str, base: &str, session: &str, message: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(["run", path, "--message", message, "--session", session])
        .env(
            "NODEKIT_CREDENTIALS",
            json!({"openAiApi": {"apiKey": "sk-local", "url": base}}).to_string(),
        )
        .env_remove("DB_TYPE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn working_memory_carries_across_threads() {
    let dir = nodekit_test_support::scratch_dir()
        .join(format!("nodekit-agent-memory-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("memory.db").to_string_lossy().into_owned();
    let path = dir.join("workflow.json").to_string_lossy().into_owned();
    std::fs::write(&path, workflow(&db).to_string()).unwrap();

    let memory =
        nodekit::agent_memory::config::DEFAULT_TEMPLATE.replace("- **Name**:", "- **Name**: Ada");
    let server = Server::start(vec![
        Reply::sse(&[json!({"choices": [{"delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_wm", "type": "function", "function": {"name": "updateWorkingMemory", "arguments": json!({"memory": memory}).to_string()}}
        ]}, "finish_reason": "tool_calls"}]})]),
        text("Nice to meet you, Ada."),
        text("Welcome back, Ada."),
    ])
    .await;
    let base = server.base_url.clone();
    let (p, b) = (path.clone(), base.clone());
    tokio::task::spawn_blocking(move || run(&p, &b, "thread-1", "I am Ada"))
        .await
        .unwrap();
    tokio::task::spawn_blocking(move || run(&path, &base, "thread-2", "Who am I?"))
        .await
        .unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let tools: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["updateWorkingMemory", "updatePlan"]);
    // The tool's answer went back to the model.
    let after_tool = seen[1].body["messages"].as_array().unwrap();
    assert!(
        after_tool.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("\"success\":true")
    );
    // A new thread: the working memory is there, the other thread's messages are not.
    let next = seen[2].body["messages"].as_array().unwrap();
    // After the agent's own system message, the working memory.
    assert_eq!(next[1]["role"], "system");
    let system = next[1]["content"].as_str().unwrap();
    assert!(system.contains("- **Name**: Ada"), "{system}");
    assert!(!next.iter().any(|m| m["content"] == "I am Ada"), "{next:?}");
    assert_eq!(next.last().unwrap()["content"], "Who am I?");
    // The first thread keeps the whole turn: the tool call and its result too.
    let store = nodekit::agent_memory::Store::open_sqlite(&db)
        .await
        .unwrap();
    let turn = store
        .messages_range("ada", "thread-1", 1, 100)
        .await
        .unwrap();
    let shape: Vec<(String, Option<String>)> = turn
        .iter()
        .map(|m| {
            let role = serde_json::to_value(m.message.role).unwrap();
            let call = m.message.tool_calls.first().map(|c| c.id.clone());
            (
                role.as_str().unwrap().to_owned(),
                call.or(m.message.tool_call_id.clone()),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("human".to_owned(), None),
            ("ai".to_owned(), Some("call_wm".to_owned())),
            ("tool".to_owned(), Some("call_wm".to_owned())),
            ("ai".to_owned(), None),
        ],
        "{turn:?}"
    );
    assert_eq!(turn[3].message.text(), "Nice to meet you, Ada.");
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

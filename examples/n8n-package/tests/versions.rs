//! A node whose parameters differ by version gets them at its own
//! `typeVersion`, once, on every path: `tool-call`, the bridge and `run`
//! (an agent calling the tool, against a scripted OpenAI-compatible server
//! on 127.0.0.1). Version 1 of `textPreviewTool` keeps 12 characters,
//! version 2 keeps 2 words.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

const PROGRAM: &str = env!("CARGO_BIN_EXE_n8n-package");
const TEXT: &str = "alpha beta gamma delta";

fn tool_call(version: Option<&str>) -> Value {
    let mut cmd = Command::new(PROGRAM);
    cmd.args(["tool-call", "textPreviewTool", "--args"])
        .arg(json!({"text": TEXT}).to_string());
    if let Some(v) = version {
        cmd.args(["--node-version", v]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn tool_call_prepares_parameters_at_the_given_version() {
    assert_eq!(
        tool_call(Some("1")),
        json!({"preview": "alpha beta g", "typeVersion": 1.0})
    );
    assert_eq!(
        tool_call(Some("2")),
        json!({"preview": "alpha beta", "typeVersion": 2.0})
    );
    // Without a version: the version a new node gets, the newest.
    assert_eq!(
        tool_call(None),
        json!({"preview": "alpha beta", "typeVersion": 2.0})
    );
}

#[test]
fn the_bridge_prepares_parameters_at_the_requests_type_version() {
    let mut child = Command::new(PROGRAM)
        .arg("bridge")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |id: u64, version: Value| {
        let mut request = json!({
            "id": id, "op": "toolCall", "node": "n8n-nodes-text.textPreviewTool",
            "nodeName": "Preview", "parameters": {"text": "={{ $fromAI('text') }}"},
            "input": {"text": TEXT},
        });
        if !version.is_null() {
            request["typeVersion"] = version;
        }
        writeln!(stdin, "{request}").unwrap();
        let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer["result"].clone()
    };
    assert_eq!(
        ask(1, json!(1)),
        json!({"preview": "alpha beta g", "typeVersion": 1.0})
    );
    assert_eq!(
        ask(2, json!(2)),
        json!({"preview": "alpha beta", "typeVersion": 2.0})
    );
    // Same parameters, another version: not the cached tool of the first request.
    assert_eq!(
        ask(3, json!(1)),
        json!({"preview": "alpha beta g", "typeVersion": 1.0})
    );
    assert_eq!(
        ask(4, Value::Null),
        json!({"preview": "alpha beta", "typeVersion": 2.0})
    );
    drop(stdin);
    child.wait().unwrap();
}

fn workflow(version: u32) -> String {
    json!({
        "name": "Preview",
        "nodes": [
            {"name": "Chat", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "typeVersion": 1.1, "parameters": {}},
            {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
            {"name": "Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1, "parameters": {"model": "m"}},
            {"name": "Preview", "type": "n8n-nodes-text.textPreviewTool", "typeVersion": version, "parameters": {}}
        ],
        "connections": {
            "Chat": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Preview": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]}
        }
    })
    .to_string()
}

fn replies() -> Vec<Reply> {
    vec![
        Reply::json(
            200,
            &json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "Preview", "arguments": json!({"text": TEXT}).to_string()}}
            ]}, "finish_reason": "tool_calls"}]}),
        ),
        Reply::json(
            200,
            &json!({"choices": [{"message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_prepares_a_tool_nodes_parameters_at_its_type_version() {
    for (version, preview) in [(1, "alpha beta g"), (2, "alpha beta")] {
        let server = Server::start(replies()).await;
        let dir =
            nodekit_test_support::scratch_dir().join(nodekit_test_support::unique("versions-run"));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("workflow.json");
        std::fs::write(&file, workflow(version)).unwrap();
        let credentials = json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}});
        let out = tokio::task::spawn_blocking(move || {
            Command::new(PROGRAM)
                .arg("run")
                .arg(&file)
                .args(["--message", "preview it"])
                .env("NODEKIT_CREDENTIALS", credentials.to_string())
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");
        // What the tool answered, as the model got it on its second call.
        assert_eq!(
            server.seen()[1].tool_results(),
            [json!({"preview": preview, "typeVersion": f64::from(version)})],
            "version {version}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

//! The example server as an MCP client starts it: a child process spoken
//! to in JSON-RPC lines over its standard input and output.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_lists_and_calls_the_tool() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "example-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "convert_temperature", "arguments": {"value": 100, "unit": "C"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "convert_temperature", "arguments": {"value": -500, "unit": "F"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "convert_temperature", "arguments": {"value": 1, "unit": "K"}}}),
    ];
    for message in &messages {
        input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut answers = Vec::new();
    while answers.len() < 5 {
        let line = tokio::time::timeout(Duration::from_secs(30), output.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the server keeps its output open");
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer.get("id").is_some() {
            answers.push(answer);
        }
    }
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "mcp-example");
    let tool = &answers[1]["result"]["tools"][0];
    assert_eq!(tool["name"], "convert_temperature");
    assert_eq!(tool["inputSchema"]["required"], json!(["value", "unit"]));
    let text = |a: &Value| {
        a["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(answers[2]["result"]["isError"], false);
    assert_eq!(
        serde_json::from_str::<Value>(&text(&answers[2])).unwrap(),
        json!({"value": 212.0, "unit": "F"})
    );
    // Below absolute zero fails the argument check; an unknown unit is the tool's refusal.
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert!(text(&answers[3]).contains("value"), "{}", answers[3]);
    assert_eq!(answers[4]["result"]["isError"], true, "{}", answers[4]);
    assert!(text(&answers[4]).contains("unknown unit"), "{}", answers[4]);

    drop(input);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits when its input closes")
        .unwrap();
    assert!(status.success());
}

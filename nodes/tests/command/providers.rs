//! n8n's own model nodes by their own names: a workflow exported from n8n
//! runs unchanged in `nodekit run`, on nodekit's native clients.

use std::process::Command;

use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

/// An export of n8n 2.8's chat template with the Anthropic Chat Model 1.3
/// (a model picked from the list) and thinking on.
fn anthropic_workflow() -> String {
    json!({
        "name": "Claude chat",
        "nodes": [
            {"name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger",
             "typeVersion": 1.1, "parameters": {"options": {}}, "webhookId": "c0ffee"},
            {"name": "AI Agent", "type": "@n8n/n8n-nodes-langchain.agent", "typeVersion": 1,
             "parameters": {"options": {"systemMessage": "Be brief."}}},
            {"name": "Anthropic Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatAnthropic",
             "typeVersion": 1.3,
             "parameters": {
                 "model": {"__rl": true, "mode": "list", "value": "claude-sonnet-4-5-20250929", "cachedResultName": "Claude Sonnet 4.5"},
                 "options": {"temperature": 0.2, "thinking": true, "thinkingBudget": 2048}
             },
             "credentials": {"anthropicApi": {"id": "1", "name": "Anthropic account"}}}
        ],
        "connections": {
            "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "Anthropic Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]}
        }
    })
    .to_string()
}

/// Anthropic's stream of one signed thought and a two-piece answer.
fn anthropic_stream(answer: [&str; 2]) -> Reply {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null, "usage": {"input_tokens": 12, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Greet back."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": answer[0]}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": answer[1]}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ];
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Reply::sse_pieces(&[text.as_bytes()], true)
}

fn run(workflow: &str, credentials: Value, message: &str) -> std::process::Output {
    let path = nodekit_test_support::scratch_dir()
        .join(nodekit_test_support::unique("nodekit-provider-workflow"));
    std::fs::write(&path, workflow).unwrap();
    Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(["run", path.to_str().unwrap(), "--message", message])
        .env("NODEKIT_CREDENTIALS", credentials.to_string())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_n8n_export_with_the_anthropic_chat_model_runs_on_the_native_client() {
    let server = Server::start(vec![anthropic_stream(["Hello, ", "Ada."])]).await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let out = run(
        &anthropic_workflow(),
        json!({"anthropicApi": {"apiKey": "sk-ant-local", "url": root,
                                "header": true, "headerName": "x-team", "headerValue": "blue"}}),
        "Hi, I am Ada",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "Hello, Ada."
    );
    assert!(!stderr.contains("sk-ant-local"), "{stderr}");

    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some("sk-ant-local"));
    assert_eq!(seen.header("x-team"), Some("blue"));
    let body = &seen.body;
    assert_eq!(body["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(body["max_tokens"], 4096, "n8n's default length");
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    // With thinking on, n8n sends no sampling settings.
    assert!(body.get("temperature").is_none(), "{body}");
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["messages"][0]["role"], "user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anthropic_chat_model_of_n8n_1_0_and_its_errors() {
    // Version 1 stores the model as text; without thinking the options are sent.
    let mut workflow: Value = serde_json::from_str(&anthropic_workflow()).unwrap();
    workflow["nodes"][2]["typeVersion"] = json!(1);
    workflow["nodes"][2]["parameters"] = json!({"model": "claude-3-5-haiku-20241022",
        "options": {"temperature": 0.2, "topK": -1, "maxTokensToSample": 300}});
    let server = Server::start(vec![
        anthropic_stream(["O", "k."]),
        Reply::json(401, &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
    ])
    .await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let credentials = json!({"anthropicApi": {"apiKey": "sk-ant-local", "url": root}});
    let out = run(&workflow.to_string(), credentials.clone(), "Hi");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = &server.seen()[0].body;
    assert_eq!(
        (&body["model"], &body["temperature"], &body["max_tokens"]),
        (
            &json!("claude-3-5-haiku-20241022"),
            &json!(0.2),
            &json!(300)
        )
    );
    assert!(
        body.get("top_k").is_none() && body.get("thinking").is_none(),
        "{body}"
    );

    let out = run(&workflow.to_string(), credentials, "Hi");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("invalid x-api-key")
            && stderr.contains("401")
            && stderr.contains("authentication_error"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-ant-local"), "{stderr}");

    let out = run(
        &workflow.to_string(),
        json!({"anthropicApi": {"url": "http://127.0.0.1:9"}}),
        "Hi",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("anthropicApi") && stderr.contains("apiKey"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_n8n_export_with_the_gemini_chat_model_runs_on_the_native_client() {
    let mut workflow: Value = serde_json::from_str(&anthropic_workflow()).unwrap();
    workflow["nodes"][2] = json!({
        "name": "Google Gemini Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatGoogleGemini",
        "typeVersion": 1,
        "parameters": {"modelName": "models/gemini-2.5-flash", "options": {
            "temperature": 0.3, "topK": -1, "maxOutputTokens": 500,
            "safetySettings": {"values": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}
        }},
        "credentials": {"googlePalmApi": {"id": "2", "name": "Gemini account"}}
    });
    workflow["connections"]["Google Gemini Chat Model"] =
        workflow["connections"]["Anthropic Chat Model"].take();
    workflow["connections"]
        .as_object_mut()
        .unwrap()
        .remove("Anthropic Chat Model");
    let server = Server::start(vec![Reply::json(200, &json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Salut."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 2, "totalTokenCount": 10}
    }))])
    .await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let out = run(
        &workflow.to_string(),
        json!({"googlePalmApi": {"apiKey": "AIza-local", "host": root}}),
        "Hi",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), "Salut.");
    let [seen] = server.seen().try_into().unwrap();
    assert!(
        seen.path.starts_with("/v1beta/models/gemini-2.5-flash:"),
        "{}",
        seen.path
    );
    assert_eq!(seen.header("x-goog-api-key"), Some("AIza-local"));
    assert_eq!(
        seen.body["generationConfig"],
        json!({"temperature": 0.3, "maxOutputTokens": 500})
    );
    assert_eq!(
        seen.body["safetySettings"],
        json!([{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}])
    );
    assert_eq!(
        seen.body["systemInstruction"]["parts"][0]["text"],
        "Be brief."
    );
}

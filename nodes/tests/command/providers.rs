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

/// The chat template with `model` (an n8n node) in place of Anthropic's.
fn with_model(model: Value) -> String {
    let mut workflow: Value = serde_json::from_str(&anthropic_workflow()).unwrap();
    let name = model["name"].as_str().unwrap().to_owned();
    workflow["nodes"][2] = model;
    let connections = workflow["connections"].as_object_mut().unwrap();
    let edge = connections.remove("Anthropic Chat Model").unwrap();
    connections.insert(name, edge);
    workflow.to_string()
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
    let workflow = with_model(json!({
        "name": "Google Gemini Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatGoogleGemini",
        "typeVersion": 1,
        "parameters": {"modelName": "models/gemini-2.5-flash", "options": {
            "temperature": 0.3, "topK": -1, "maxOutputTokens": 500,
            "safetySettings": {"values": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}
        }},
        "credentials": {"googlePalmApi": {"id": "2", "name": "Gemini account"}}
    }));
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

/// One of n8n's nodes on OpenAI's chat completions API: what an export
/// holds, and what the provider must receive.
struct OpenAiWire {
    node: &'static str,
    version: f64,
    parameters: Value,
    credential: &'static str,
    /// The credential's fields besides the API root, which the test adds
    /// as `root_field`.
    fields: Value,
    root_field: &'static str,
    path: &'static str,
    auth: (&'static str, &'static str),
    sent: Value,
    not_sent: &'static [&'static str],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n8n_exports_with_the_openai_api_providers_run_on_the_openai_client() {
    let cases = [
        OpenAiWire {
            node: "lmChatOpenAi",
            version: 1.2,
            parameters: json!({"model": {"__rl": true, "mode": "list", "value": "gpt-4.1-mini"},
                "options": {"temperature": 0.1, "maxTokens": 200, "responseFormat": "json_object", "reasoningEffort": "low"}}),
            credential: "openAiApi",
            fields: json!({"apiKey": "sk-local", "headerName": "x-team", "headerValue": "blue"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer sk-local"),
            sent: json!({"model": "gpt-4.1-mini", "temperature": 0.1, "max_tokens": 200,
                "response_format": {"type": "json_object"}, "reasoning_effort": "low"}),
            not_sent: &["top_p"],
        },
        OpenAiWire {
            node: "lmChatOpenAi",
            version: 1.3,
            parameters: json!({"model": {"__rl": true, "mode": "id", "value": "gpt-5-mini"},
                "responsesApiEnabled": false, "options": {}}),
            credential: "openAiApi",
            fields: json!({"apiKey": "sk-local"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer sk-local"),
            sent: json!({"model": "gpt-5-mini"}),
            not_sent: &[
                "temperature",
                "max_tokens",
                "response_format",
                "reasoning_effort",
            ],
        },
        OpenAiWire {
            node: "lmChatAzureOpenAi",
            version: 1.0,
            parameters: json!({"model": "my-gpt-4o", "options": {"topP": 0.5, "maxTokens": -1}}),
            credential: "azureOpenAiApi",
            fields: json!({"apiKey": "az-local", "resourceName": "unused", "apiVersion": "2024-10-21"}),
            root_field: "endpoint",
            path: "/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21",
            auth: ("api-key", "az-local"),
            sent: json!({"model": "my-gpt-4o", "top_p": 0.5}),
            not_sent: &["max_tokens"],
        },
        OpenAiWire {
            node: "lmChatDeepSeek",
            version: 1.0,
            parameters: json!({"model": "deepseek-reasoner", "options": {"frequencyPenalty": 0.5}}),
            credential: "deepSeekApi",
            fields: json!({"apiKey": "ds-local"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer ds-local"),
            sent: json!({"model": "deepseek-reasoner", "frequency_penalty": 0.5}),
            not_sent: &["temperature"],
        },
        OpenAiWire {
            node: "lmChatOpenRouter",
            version: 1.0,
            parameters: json!({"model": "anthropic/claude-sonnet-4.5", "options": {}}),
            credential: "openRouterApi",
            fields: json!({"apiKey": "or-local"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer or-local"),
            sent: json!({"model": "anthropic/claude-sonnet-4.5"}),
            not_sent: &["temperature"],
        },
        OpenAiWire {
            node: "lmChatXAiGrok",
            version: 1.0,
            parameters: json!({"options": {"temperature": 1.2}}),
            credential: "xAiApi",
            fields: json!({"apiKey": "xai-local"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer xai-local"),
            sent: json!({"model": "grok-2-vision-1212", "temperature": 1.2}),
            not_sent: &["stream_options"],
        },
        OpenAiWire {
            node: "lmChatGroq",
            version: 1.0,
            parameters: json!({"model": "llama-3.3-70b-versatile", "options": {}}),
            credential: "groqApi",
            fields: json!({"apiKey": "gsk-local"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer gsk-local"),
            sent: json!({"model": "llama-3.3-70b-versatile", "temperature": 0.7}),
            not_sent: &["max_tokens"],
        },
        OpenAiWire {
            node: "lmChatMistralCloud",
            version: 1.0,
            parameters: json!({"model": "mistral-large-latest",
                "options": {"maxTokens": -1, "safeMode": true, "randomSeed": 42}}),
            credential: "mistralCloudApi",
            fields: json!({"apiKey": "ms-local"}),
            root_field: "url",
            path: "/v1/chat/completions",
            auth: ("authorization", "Bearer ms-local"),
            sent: json!({"model": "mistral-large-latest", "temperature": 0.7, "top_p": 1.0,
                "safe_prompt": true, "random_seed": 42}),
            not_sent: &["max_tokens", "stream_options"],
        },
    ];
    for case in cases {
        let server = Server::start(vec![Reply::json(200, &json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
        }))])
        .await;
        let mut fields = case.fields.clone();
        fields[case.root_field] = json!(match case.credential {
            "azureOpenAiApi" => format!("{}/", server.base_url.trim_end_matches("/v1")),
            _ => server.base_url.clone(),
        });
        let workflow = with_model(json!({
            "name": "Chat Model", "type": format!("@n8n/n8n-nodes-langchain.{}", case.node),
            "typeVersion": case.version, "parameters": case.parameters,
            "credentials": {case.credential: {"id": "3", "name": "account"}}
        }));
        let out = run(&workflow, json!({case.credential: fields}), "Hi");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", case.node);
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), "Hello.");
        let [seen] = server.seen().try_into().unwrap();
        assert_eq!(seen.path, case.path, "{}", case.node);
        assert_eq!(seen.header(case.auth.0), Some(case.auth.1), "{}", case.node);
        for (key, value) in case.sent.as_object().unwrap() {
            assert_eq!(
                &seen.body[key], value,
                "{}: `{key}` in {}",
                case.node, seen.body
            );
        }
        for key in case.not_sent {
            assert!(
                seen.body.get(key).is_none(),
                "{}: `{key}` in {}",
                case.node,
                seen.body
            );
        }
        assert_eq!(
            seen.body["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_openai_api_nodes_cannot_run_is_said() {
    let cases = [
        (
            json!({"name": "OpenAI", "type": "@n8n/n8n-nodes-langchain.lmChatOpenAi", "typeVersion": 1.3,
                   "parameters": {"options": {"metadata": "{not json"}},
                   "credentials": {"openAiApi": {"id": "1", "name": "a"}}}),
            json!({"openAiApi": {"apiKey": "sk-local", "url": "http://127.0.0.1:9/v1"}}),
            "options.metadata",
        ),
        (
            json!({"name": "Azure", "type": "@n8n/n8n-nodes-langchain.lmChatAzureOpenAi", "typeVersion": 1,
                   "parameters": {"authentication": "azureEntraCognitiveServicesOAuth2Api", "model": "gpt-4o", "options": {}},
                   "credentials": {"azureOpenAiApi": {"id": "1", "name": "a"}}}),
            json!({"azureOpenAiApi": {"apiKey": "az-local", "resourceName": "r"}}),
            "azureEntraCognitiveServicesOAuth2Api",
        ),
        (
            json!({"name": "Azure", "type": "@n8n/n8n-nodes-langchain.lmChatAzureOpenAi", "typeVersion": 1,
                   "parameters": {"model": "gpt-4o", "options": {}},
                   "credentials": {"azureOpenAiApi": {"id": "1", "name": "a"}}}),
            json!({"azureOpenAiApi": {"apiKey": "az-local"}}),
            "resourceName",
        ),
        (
            json!({"name": "Groq", "type": "@n8n/n8n-nodes-langchain.lmChatGroq", "typeVersion": 1,
                   "parameters": {"options": {}}, "credentials": {"groqApi": {"id": "1", "name": "a"}}}),
            json!({"groqApi": {}}),
            "apiKey",
        ),
    ];
    for (model, credentials, expected) in cases {
        let out = run(&with_model(model), credentials, "Hi");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_chat_model_1_3_runs_on_the_responses_api() {
    // n8n 1.3's defaults: the Responses API, with OpenAI's own tools.
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Hello, "}),
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Ada."}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
            "usage": {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}}}),
    ];
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let server = Server::start(vec![Reply::sse_pieces(&[text.as_bytes()], true)]).await;
    let workflow = with_model(json!({
        "name": "OpenAI Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatOpenAi", "typeVersion": 1.3,
        "parameters": {
            "model": {"__rl": true, "mode": "list", "value": "gpt-5-mini", "cachedResultName": "gpt-5-mini"},
            "builtInTools": {"webSearch": {"searchContextSize": "high", "allowedDomains": "n8n.io, docs.rs"},
                             "codeInterpreter": true},
            "options": {"reasoningEffort": "low", "promptCacheKey": "team-a", "maxTokens": 500,
                        "presencePenalty": 1, "responseFormat": "json_object",
                        "textFormat": {"textOptions": {"type": "json_schema", "name": "answer",
                                       "schema": "{\"type\": \"object\"}", "verbosity": "low"}}}
        },
        "credentials": {"openAiApi": {"id": "1", "name": "OpenAI account"}}
    }));
    let out = run(
        &workflow,
        json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}}),
        "Hi, I am Ada",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "Hello, Ada."
    );
    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(seen.path, "/v1/responses");
    let b = &seen.body;
    assert_eq!(
        b["input"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi, I am Ada"}])
    );
    assert_eq!(
        b["tools"],
        json!([
            {"type": "web_search", "search_context_size": "high", "filters": {"allowed_domains": ["n8n.io", "docs.rs"]}},
            {"type": "code_interpreter", "container": {"type": "auto"}}
        ])
    );
    assert_eq!(b["reasoning"], json!({"effort": "low"}));
    assert_eq!(b["prompt_cache_key"], "team-a");
    assert_eq!(b["max_output_tokens"], 500);
    assert_eq!(
        b["text"],
        json!({"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}}, "verbosity": "low"})
    );
    for absent in [
        "presence_penalty",
        "response_format",
        "reasoning_effort",
        "messages",
    ] {
        assert!(b.get(absent).is_none(), "{absent} in {b}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_n8n_export_with_the_ollama_chat_model_runs_on_the_native_client() {
    let line = |content: &str, done: bool| {
        json!({"model": "qwen3:8b", "created_at": "2026-12-04T02:00:00Z",
               "message": {"role": "assistant", "content": content}, "done": done})
    };
    let mut last = line("", true);
    last["done_reason"] = json!("stop");
    last["prompt_eval_count"] = json!(20);
    last["eval_count"] = json!(4);
    let server = Server::start(vec![Reply::json_lines(
        &[line("Hello, ", false), line("Ada.", false), last],
        true,
    )])
    .await;
    let workflow = with_model(json!({
        "name": "Ollama Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatOllama", "typeVersion": 1,
        "parameters": {"model": "qwen3:8b", "options": {
            "temperature": 0.3, "topK": -1, "numCtx": 8192, "useMMap": false,
            "keepAlive": "10m", "format": "default"}},
        "credentials": {"ollamaApi": {"id": "4", "name": "Ollama account"}}
    }));
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let out = run(
        &workflow,
        json!({"ollamaApi": {"baseUrl": root}}),
        "Hi, I am Ada",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "Hello, Ada."
    );
    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(seen.path, "/api/chat");
    assert_eq!(seen.header("authorization"), None);
    let b = &seen.body;
    assert_eq!(b["model"], "qwen3:8b");
    assert_eq!(
        b["options"],
        json!({"num_ctx": 8192, "use_mmap": false, "temperature": 0.3})
    );
    assert_eq!(
        (&b["keep_alive"], &b["stream"]),
        (&json!("10m"), &json!(true))
    );
    assert!(b.get("format").is_none(), "{b}");
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );

    let out = run(&workflow, json!({"ollamaApi": {"apiKey": "k"}}), "Hi");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("ollamaApi") && stderr.contains("baseUrl"),
        "{stderr}"
    );
}

/// Supplies n8n's embeddings node `node` (at `version`) with `params` and
/// `credentials`, and embeds two texts with it.
async fn embed_with(
    node: &str,
    version: f64,
    params: Value,
    credentials: Value,
) -> nodekit::Result<Vec<Vec<f32>>> {
    use nodekit::node::{Supply, SupplyContext};
    nodekit_nodes::link();
    let entry = nodekit::Catalog::global()
        .find(&format!("@n8n/n8n-nodes-langchain.{node}"))
        .unwrap_or_else(|e| panic!("{node} is in the catalog: {e}"));
    let supply = entry.runtime.supply.expect("an embeddings node supplies");
    let credentials = credentials.as_object().unwrap().clone();
    let ctx = SupplyContext::new(
        "Embeddings",
        std::sync::Arc::new(credentials),
        json!({}),
        nodekit::run_log::RunLog::new(),
    )
    .with_type_version(version);
    let Supply::Embedder(embedder) = ctx.supply(supply, params).await? else {
        panic!("{node} supplies an embedder")
    };
    embedder.embed(&["one\ntwo".into(), "three".into()]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n8n_embeddings_nodes_run_on_nodekits_clients() {
    let openai_answer = || {
        Reply::json(
            200,
            &json!({"data": [{"index": 0, "embedding": [0.5, 0.25]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
        )
    };
    let vectors = vec![vec![0.5, 0.25], vec![1.0, 2.0]];

    // OpenAI: version 1's model, newlines stripped by default, the options.
    let server = Server::start(vec![openai_answer(), openai_answer()]).await;
    let credentials = json!({"openAiApi": {"apiKey": "sk-e", "url": server.base_url}});
    let got = embed_with(
        "embeddingsOpenAi",
        1.0,
        json!({"options": {}}),
        credentials.clone(),
    )
    .await;
    assert_eq!(got.unwrap(), vectors);
    let options = json!({"model": "text-embedding-3-large", "options": {"dimensions": 2, "stripNewLines": false, "batchSize": 8}});
    embed_with("embeddingsOpenAi", 1.2, options, credentials)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].path, "/v1/embeddings");
    assert_eq!(
        seen[0].body,
        json!({"model": "text-embedding-ada-002", "input": ["one two", "three"], "encoding_format": "float"})
    );
    assert_eq!(
        (
            &seen[1].body["model"],
            &seen[1].body["input"][0],
            &seen[1].body["dimensions"]
        ),
        (
            &json!("text-embedding-3-large"),
            &json!("one\ntwo"),
            &json!(2)
        )
    );

    // Azure OpenAI: the deployment's URL and the api-key header.
    let server = Server::start(vec![openai_answer()]).await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let credentials =
        json!({"azureOpenAiApi": {"apiKey": "az-e", "endpoint": root, "apiVersion": "2024-10-21"}});
    let got = embed_with(
        "embeddingsAzureOpenAi",
        1.0,
        json!({"model": "embed-small", "options": {}}),
        credentials,
    )
    .await;
    assert_eq!(got.unwrap(), vectors);
    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(
        seen.path,
        "/openai/deployments/embed-small/embeddings?api-version=2024-10-21"
    );
    assert_eq!(seen.header("api-key"), Some("az-e"));

    // Mistral: its default model.
    let server = Server::start(vec![openai_answer()]).await;
    let credentials = json!({"mistralCloudApi": {"apiKey": "ms-e", "url": server.base_url}});
    embed_with(
        "embeddingsMistralCloud",
        1.0,
        json!({"options": {}}),
        credentials,
    )
    .await
    .unwrap();
    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(
        (seen.body["model"].as_str(), seen.header("authorization")),
        (Some("mistral-embed"), Some("Bearer ms-e"))
    );

    // Gemini: batchEmbedContents on the credential's host.
    let server = Server::start(vec![Reply::json(
        200,
        &json!({"embeddings": [{"values": [0.5, 0.25]}, {"values": [1.0, 2.0]}]}),
    )])
    .await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let credentials = json!({"googlePalmApi": {"apiKey": "AIza-e", "host": root}});
    let got = embed_with("embeddingsGoogleGemini", 1.0, json!({}), credentials).await;
    assert_eq!(got.unwrap(), vectors);
    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(
        seen.path,
        "/v1beta/models/text-embedding-004:batchEmbedContents"
    );

    // Ollama: /api/embed.
    let server = Server::start(vec![Reply::json(
        200,
        &json!({"embeddings": [[0.5, 0.25], [1.0, 2.0]]}),
    )])
    .await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let credentials = json!({"ollamaApi": {"baseUrl": root}});
    let got = embed_with(
        "embeddingsOllama",
        1.0,
        json!({"model": "nomic-embed-text"}),
        credentials,
    )
    .await;
    assert_eq!(got.unwrap(), vectors);
    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(
        (seen.path.as_str(), &seen.body["model"]),
        ("/api/embed", &json!("nomic-embed-text"))
    );

    // A credential without its key.
    let e = embed_with(
        "embeddingsMistralCloud",
        1.0,
        json!({}),
        json!({"mistralCloudApi": {}}),
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string().contains("mistralCloudApi") && e.to_string().contains("apiKey"),
        "{e}"
    );
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

/// An agent whose models are `models` (name, n8n node), connected at
/// their input index in reverse order (the runner orders them by index).
fn agent_with_models(agent_parameters: Value, models: &[(&str, Value)]) -> String {
    let mut workflow: Value = serde_json::from_str(&anthropic_workflow()).unwrap();
    workflow["nodes"][1]["parameters"] = agent_parameters;
    let nodes = workflow["nodes"].as_array_mut().unwrap();
    nodes.truncate(2);
    let connections = workflow["connections"].as_object_mut().unwrap();
    connections.remove("Anthropic Chat Model");
    for (index, (name, node)) in models.iter().enumerate().rev() {
        let mut node = node.clone();
        node["name"] = json!(name);
        workflow["nodes"].as_array_mut().unwrap().push(node);
        workflow["connections"][*name] = json!({"ai_languageModel": [[
            {"node": "AI Agent", "type": "ai_languageModel", "index": index}
        ]]});
    }
    workflow.to_string()
}

fn openai_node(model: &str) -> Value {
    json!({"type": "@n8n/n8n-nodes-langchain.lmChatOpenAi", "typeVersion": 1.2,
           "parameters": {"model": {"__rl": true, "mode": "id", "value": model}, "options": {"maxRetries": 0}},
           "credentials": {"openAiApi": {"id": "1", "name": "OpenAI"}}})
}

fn completion(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "c", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_fallback_model_answers_when_the_first_fails() {
    let primary = Server::start(vec![Reply::json(
        503,
        &json!({"error": {"message": "overloaded", "type": "server_error"}}),
    )])
    .await;
    let fallback = Server::start(vec![anthropic_stream(["From the ", "fallback."])]).await;
    let workflow = agent_with_models(
        json!({"needsFallback": true, "options": {"systemMessage": "Be brief."}}),
        &[
            ("Main Model", openai_node("gpt-4.1-mini")),
            (
                "Fallback Model",
                json!({"type": "@n8n/n8n-nodes-langchain.lmChatAnthropic", "typeVersion": 1.3,
                "parameters": {"model": {"__rl": true, "mode": "list", "value": "claude-sonnet-4-5-20250929"}, "options": {}},
                "credentials": {"anthropicApi": {"id": "2", "name": "Anthropic"}}}),
            ),
        ],
    );
    let credentials = json!({
        "openAiApi": {"apiKey": "sk-local", "url": primary.base_url},
        "anthropicApi": {"apiKey": "sk-ant-local", "url": fallback.base_url.trim_end_matches("/v1")},
    });
    let path = nodekit_test_support::scratch_dir().join(nodekit_test_support::unique("fallback"));
    std::fs::write(&path, &workflow).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(["run", path.to_str().unwrap(), "--message", "Hi", "--log"])
        .env("NODEKIT_CREDENTIALS", credentials.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "From the fallback."
    );
    assert_eq!((primary.seen().len(), fallback.seen().len()), (1, 1));
    // The run log has the failure under the main model's node and the
    // answer under the fallback's, each with its model.
    let log = run_log_of(&stderr);
    let main = &log["Main Model"][0];
    assert_eq!(main["model"], "gpt-4.1-mini");
    assert!(
        main["error"]["message"]
            .as_str()
            .unwrap()
            .contains("overloaded"),
        "{main}"
    );
    let answer = &log["Fallback Model"][0];
    assert_eq!(answer["model"], "claude-sonnet-4-5-20250929");
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(answer["data"]["tokenUsage"]["outputTokens"], 9);

    // Without the fallback option, the second model is not used.
    let primary = Server::start(vec![Reply::json(
        503,
        &json!({"error": {"message": "overloaded"}}),
    )])
    .await;
    let workflow = workflow.replace("\"needsFallback\":true", "\"needsFallback\":false");
    std::fs::write(&path, &workflow).unwrap();
    let credentials = json!({
        "openAiApi": {"apiKey": "sk-local", "url": primary.base_url},
        "anthropicApi": {"apiKey": "sk-ant-local", "url": fallback.base_url.trim_end_matches("/v1")},
    });
    let out = run(&workflow, credentials, "Hi");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("overloaded"));
    assert_eq!(fallback.seen().len(), 1);

    // The option on, the input empty: said so.
    let alone = agent_with_models(
        json!({"needsFallback": true}),
        &[("Main Model", openai_node("m"))],
    );
    let out = run(
        &alone,
        json!({"openAiApi": {"apiKey": "k", "url": "http://127.0.0.1:9/v1"}}),
        "Hi",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fallback model"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_selector_picks_a_model_by_its_rules() {
    let server = Server::start(vec![completion("small"), completion("large")]).await;
    let mut workflow: Value = serde_json::from_str(&agent_with_models(
        json!({"options": {}}),
        &[("Model Selector", json!({"type": "@n8n/n8n-nodes-langchain.modelSelector", "typeVersion": 1,
            "parameters": {"numberInputs": 2, "rules": {"rule": [
                {"modelIndex": 2, "conditions": {
                    "options": {"caseSensitive": false, "leftValue": "", "typeValidation": "strict", "version": 2},
                    "conditions": [{"id": "1", "leftValue": "={{ $json.chatInput }}", "rightValue": "code",
                                    "operator": {"type": "string", "operation": "contains"}}],
                    "combinator": "and"}},
                {"modelIndex": 1, "conditions": {}}
            ]}}}))],
    ))
    .unwrap();
    // Connected in reverse: the selector's inputs are ordered by index.
    for (index, name) in [(1, "gpt-large"), (0, "gpt-small")] {
        let mut node = openai_node(name);
        node["name"] = json!(name);
        workflow["nodes"].as_array_mut().unwrap().push(node);
        workflow["connections"][name] = json!({"ai_languageModel": [[
            {"node": "Model Selector", "type": "ai_languageModel", "index": index}
        ]]});
    }
    let workflow = workflow.to_string();
    let credentials = json!({"openAiApi": {"apiKey": "k", "url": server.base_url}});
    for message in ["Hello there", "Write CODE for me"] {
        let out = run(&workflow, credentials.clone(), message);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let models: Vec<Value> = server
        .seen()
        .iter()
        .map(|s| s.body["model"].clone())
        .collect();
    assert_eq!(models, [json!("gpt-small"), json!("gpt-large")]);

    // A rule that names an input nothing is connected to.
    let bad = workflow.replace("\"modelIndex\":2", "\"modelIndex\":3");
    let out = run(&bad, credentials, "code");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rule 1: model 3 is not connected (2 are)"),
        "{stderr}"
    );
}

//! The OpenAI-compatible client against scripted servers on 127.0.0.1:
//! every tolerance of the wire format, retries, timeouts, cancellation
//! and authentication.

use nodekit_test_support::openai as support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use nodekit::message::{Message, Role, Usage};
use nodekit::model::CancelToken;
use nodekit::model::ModelError;
use nodekit::model::http::{Authenticate, HeaderKey, QueryKey, Request};
use nodekit::model::openai::{OpenAiChatModel, OpenAiConfig};
use nodekit::model::{
    CallOptions, ChatModel, FinishReason, ModelErrorKind, StreamAccumulator, StreamChunk,
    ToolChoice,
};
use nodekit::tool::ToolDefinition;
use serde_json::{Value, json};
use support::{Reply, Server, Step};

const KEY: &str = "sk-test-abcdefghijklmnop";

fn model(server: &Server) -> OpenAiChatModel {
    model_with(server, |c| c)
}

fn model_with(server: &Server, f: impl FnOnce(OpenAiConfig) -> OpenAiConfig) -> OpenAiChatModel {
    OpenAiChatModel::new(f(
        OpenAiConfig::new(KEY, "gpt-test").base_url(server.base_url.clone())
    ))
    .unwrap()
}

fn completion(message: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
}

fn model_error(e: nodekit::Error) -> nodekit::model::ModelError {
    match e {
        nodekit::Error::Model(m) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

async fn invoke(server: &Server) -> nodekit::Result<Message> {
    model(server)
        .invoke(&[Message::human("hi")], &CallOptions::default())
        .await
}

async fn stream_all(server: &Server) -> (Vec<StreamChunk>, Option<nodekit::Error>) {
    let m = model(server);
    let mut chunks = Vec::new();
    let mut s = match m
        .stream(&[Message::human("hi")], &CallOptions::default())
        .await
    {
        Ok(s) => s,
        Err(e) => return (chunks, Some(e)),
    };
    while let Some(item) = s.next().await {
        match item {
            Ok(c) => chunks.push(c),
            Err(e) => return (chunks, Some(e)),
        }
    }
    (chunks, None)
}

fn merged(chunks: &[StreamChunk]) -> Message {
    let mut acc = StreamAccumulator::default();
    for c in chunks {
        acc.push(c);
    }
    acc.into_message()
}

#[tokio::test]
async fn request_carries_messages_settings_tools_and_the_key() {
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"role": "assistant", "content": "hello"})),
    )])
    .await;
    let mut config = OpenAiConfig::new(KEY, "gpt-test").base_url(server.base_url.clone());
    config.settings.temperature = Some(0.2);
    config.headers.push(("x-extra".into(), "1".into()));
    let m = OpenAiChatModel::new(config).unwrap();
    let mut ai = Message::ai("");
    ai.tool_calls.push(nodekit::message::ToolCall {
        id: "c1".into(),
        name: "t".into(),
        args: json!({"a": 1}),
    });
    let messages = [
        Message::system("be brief"),
        Message::human("hi"),
        ai,
        // The agent names its tool results; OpenAI's tool message has no name.
        Message {
            name: Some("t".into()),
            ..Message::tool("ok", "c1")
        },
    ];
    let options = CallOptions {
        stop: vec!["END".into()],
        tools: vec![ToolDefinition {
            name: "t".into(),
            description: "a tool".into(),
            parameters: json!({"type": "object"}),
        }],
        tool_choice: Some(ToolChoice::Required),
        overrides: nodekit::model::ModelSettings {
            max_tokens: Some(9),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = m.invoke(&messages, &options).await.unwrap();
    assert_eq!(answer.text(), "hello");
    assert_eq!(answer.role, Role::Ai);
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(seen.header("x-extra"), Some("1"));
    let b = &seen.body;
    assert_eq!(b["model"], "gpt-test");
    assert_eq!(b["temperature"], 0.2);
    assert_eq!(b["max_tokens"], 9);
    assert_eq!(b["stop"], json!(["END"]));
    assert_eq!(b["tool_choice"], "required");
    assert_eq!(b["tools"][0]["function"]["name"], "t");
    let roles: Vec<&str> = b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(b["messages"][2]["content"], Value::Null);
    assert_eq!(
        b["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"a\":1}"
    );
    assert_eq!(b["messages"][3]["tool_call_id"], "c1");
    let mut fields: Vec<&str> = b["messages"][3]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(fields, ["content", "role", "tool_call_id"]);
}

#[tokio::test]
async fn extra_body_fields_go_in_every_request_and_the_call_keeps_its_own() {
    let answer = || {
        Reply::json(
            200,
            &completion(json!({"role": "assistant", "content": "{}"})),
        )
    };
    let server = Server::start(vec![answer(), answer()]).await;
    let m = model_with(&server, |mut c| {
        c.extra_body.insert("safe_prompt".into(), json!(true));
        c.extra_body
            .insert("response_format".into(), json!({"type": "json_object"}));
        c
    });
    let hi = [Message::human("hi")];
    m.invoke(&hi, &CallOptions::default()).await.unwrap();
    let schema = CallOptions {
        response_format: Some(nodekit::model::ResponseFormat::JsonSchema {
            name: "answer".into(),
            schema: json!({"type": "object"}),
            strict: true,
        }),
        ..Default::default()
    };
    m.invoke(&hi, &schema).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].body["safe_prompt"], true);
    assert_eq!(
        seen[0].body["response_format"],
        json!({"type": "json_object"})
    );
    assert_eq!(seen[0].body["model"], "gpt-test");
    assert_eq!(seen[1].body["safe_prompt"], true);
    assert_eq!(seen[1].body["response_format"]["type"], "json_schema");
}

#[tokio::test]
async fn content_null_empty_missing_or_parts() {
    for (message, text) in [
        (json!({"role": "assistant", "content": null}), ""),
        (json!({"role": "assistant", "content": ""}), ""),
        (json!({"role": "assistant"}), ""),
        (
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            "ab",
        ),
    ] {
        let server = Server::start(vec![Reply::json(200, &completion(message))]).await;
        assert_eq!(invoke(&server).await.unwrap().text(), text);
    }
}

#[tokio::test]
async fn tool_calls_with_text_or_object_arguments_and_usage() {
    let body = json!({
        "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
            {"id": "b", "function": {"name": "g", "arguments": {"y": 2}}},
            {"id": "c", "function": {"name": "h"}}
        ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12,
                  "prompt_tokens_details": {"cached_tokens": 2}, "completion_tokens_details": {"reasoning_tokens": 3}},
        "unknown_field": {"ignored": true}
    });
    let server = Server::start(vec![Reply::json(200, &body)]).await;
    let m = invoke(&server).await.unwrap();
    let calls: Vec<(&str, &str, Value)> = m
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.args.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("a", "f", json!({"x": 1})),
            ("b", "g", json!({"y": 2})),
            ("c", "h", json!({}))
        ]
    );
    assert_eq!(
        m.usage,
        Some(Usage {
            input_tokens: 5,
            output_tokens: 7,
            total_tokens: 12,
            cache_read_tokens: Some(2),
            cache_creation_tokens: None,
            reasoning_tokens: Some(3)
        })
    );
}

#[tokio::test]
async fn azure_uses_the_api_key_header_and_api_version() {
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"content": "ok"})),
    )])
    .await;
    let m = OpenAiChatModel::new(OpenAiConfig {
        azure_api_version: Some("2024-10-21".into()),
        ..OpenAiConfig::new(KEY, "gpt-4o")
            .base_url(format!("{}/openai/deployments/prod", server.base_url))
    })
    .unwrap();
    m.invoke(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    let seen = &server.seen()[0];
    assert_eq!(
        seen.path,
        "/v1/openai/deployments/prod/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(seen.header("api-key"), Some(KEY));
    assert_eq!(seen.header("authorization"), None);
}

/// A scheme of a provider's own: a header signing the method, the path and
/// the body, so it must see the request exactly as it is sent.
#[derive(Debug)]
struct Signed(&'static str);

impl Authenticate for Signed {
    fn authenticate(&self, request: &mut Request) -> Result<(), ModelError> {
        let signature = format!(
            "{}:{} {} {}",
            self.0,
            request.method(),
            request.uri().path(),
            request.body().len()
        );
        request
            .headers_mut()
            .insert("x-signature", signature.parse().unwrap());
        Ok(())
    }

    fn secrets(&self) -> Vec<&str> {
        vec![self.0]
    }
}

#[tokio::test]
async fn requests_authenticate_by_any_scheme() {
    const SIGNING_KEY: &str = "signing-key-Zq7xK2mP";
    let ok = || Reply::json(200, &completion(json!({"content": "ok"})));
    let quoted = Reply::json(
        401,
        &json!({"error": {"message": format!("bad signature from {SIGNING_KEY}")}}),
    );
    let server = Server::start(vec![ok(), ok(), quoted]).await;
    let hi = [Message::human("hi")];
    let no_retry = |c: OpenAiConfig| OpenAiConfig {
        max_retries: 0,
        ..c
    };

    // A key in the query (Gemini's way), sent beside the other parameters.
    let m = model_with(&server, |c| {
        no_retry(c).auth(QueryKey::new("key", "k-1 &x"))
    });
    m.invoke(&hi, &CallOptions::default()).await.unwrap();
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/chat/completions?key=k-1+%26x");
    assert_eq!(seen.header("authorization"), None);

    // A signature over the request as sent.
    let m = model_with(&server, |c| no_retry(c).auth(Signed(SIGNING_KEY)));
    m.invoke(&hi, &CallOptions::default()).await.unwrap();
    let seen = &server.seen()[1];
    let body = serde_json::to_vec(&seen.body).unwrap().len();
    assert_eq!(
        seen.header("x-signature"),
        Some(format!("{SIGNING_KEY}:POST /v1/chat/completions {body}").as_str())
    );
    assert_eq!(seen.header("authorization"), None);

    // Its secret never shows in an error.
    let e = m.invoke(&hi, &CallOptions::default()).await.unwrap_err();
    assert!(!e.to_string().contains(SIGNING_KEY), "{e}");
    assert!(e.to_string().contains("bad signature from ***"), "{e}");

    // A header of its own (Anthropic's `x-api-key`); a bad name is refused.
    assert!(HeaderKey::new("x-api-key", "k").is_ok());
    assert!(HeaderKey::new("bad name", "k").is_err());
}

/// A reply and the error it must give: kind, status, message, code.
type ErrorCase = (
    Reply,
    ModelErrorKind,
    Option<u16>,
    &'static str,
    Option<&'static str>,
);

#[tokio::test]
async fn provider_errors_in_every_shape() {
    let auth_message = format!("Incorrect API key provided: {KEY}");
    let middle: &'static str = format!("key …{}… and test-ab", &KEY[5..13]).leak();
    let cases: Vec<ErrorCase> = vec![
        (
            Reply::json(
                400,
                &json!({"error": {"message": "bad model", "type": "invalid_request_error", "code": "model_not_found", "param": {"x": 1}}}),
            ),
            ModelErrorKind::BadRequest,
            Some(400),
            "bad model",
            Some("model_not_found"),
        ),
        (
            Reply::json(
                400,
                &json!({"error": {"message": "int code", "code": 42, "param": 7}}),
            ),
            ModelErrorKind::BadRequest,
            Some(400),
            "int code",
            Some("42"),
        ),
        (
            Reply::json(
                400,
                &json!({"error": {"message": "null code", "code": null, "type": "oops"}}),
            ),
            ModelErrorKind::BadRequest,
            Some(400),
            "null code",
            Some("oops"),
        ),
        (
            Reply::json(422, &json!({"message": "no wrapper", "code": "x"})),
            ModelErrorKind::BadRequest,
            Some(422),
            "no wrapper",
            Some("x"),
        ),
        (
            Reply::json(400, &json!({"error": "plain string"})),
            ModelErrorKind::BadRequest,
            Some(400),
            "plain string",
            None,
        ),
        (
            Reply::json(
                400,
                &json!({"detail": [{"loc": ["body"], "msg": "field required"}]}),
            ),
            ModelErrorKind::BadRequest,
            Some(400),
            "[{\"loc\":[\"body\"],\"msg\":\"field required\"}]",
            None,
        ),
        (
            Reply::raw(404, "text/plain", b"no such route"),
            ModelErrorKind::NotFound,
            Some(404),
            "no such route",
            None,
        ),
        (
            Reply::json(401, &json!({"error": {"message": auth_message}})),
            ModelErrorKind::Auth,
            Some(401),
            "Incorrect API key provided: ***",
            None,
        ),
        // The key cut short (all but its last 4 characters) is hidden too;
        // a run from its middle is not (it may be an ordinary word), nor
        // are 7 characters.
        (
            Reply::json(
                401,
                &json!({"error": {"message": format!("Incorrect API key provided: {}****", &KEY[..KEY.len() - 4])}}),
            ),
            ModelErrorKind::Auth,
            Some(401),
            "Incorrect API key provided: *******",
            None,
        ),
        (
            Reply::json(
                401,
                &json!({"error": {"message": format!("key …{}… and test-ab", &KEY[5..13])}}),
            ),
            ModelErrorKind::Auth,
            Some(401),
            middle,
            None,
        ),
    ];
    for (reply, kind, status, message, code) in cases {
        let server = Server::start(vec![reply]).await;
        let e = model_error(invoke(&server).await.unwrap_err());
        assert_eq!(
            (e.kind, e.status, e.message.as_str(), e.code.as_deref()),
            (kind, status, message, code)
        );
        assert_eq!(server.seen().len(), 1, "client errors are not retried");
        assert!(!e.to_string().contains(KEY));
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let ok = Reply::json(200, &completion(json!({"content": "finally"})));
    let limited = Reply::with_headers(
        429,
        &[
            ("retry-after", "0.05"),
            ("content-type", "application/json"),
        ],
        br#"{"error":{"message":"slow down"}}"#,
    );
    let server = Server::start(vec![
        limited,
        Reply::json(500, &json!({"error": {"message": "boom"}})),
        ok,
    ])
    .await;
    let answer = invoke(&server).await.unwrap();
    assert_eq!(answer.text(), "finally");
    assert_eq!(server.seen().len(), 3);

    // An uncommon 5xx with an empty reason phrase, every time: retried, then reported.
    let server = Server::start(vec![Reply::raw(
        529,
        "application/json",
        br#"{"error":{"message":"overloaded"}}"#,
    )])
    .await;
    let m = model_with(&server, |c| OpenAiConfig {
        max_retries: 1,
        ..c
    });
    let e = model_error(
        m.invoke(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (e.kind, e.status, e.attempts),
        (ModelErrorKind::Server, Some(529), 2)
    );
    assert_eq!(
        e.to_string(),
        "model call failed: server error (HTTP 529): overloaded (after 2 attempts)"
    );
}

#[tokio::test]
async fn malformed_json_is_a_protocol_error() {
    let server = Server::start(vec![Reply::raw(
        200,
        "application/json",
        b"{\"choices\": [",
    )])
    .await;
    let e = model_error(invoke(&server).await.unwrap_err());
    assert_eq!(e.kind, ModelErrorKind::Protocol);
    let server = Server::start(vec![Reply::json(200, &json!({"object": "list"}))]).await;
    assert_eq!(
        model_error(invoke(&server).await.unwrap_err()).kind,
        ModelErrorKind::Protocol
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start(vec![Reply(vec![Step::Sleep(Duration::from_secs(30))])]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        timeout_secs: 0.3,
        max_retries: 0,
        ..c
    });
    let start = Instant::now();
    let e = model_error(
        m.invoke(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.kind, ModelErrorKind::Timeout);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_call_that_timed_out_is_tried_again() {
    let late = Reply::json(200, &completion(json!({"content": "too late"})))
        .after(Duration::from_secs(30));
    let ok = Reply::json(200, &completion(json!({"content": "in time"})));
    let server = Server::start(vec![late, ok]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        timeout_secs: 0.3,
        max_retries: 1,
        ..c
    });
    let answer = m
        .invoke(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(answer.text(), "in time");
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn cancellation_stops_a_pending_call() {
    let server = Server::start(vec![Reply(vec![Step::Sleep(Duration::from_secs(30))])]).await;
    let m = model(&server);
    let token = CancelToken::new();
    let options = CallOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let cancel_later = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel_later.cancel();
    });
    let start = Instant::now();
    let e = model_error(
        m.invoke(&[Message::human("hi")], &options)
            .await
            .unwrap_err(),
    );
    assert_eq!(e.kind, ModelErrorKind::Cancelled);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn oversized_answers_are_refused() {
    let big = format!(
        "{{\"choices\":[{{\"message\":{{\"content\":\"{}\"}}}}]}}",
        "x".repeat(3 << 20)
    );
    let server = Server::start(vec![Reply::raw(200, "application/json", big.as_bytes())]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        max_response_bytes: 1 << 20,
        ..c
    });
    let e = model_error(
        m.invoke(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.kind, ModelErrorKind::TooLarge);
}

#[tokio::test]
async fn streams_tolerate_every_wire_variant() {
    // Comments, `event:` lines, CRLF, `data:` without a space, a UTF-8
    // character and a JSON object split across network chunks, deltas
    // without role or content, usage on a final chunk with empty choices.
    let text = concat!(
        ": ping\r\n\r\n",
        "event: completion\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Gr\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"üße \"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{}}],\"extra\":1}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":null}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"✓\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n",
        "data: [DONE]\n\n",
    )
    .as_bytes();
    for cut in [1, 2, 3, 7, 13, 64] {
        let pieces: Vec<&[u8]> = text.chunks(cut).collect();
        let server = Server::start(vec![Reply::sse_pieces(&pieces, true)]).await;
        let (chunks, err) = stream_all(&server).await;
        assert!(err.is_none(), "cut {cut}: {err:?}");
        let m = merged(&chunks);
        assert_eq!(m.text(), "Grüße ✓", "cut {cut}");
        assert_eq!(m.usage.map(|u| u.total_tokens), Some(5));
        assert_eq!(
            chunks.last(),
            Some(&StreamChunk::Finish {
                reason: FinishReason::Stop,
                usage: m.usage
            })
        );
    }
}

#[tokio::test]
async fn streamed_tool_calls_by_index_by_order_whole_or_in_fragments() {
    let by_index = Reply::sse(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{\"y\""}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"x\":"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}, {"index": 1, "function": {"arguments": ":2}"}}]}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}),
    ]);
    // No index: a new id starts a call, a fragment without id continues the last.
    let by_order = Reply::sse(&[
        json!({"choices": [{"delta": {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{\"x\""}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": ":1}"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": {"y": 2}}}]}}]}),
    ]);
    // Whole calls in one delta, arguments as an object, no finish reason, no usage.
    let whole = Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "a", "function": {"name": "f", "arguments": {"x": 1}}},
            {"index": 1, "id": "b", "function": {"name": "g", "arguments": "{\"y\":2}"}}
        ]}}]}),
    ]);
    for reply in [by_index, by_order, whole] {
        let server = Server::start(vec![reply]).await;
        let (chunks, err) = stream_all(&server).await;
        assert!(err.is_none(), "{err:?}");
        let m = merged(&chunks);
        let calls: Vec<(&str, &str, Value)> = m
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.args.clone()))
            .collect();
        assert_eq!(
            calls,
            [("a", "f", json!({"x": 1})), ("b", "g", json!({"y": 2}))]
        );
        assert!(matches!(
            chunks.last(),
            Some(StreamChunk::Finish {
                reason: FinishReason::ToolCalls,
                ..
            })
        ));
    }
}

#[tokio::test]
async fn stream_endings_and_errors() {
    // Ends without [DONE] (and without the last blank line): still a normal end.
    let server = Server::start(vec![Reply::sse_pieces(
        &[b"data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}"],
        true,
    )])
    .await;
    let (chunks, err) = stream_all(&server).await;
    assert!(err.is_none());
    assert_eq!(merged(&chunks).text(), "ok");

    // An error event in the middle: the text so far, then the error.
    let server = Server::start(vec![Reply::sse_pieces(
        &[
            b"data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n",
            b"data: {\"error\":{\"message\":\"overloaded\",\"code\":\"server_busy\"}}\n\n",
        ],
        true,
    )])
    .await;
    let (chunks, err) = stream_all(&server).await;
    assert_eq!(merged(&chunks).text(), "par");
    let e = model_error(err.unwrap());
    assert_eq!(
        (e.kind, e.message.as_str(), e.code.as_deref()),
        (ModelErrorKind::Server, "overloaded", Some("server_busy"))
    );

    // `event: error` with a bare message.
    let server = Server::start(vec![Reply::sse_pieces(
        &[b"event: error\ndata: {\"message\":\"quota\"}\n\n"],
        true,
    )])
    .await;
    assert_eq!(
        model_error(stream_all(&server).await.1.unwrap()).message,
        "quota"
    );

    // A JSON error body answering a stream request.
    let server = Server::start(vec![Reply::json(
        400,
        &json!({"error": {"message": "stream not supported"}}),
    )])
    .await;
    let e = model_error(stream_all(&server).await.1.unwrap());
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ModelErrorKind::BadRequest, "stream not supported")
    );

    // A JSON completion answering a stream request: streamed as chunks.
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"content": "whole"})),
    )])
    .await;
    let (chunks, err) = stream_all(&server).await;
    assert!(err.is_none());
    assert_eq!(merged(&chunks).text(), "whole");

    // The connection drops mid-stream.
    let server = Server::start(vec![Reply::sse_pieces(
        &[b"data: {\"choices\":[{\"delta\":{\"content\":\"cut\"}}]}\n\n"],
        false,
    )])
    .await;
    let (chunks, err) = stream_all(&server).await;
    assert_eq!(merged(&chunks).text(), "cut");
    assert_eq!(model_error(err.unwrap()).kind, ModelErrorKind::Connection);

    // Garbage in an event.
    let server = Server::start(vec![Reply::sse_pieces(&[b"data: {not json\n\n"], true)]).await;
    assert_eq!(
        model_error(stream_all(&server).await.1.unwrap()).kind,
        ModelErrorKind::Protocol
    );
}

#[tokio::test]
async fn cancelling_a_stream_stops_it() {
    let mut steps = Reply::sse_pieces(
        &[b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"],
        true,
    )
    .0;
    steps.insert(2, Step::Sleep(Duration::from_secs(30)));
    let server = Server::start(vec![Reply(steps)]).await;
    let m = model(&server);
    let token = CancelToken::new();
    let options = CallOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let mut s = m.stream(&[Message::human("hi")], &options).await.unwrap();
    assert_eq!(
        s.next().await.unwrap().unwrap(),
        StreamChunk::TextDelta { text: "a".into() }
    );
    let start = Instant::now();
    token.cancel();
    let e = model_error(s.next().await.unwrap().unwrap_err());
    assert_eq!(e.kind, ModelErrorKind::Cancelled);
    assert!(s.next().await.is_none());
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_slow_stream_that_stalls_times_out() {
    let mut steps = Reply::sse_pieces(
        &[b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"],
        true,
    )
    .0;
    steps.insert(2, Step::Sleep(Duration::from_secs(30)));
    let server = Server::start(vec![Reply(steps)]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        timeout_secs: 0.3,
        ..c
    });
    let mut s = m
        .stream(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    assert!(s.next().await.unwrap().is_ok());
    let e = model_error(s.next().await.unwrap().unwrap_err());
    assert_eq!(e.kind, ModelErrorKind::Timeout);
}

#[tokio::test]
async fn an_oversized_stream_is_refused() {
    let line = format!(
        "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "y".repeat(1000)
    );
    let pieces: Vec<&[u8]> = std::iter::repeat_n(line.as_bytes(), 3000).collect();
    let server = Server::start(vec![Reply::sse_pieces(&pieces, true)]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        max_response_bytes: 1 << 20,
        ..c
    });
    let mut s = m
        .stream(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    let mut last = None;
    while let Some(item) = s.next().await {
        last = Some(item);
    }
    assert_eq!(
        model_error(last.unwrap().unwrap_err()).kind,
        ModelErrorKind::TooLarge
    );
}

#[tokio::test]
async fn the_api_key_never_shows_in_debug_output() {
    let server = Server::start(vec![Reply::json(200, &completion(json!({"content": "x"})))]).await;
    let m = model(&server);
    assert!(!format!("{m:?}").contains(KEY));
    assert!(!format!("{:?}", OpenAiConfig::new(KEY, "m")).contains(KEY));
}

#[tokio::test]
async fn review_fixes_retry_after_quota_and_bad_headers() {
    // A huge Retry-After must not panic; it is capped (and here no retry is left).
    let huge = Reply::with_headers(
        429,
        &[
            ("retry-after", "1e30"),
            ("content-type", "application/json"),
        ],
        br#"{"error":{"message":"later"}}"#,
    );
    let server = Server::start(vec![huge]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        max_retries: 0,
        ..c
    });
    let e = model_error(
        m.invoke(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.kind, ModelErrorKind::RateLimited);

    // Quota used up: a 429 that no retry fixes.
    let quota = Reply::json(
        429,
        &json!({"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}),
    );
    let server = Server::start(vec![quota]).await;
    let e = model_error(invoke(&server).await.unwrap_err());
    assert_eq!(
        (e.kind, server.seen().len()),
        (ModelErrorKind::BadRequest, 1)
    );

    // A header that cannot be sent is a configuration error, not retried.
    let server = Server::start(vec![Reply::json(200, &completion(json!({"content": "x"})))]).await;
    let m = model_with(&server, |mut c| {
        c.headers.push(("x-bad".into(), "line\nbreak".into()));
        c
    });
    let e = model_error(
        m.invoke(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap_err(),
    );
    assert_eq!((e.kind, e.attempts), (ModelErrorKind::BadRequest, 1));
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn review_fixes_tool_call_assembly() {
    // Whole calls without id or index are told apart by position.
    let body = json!({"choices": [{"message": {"tool_calls": [
        {"function": {"name": "f", "arguments": "{\"a\":1}"}},
        {"function": {"name": "g", "arguments": "{\"b\":2}"}}
    ]}}]});
    let server = Server::start(vec![Reply::json(200, &body)]).await;
    let m = invoke(&server).await.unwrap();
    let names: Vec<&str> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["f", "g"]);
    assert_eq!(m.tool_calls[1].args, json!({"b": 2}));

    // A name streamed in fragments whose end repeats; a huge index is dropped, not allocated.
    let server = Server::start(vec![Reply::sse(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "fo", "arguments": ""}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "o", "arguments": "{}"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 4294967295u64, "id": "z", "function": {"name": "zz", "arguments": "{}"}}]}}]}),
    ])])
    .await;
    let (chunks, err) = stream_all(&server).await;
    assert!(err.is_none());
    let m = merged(&chunks);
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].name, "foo");
}

#[tokio::test]
async fn review_fixes_streams() {
    // Keep-alive comments alone do not keep a stream open past the timeout.
    let mut steps = Reply::sse_pieces(
        &[b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"],
        true,
    )
    .0;
    for _ in 0..40 {
        // One chunked-encoding frame holding a 6-byte comment event.
        steps.insert(2, Step::Send(b"6\r\n: ka\n\n\r\n".to_vec()));
        steps.insert(2, Step::Sleep(Duration::from_millis(50)));
    }
    let server = Server::start(vec![Reply(steps)]).await;
    let m = model_with(&server, |c| OpenAiConfig {
        timeout_secs: 0.5,
        ..c
    });
    let mut s = m
        .stream(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    assert!(s.next().await.unwrap().is_ok());
    let start = Instant::now();
    let e = model_error(s.next().await.unwrap().unwrap_err());
    assert_eq!(e.kind, ModelErrorKind::Timeout);
    assert!(start.elapsed() < Duration::from_millis(1500));

    // A server that refuses `stream_options` is asked again without it.
    let refuse = Reply::json(
        400,
        &json!({"error": {"message": "Unrecognized request argument supplied: stream_options"}}),
    );
    let server = Server::start(vec![
        refuse,
        Reply::sse(&[json!({"choices": [{"delta": {"content": "fine"}}]})]),
    ])
    .await;
    let (chunks, err) = stream_all(&server).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(merged(&chunks).text(), "fine");
    let seen = server.seen();
    assert!(seen[0].body.get("stream_options").is_some());
    assert!(seen[1].body.get("stream_options").is_none());

    // A refusal is the answer's text.
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"content": null, "refusal": "I can't help with that."})),
    )])
    .await;
    assert_eq!(
        invoke(&server).await.unwrap().text(),
        "I can't help with that."
    );
}

#[tokio::test]
async fn a_transport_failure_is_kept_as_the_source() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let m = OpenAiChatModel::new(OpenAiConfig {
        max_retries: 0,
        ..OpenAiConfig::new(KEY, "gpt-test").base_url(format!("http://127.0.0.1:{port}/v1"))
    })
    .unwrap();
    let e = m
        .invoke(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap_err();
    // Through nodekit's error too, which wraps it transparently.
    let source = std::error::Error::source(&e).expect("the HTTP client's error");
    assert!(!source.to_string().contains(KEY), "{source}");
    assert_eq!(model_error(e).kind, ModelErrorKind::Connection);
}

#[tokio::test]
async fn another_providers_reasoning_is_not_sent_and_documents_go_as_file_parts() {
    use nodekit::message::{Content, ContentPart, FileUrl, ImageUrl};
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"role": "assistant", "content": "ok"})),
    )])
    .await;
    // An answer of a model that signs its reasoning (Anthropic), then the
    // same conversation sent to an OpenAI-compatible model (a fallback).
    let mut thought = Message::ai(Content::Parts(vec![
        ContentPart::Thinking {
            thinking: "the user wants the weather".into(),
            signature: Some("sig-1".into()),
        },
        ContentPart::RedactedThinking {
            data: "opaque".into(),
        },
    ]));
    thought.tool_calls.push(nodekit::message::ToolCall {
        id: "c1".into(),
        name: "weather".into(),
        args: json!({}),
    });
    let answered = Message::ai(Content::Parts(vec![
        ContentPart::Thinking {
            thinking: "done".into(),
            signature: None,
        },
        ContentPart::text("It is sunny."),
    ]));
    let document = Message::human(Content::Parts(vec![
        ContentPart::text("Read these."),
        ContentPart::File {
            file: FileUrl {
                url: "data:application/pdf;base64,JVBERi0=".into(),
                filename: Some("a.pdf".into()),
                mime_type: None,
            },
        },
        ContentPart::ImageUrl {
            image_url: ImageUrl {
                url: "https://example.invalid/a.png".into(),
                detail: None,
            },
        },
    ]));
    let messages = [
        Message::human("weather?"),
        thought,
        Message::tool("sunny", "c1"),
        answered,
        document,
    ];
    model(&server)
        .invoke(&messages, &CallOptions::default())
        .await
        .unwrap();
    let sent = &server.seen()[0].body["messages"];
    // Only reasoning and tool calls: no content, as for calls alone.
    assert_eq!(sent[1]["content"], Value::Null);
    assert_eq!(sent[1]["tool_calls"][0]["id"], "c1");
    assert_eq!(
        sent[3]["content"],
        json!([{"type": "text", "text": "It is sunny."}])
    );
    assert_eq!(
        sent[4]["content"],
        json!([
            {"type": "text", "text": "Read these."},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}},
            {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}},
        ])
    );
}

#[tokio::test]
async fn web_sources_cite_the_text_and_what_openai_cannot_take_is_refused_first() {
    use nodekit::message::{Content, ContentPart, FileUrl};
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"role": "assistant", "content": "Sales rose 4%.", "annotations": [
            {"type": "url_citation", "url_citation": {"url": "https://example.com/may", "title": "May", "start_index": 0, "end_index": 14}}
        ]})),
    )])
    .await;
    let answer = model(&server)
        .invoke(&[Message::human("Sales?")], &CallOptions::default())
        .await
        .unwrap();
    let Content::Parts(parts) = &answer.content else {
        panic!("{:?}", answer.content)
    };
    let [ContentPart::Text { text, citations }] = parts.as_slice() else {
        panic!("{parts:?}")
    };
    assert_eq!(text, "Sales rose 4%.");
    assert_eq!(
        (
            citations[0].kind.as_str(),
            citations[0].url(),
            citations[0].title()
        ),
        ("url_citation", Some("https://example.com/may"), Some("May"))
    );
    // Back to OpenAI, the text goes without them.
    let server = Server::start(vec![Reply::json(
        200,
        &completion(json!({"role": "assistant", "content": "ok"})),
    )])
    .await;
    model(&server)
        .invoke(
            &[Message::human("Sales?"), answer, Message::human("Thanks")],
            &CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        server.seen()[0].body["messages"][1]["content"],
        json!([{"type": "text", "text": "Sales rose 4%."}])
    );

    // A document by address, and another provider's block, are refused
    // before anything is sent, naming the block.
    let by_address = Message::human(Content::Parts(vec![ContentPart::File {
        file: FileUrl {
            url: "https://example.com/a.pdf".into(),
            ..FileUrl::default()
        },
    }]));
    let kept = Message::from_stored(&json!({"type": "ai", "data": {"content": [
        {"type": "text", "text": "hi"}, {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}
    ]}}))
    .unwrap();
    let server = Server::start(vec![]).await;
    for (messages, why) in [
        (
            vec![by_address],
            "message 0: block 0 is a document by address",
        ),
        (
            vec![Message::human("hi"), kept],
            "message 1: block 1 is a `server_tool_use` block, which the Chat Completions API does not take",
        ),
    ] {
        let e = model(&server)
            .invoke(&messages, &CallOptions::default())
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{e}");
    }
    assert!(server.seen().is_empty());
}

#[test]
fn cited_blocks_stream_apart_and_plain_ones_join() {
    use nodekit::message::{Citation, Content, ContentPart};
    use nodekit::model::message_chunks;
    let end = |citations: Vec<Citation>| StreamChunk::TextEnd { citations };
    let text = |t: &str| StreamChunk::TextDelta { text: t.into() };
    // Blocks that cite nothing make one text, as before.
    let plain = merged(&[text("a"), end(vec![]), text("b"), end(vec![]), text("c")]);
    assert_eq!(plain.content, Content::Text("abc".into()));
    // One that cites keeps every block apart, text after the last included.
    let cited = merged(&[
        text("a"),
        end(vec![]),
        text("b"),
        end(vec![Citation::new("page_location")]),
        text("c"),
    ]);
    assert_eq!(
        cited.content,
        Content::Parts(vec![
            ContentPart::text("a"),
            ContentPart::Text {
                text: "b".into(),
                citations: vec![Citation::new("page_location")]
            },
            ContentPart::text("c"),
        ])
    );
    assert_eq!(cited.text(), "abc");
    // A whole message streamed again is the same message.
    assert_eq!(
        merged(&message_chunks(cited.clone())).content,
        cited.content
    );
}

#[test]
fn signed_reasoning_streams_into_thinking_parts_and_back() {
    use nodekit::message::{Content, ContentPart};
    use nodekit::model::message_chunks;
    let chunks = [
        StreamChunk::ReasoningDelta {
            text: "first, ".into(),
        },
        StreamChunk::ReasoningDelta {
            text: "look".into(),
        },
        StreamChunk::ReasoningSignature {
            signature: "sig-a".into(),
        },
        StreamChunk::RedactedReasoning {
            data: "opaque".into(),
        },
        StreamChunk::ReasoningDelta {
            text: "then".into(),
        },
        StreamChunk::TextDelta {
            text: "Answer.".into(),
        },
        StreamChunk::Finish {
            reason: FinishReason::Stop,
            usage: None,
        },
    ];
    let message = merged(&chunks);
    let thinking = |text: &str, signature: Option<&str>| ContentPart::Thinking {
        thinking: text.into(),
        signature: signature.map(str::to_owned),
    };
    assert_eq!(
        message.content,
        Content::Parts(vec![
            thinking("first, look", Some("sig-a")),
            ContentPart::RedactedThinking {
                data: "opaque".into()
            },
            thinking("then", None),
            ContentPart::text("Answer."),
        ])
    );
    assert_eq!(message.text(), "Answer.");
    assert_eq!(message.reasoning().as_deref(), Some("first, lookthen"));
    assert!(!message.additional_kwargs.contains_key("reasoning_content"));
    // Streaming the message again gives the same message.
    assert_eq!(merged(&message_chunks(message.clone())), message);
    // Through memory: LangChain's stored form keeps the parts and the signature.
    let stored = message.to_stored();
    assert_eq!(stored["data"]["content"][0]["signature"], "sig-a");
    assert_eq!(stored["data"]["content"][1]["type"], "redacted_thinking");
    assert_eq!(Message::from_stored(&stored).unwrap(), message);

    // Unsigned reasoning alone stays where OpenAI-compatible servers put it.
    let plain = merged(&[
        StreamChunk::ReasoningDelta { text: "hm".into() },
        StreamChunk::TextDelta { text: "Hi.".into() },
    ]);
    assert_eq!(plain.content, Content::Text("Hi.".into()));
    assert_eq!(plain.additional_kwargs["reasoning_content"], "hm");
    assert_eq!(plain.reasoning().as_deref(), Some("hm"));
}

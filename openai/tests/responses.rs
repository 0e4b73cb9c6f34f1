//! The Responses API client against a real HTTP server on 127.0.0.1 that
//! answers in the Responses API's exact wire format.

use futures::StreamExt;
use nodekit_core::message::{Content, ContentPart, FileUrl, ImageUrl, Message, ToolCall};
use nodekit_core::model::{
    CallOptions, ChatModel, FinishReason, ModelErrorKind, ResponseFormat, StreamAccumulator,
    StreamChunk, ToolChoice,
};
use nodekit_core::tool::ToolDefinition;
use nodekit_openai::{OpenAiApi, OpenAiConfig, OpenAiResponsesModel};
use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

const KEY: &str = "sk-test-responses-0123456789";

fn model(server: &Server, f: impl FnOnce(OpenAiConfig) -> OpenAiConfig) -> OpenAiResponsesModel {
    let mut config = OpenAiConfig::new(KEY, "gpt-5-mini").base_url(server.base_url.clone());
    config.api = OpenAiApi::Responses;
    config.max_retries = 0;
    OpenAiResponsesModel::new(f(config)).unwrap()
}

fn weather_tool() -> ToolDefinition {
    ToolDefinition {
        name: "get_weather".into(),
        description: "The weather in a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }
}

/// A stream of typed events, as OpenAI sends them (`event:` and `data:`).
fn events(events: &[Value]) -> Reply {
    events_in(events, usize::MAX)
}

/// The same stream, sent in pieces of `size` bytes.
fn events_in(events: &[Value], size: usize) -> Reply {
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let pieces: Vec<&[u8]> = text.as_bytes().chunks(size.min(text.len())).collect();
    Reply::sse_pieces(&pieces, true)
}

fn model_error(e: nodekit_core::Error) -> nodekit_core::model::ModelError {
    match e {
        nodekit_core::Error::Model(m) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_conversation_goes_as_input_items_and_a_whole_response_is_read() {
    let server = Server::start(vec![Reply::json(200, &json!({
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need the weather."}]},
            {"type": "message", "id": "msg_1", "role": "assistant",
             "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}
        ],
        "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 32},
                  "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 70}
    }))])
    .await;
    let m = model(&server, |mut c| {
        c.settings.temperature = Some(0.3);
        c.settings.frequency_penalty = Some(1.0);
        c.extra_body
            .insert("reasoning".into(), json!({"effort": "low"}));
        c.hosted_tools.push(json!({"type": "web_search"}));
        c
    });
    let mut earlier = Message::ai("Looking.");
    earlier.tool_calls.push(ToolCall {
        id: "call_0".into(),
        name: "get_weather".into(),
        args: json!({"city": "Rome"}),
    });
    let picture = Message {
        content: Content::Parts(vec![
            ContentPart::text("And this?"),
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "https://example.com/a.png".into(),
                    detail: Some("low".into()),
                },
            },
            ContentPart::File {
                file: FileUrl {
                    url: "data:application/pdf;base64,JVBERi0=".into(),
                    filename: Some("a.pdf".into()),
                    mime_type: None,
                },
            },
        ]),
        ..Message::human("")
    };
    let messages = [
        Message::system("Be brief."),
        Message::human("Weather in Rome?"),
        earlier,
        Message::tool("sunny", "call_0"),
        picture,
    ];
    let options = CallOptions {
        tools: vec![weather_tool()],
        tool_choice: Some(ToolChoice::Tool("get_weather".into())),
        response_format: Some(ResponseFormat::JsonSchema {
            name: "w".into(),
            schema: json!({"type": "object"}),
            strict: true,
        }),
        overrides: nodekit_core::model::ModelSettings {
            max_tokens: Some(300),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = m.invoke(&messages, &options).await.unwrap();
    assert_eq!(answer.text(), "Checking.");
    assert_eq!(answer.reasoning().as_deref(), Some("Need the weather."));
    assert_eq!(answer.id.as_deref(), Some("resp_1"));
    let calls: Vec<(&str, &Value)> = answer
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), &c.args))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", &json!({"city": "Paris"})),
            ("call_b", &json!({"city": "Oslo"}))
        ]
    );
    let usage = answer.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (50, 20, 70)
    );
    assert_eq!(
        (usage.cache_read_tokens, usage.reasoning_tokens),
        (Some(32), Some(12))
    );

    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(seen.path, "/v1/responses");
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let b = &seen.body;
    assert_eq!(
        b["input"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Rome?"},
            {"role": "assistant", "content": "Looking."},
            {"type": "function_call", "call_id": "call_0", "name": "get_weather", "arguments": "{\"city\":\"Rome\"}"},
            {"type": "function_call_output", "call_id": "call_0", "output": "sunny"},
            {"role": "user", "content": [
                {"type": "input_text", "text": "And this?"},
                {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "low"},
                {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}
            ]}
        ])
    );
    assert_eq!(
        b["tools"],
        json!([
            {"type": "function", "name": "get_weather", "description": "The weather in a city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false},
            {"type": "web_search"}
        ])
    );
    assert_eq!(
        b["tool_choice"],
        json!({"type": "function", "name": "get_weather"})
    );
    assert_eq!(
        b["text"],
        json!({"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}, "strict": true}})
    );
    assert_eq!(
        (&b["temperature"], &b["max_output_tokens"]),
        (&json!(0.3), &json!(300))
    );
    assert_eq!(b["reasoning"], json!({"effort": "low"}));
    for absent in ["frequency_penalty", "max_tokens", "messages", "stream"] {
        assert!(b.get(absent).is_none(), "{absent} in {b}");
    }
}

#[tokio::test]
async fn a_streamed_response_gives_text_reasoning_calls_and_usage_whole_and_in_1_and_7_byte_pieces()
{
    let stream_events = [
        json!({"type": "response.created", "response": {"id": "resp_2", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Think."}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "Hel"}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "lo."}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_x", "name": "get_weather", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2, "delta": "{\"city\":"}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": {"type": "function_call", "id": "fc_2", "call_id": "call_y", "name": "get_weather", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_2", "output_index": 3, "delta": "{\"city\":\"Oslo\"}"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2, "delta": "\"Paris\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2, "arguments": "{\"city\":\"Paris\"}"}),
        json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed",
            "usage": {"input_tokens": 9, "output_tokens": 7, "total_tokens": 16}}}),
    ];
    for size in [usize::MAX, 1, 7] {
        let server = Server::start(vec![events_in(&stream_events, size)]).await;
        let m = model(&server, |c| c);
        let options = CallOptions {
            tools: vec![weather_tool()],
            ..Default::default()
        };
        let mut stream = m.stream(&[Message::human("hi")], &options).await.unwrap();
        let mut acc = StreamAccumulator::default();
        let mut finish = None;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.unwrap();
            if let StreamChunk::Finish { reason, .. } = &chunk {
                finish = Some(reason.clone());
            }
            acc.push(&chunk);
        }
        assert_eq!(finish, Some(FinishReason::ToolCalls));
        let message = acc.into_message();
        assert_eq!(message.text(), "Hello.");
        assert_eq!(message.reasoning().as_deref(), Some("Think."));
        let calls: Vec<(&str, &Value)> = message
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), &c.args))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_x", &json!({"city": "Paris"})),
                ("call_y", &json!({"city": "Oslo"}))
            ]
        );
        assert_eq!(
            message.usage.unwrap().total_tokens,
            16,
            "pieces of {size} bytes"
        );
        assert_eq!(server.seen()[0].body["stream"], true);
    }
}

#[tokio::test]
async fn how_a_response_ends_or_fails() {
    let incomplete = json!({"type": "response.incomplete", "response": {"status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 3, "output_tokens": 5}}});
    let text = json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Cut"});
    let server = Server::start(vec![
        events(&[text.clone(), incomplete]),
        events(&[json!({"type": "response.failed", "response": {"status": "failed",
            "error": {"code": "rate_limit_exceeded", "message": "Slow down."}}})]),
        events(&[json!({"type": "error", "code": "server_error", "message": "The server had an error.", "param": null})]),
        events(&[text]),
        Reply::json(200, &json!({"status": "incomplete", "incomplete_details": {"reason": "content_filter"},
            "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "I can't help with that."}]}]})),
        Reply::json(400, &json!({"error": {"message": "Unknown parameter: 'stop'.", "type": "invalid_request_error", "param": "stop", "code": "unknown_parameter"}})),
    ])
    .await;
    let m = model(&server, |c| c);
    let hi = [Message::human("hi")];
    let collect = |s: nodekit_core::model::ChunkStream| async move {
        let chunks: Vec<_> = s.collect().await;
        chunks.into_iter().collect::<Result<Vec<_>, _>>()
    };
    let chunks = collect(m.stream(&hi, &CallOptions::default()).await.unwrap())
        .await
        .unwrap();
    assert!(
        matches!(chunks.last(), Some(StreamChunk::Finish { reason: FinishReason::Length, usage: Some(u) }) if u.output_tokens == 5)
    );

    let e = model_error(
        collect(m.stream(&hi, &CallOptions::default()).await.unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ModelErrorKind::RateLimited, "Slow down.")
    );
    let e = model_error(
        collect(m.stream(&hi, &CallOptions::default()).await.unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.message, "The server had an error.");
    assert_eq!(e.code.as_deref(), Some("server_error"));
    let e = model_error(
        collect(m.stream(&hi, &CallOptions::default()).await.unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.kind, ModelErrorKind::Protocol);
    assert!(e.message.contains("ended before"), "{}", e.message);

    let refused = m.invoke(&hi, &CallOptions::default()).await.unwrap();
    assert_eq!(refused.text(), "I can't help with that.");
    let e = model_error(m.invoke(&hi, &CallOptions::default()).await.unwrap_err());
    assert_eq!((e.kind, e.status), (ModelErrorKind::BadRequest, Some(400)));
    assert!(e.message.contains("Unknown parameter"), "{}", e.message);
}

#[tokio::test]
async fn annotations_cite_their_output_text_whole_and_streamed() {
    let annotation = json!({"type": "url_citation", "url": "https://example.com/may", "title": "May", "start_index": 0, "end_index": 14});
    let cited = || {
        Content::Parts(vec![ContentPart::Text {
            text: "Sales rose 4%.".into(),
            citations: vec![serde_json::from_value(annotation.clone()).unwrap()],
        }])
    };
    let whole = json!({"id": "resp_c", "status": "completed", "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [
            {"type": "output_text", "text": "Sales rose 4%.", "annotations": [annotation]}
        ]}
    ], "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}});
    let server = Server::start(vec![Reply::json(200, &whole)]).await;
    let reply = model(&server, |c| c)
        .invoke(&[Message::human("Sales?")], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.content, cited());

    let stream_events = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Sales rose 4%."}),
        json!({"type": "response.output_text.annotation.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "annotation_index": 0, "annotation": annotation}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Sales rose 4%."}),
        json!({"type": "response.completed", "response": {"id": "resp_c", "status": "completed"}}),
    ];
    for size in [usize::MAX, 1, 7] {
        let server = Server::start(vec![events_in(&stream_events, size)]).await;
        let mut stream = model(&server, |c| c)
            .stream(&[Message::human("Sales?")], &CallOptions::default())
            .await
            .unwrap();
        let mut acc = StreamAccumulator::default();
        while let Some(chunk) = stream.next().await {
            acc.push(&chunk.unwrap());
        }
        assert_eq!(
            acc.into_message().content,
            cited(),
            "pieces of {size} bytes"
        );
    }

    // A block of another provider's is refused before sending, by name.
    let kept = Message::from_stored(&json!({"type": "ai", "data": {"content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    ]}}))
    .unwrap();
    let server = Server::start(vec![]).await;
    let e = model(&server, |c| c)
        .invoke(&[Message::human("hi"), kept], &CallOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "message 1: block 0 is a `server_tool_use` block, which the Responses API does not take"
        ),
        "{e}"
    );
    assert!(server.seen().is_empty());
}

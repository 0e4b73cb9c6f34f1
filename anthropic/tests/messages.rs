//! The Anthropic client against a real HTTP server on 127.0.0.1 that
//! answers in the Messages API's exact wire format.

use futures::StreamExt;
use nodekit_anthropic::{AnthropicChatModel, AnthropicConfig, PromptCache};
use nodekit_core::message::{Content, ContentPart, FileUrl, ImageUrl, Message, ToolCall};
use nodekit_core::model::{
    CallOptions, ChatModel, ModelErrorKind, ResponseFormat, StreamAccumulator, ToolChoice,
};
use nodekit_core::tool::ToolDefinition;
use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-0123456789abcdef";

fn model(
    server: &Server,
    config: impl FnOnce(AnthropicConfig) -> AnthropicConfig,
) -> AnthropicChatModel {
    let base = server.base_url.trim_end_matches("/v1");
    let mut c = AnthropicConfig::new(KEY, "claude-sonnet-4-5").base_url(base);
    c.max_retries = 1;
    AnthropicChatModel::new(config(c)).unwrap()
}

fn weather_tool() -> ToolDefinition {
    ToolDefinition {
        name: "get_weather".into(),
        description: "The weather in a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    }
}

fn signed_thinking() -> ContentPart {
    ContentPart::Thinking {
        thinking: "Both cities: two calls.".into(),
        signature: Some("EqQBCkYIBxgCKkA".into()),
    }
}

/// A conversation with every kind of block: system, an image and a PDF,
/// an assistant turn with its signed thinking and two parallel calls, and
/// both results.
fn conversation() -> Vec<Message> {
    let mut assistant = Message::ai(Content::Parts(vec![
        signed_thinking(),
        ContentPart::text("Checking both."),
    ]));
    assistant.tool_calls = vec![
        ToolCall {
            id: "toolu_1".into(),
            name: "get_weather".into(),
            args: json!({"city": "Paris"}),
        },
        ToolCall {
            id: "toolu_2".into(),
            name: "get_weather".into(),
            args: json!({"city": "Rome"}),
        },
    ];
    vec![
        Message::system("You are terse."),
        Message::human(Content::Parts(vec![
            ContentPart::text("Weather in Paris and Rome? See the map and the report."),
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,iVBORw0KGgo=".into(),
                    detail: None,
                },
            },
            ContentPart::File {
                file: FileUrl {
                    url: "data:application/pdf;base64,JVBERi0xLjQ=".into(),
                    filename: Some("report.pdf".into()),
                    mime_type: None,
                },
            },
        ])),
        assistant,
        Message::tool("18°C, sunny", "toolu_1"),
        Message::tool("24°C, clear", "toolu_2"),
    ]
}

#[tokio::test]
async fn a_conversation_is_sent_as_anthropic_blocks_with_cache_breakpoints() {
    let server = Server::start(vec![Reply::json(200, &json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Paris 18°C, Rome 24°C."}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_creation_input_tokens": 1000, "cache_read_input_tokens": 2000, "output_tokens": 9}
    }))])
    .await;
    let model = model(&server, |c| {
        c.thinking_budget(2048).prompt_cache(PromptCache::all())
    });
    let options = CallOptions {
        tools: vec![weather_tool()],
        tool_choice: Some(ToolChoice::Auto),
        stop: vec!["STOP".into()],
        ..CallOptions::default()
    };
    let answer = model.invoke(&conversation(), &options).await.unwrap();
    assert_eq!(answer.text(), "Paris 18°C, Rome 24°C.");
    assert_eq!(answer.id.as_deref(), Some("msg_1"));
    let usage = answer.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (3012, 9, 3021)
    );
    assert_eq!(
        (usage.cache_creation_tokens, usage.cache_read_tokens),
        (Some(1000), Some(2000))
    );

    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some(KEY));
    assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        seen.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": ephemeral}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Weather in Paris and Rome? See the map and the report."},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}, "title": "report.pdf"}
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Both cities: two calls.", "signature": "EqQBCkYIBxgCKkA"},
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C, sunny"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "24°C, clear", "cache_control": ephemeral}
                ]}
            ],
            "stop_sequences": ["STOP"],
            "tools": [{"name": "get_weather", "description": "The weather in a city",
                       "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                       "cache_control": ephemeral}],
            "tool_choice": {"type": "auto"},
            "thinking": {"type": "enabled", "budget_tokens": 2048}
        })
    );
}

#[tokio::test]
async fn a_whole_answer_keeps_thinking_tool_calls_and_the_stop_reason() {
    let server = Server::start(vec![Reply::json(200, &json!({
        "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Two cities.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "ENCRYPTED"},
            {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Rome"}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 20, "output_tokens": 30}
    }))])
    .await;
    let answer = model(&server, |c| c)
        .invoke(&[Message::human("Weather?")], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(
        answer.content,
        Content::Parts(vec![
            ContentPart::Thinking {
                thinking: "Two cities.".into(),
                signature: Some("sig-1".into())
            },
            ContentPart::RedactedThinking {
                data: "ENCRYPTED".into()
            },
        ])
    );
    let calls: Vec<_> = answer
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.args["city"].as_str().unwrap()))
        .collect();
    assert_eq!(calls, [("toolu_a", "Paris"), ("toolu_b", "Rome")]);
    assert_eq!(answer.additional_kwargs["finish_reason"], "tool_calls");
    assert_eq!(
        server.seen()[0].body["messages"],
        json!([{"role": "user", "content": "Weather?"}])
    );
}

/// Every event type of a streamed answer with thinking, text and a tool call.
fn stream_events() -> String {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_s", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "usage": {"input_tokens": 50, "cache_read_input_tokens": 400, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris."}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBsig"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Let me "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "check. ☀"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_s", "name": "get_weather", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

async fn streamed(model: &AnthropicChatModel) -> Result<Message, nodekit_core::Error> {
    let mut stream = model
        .stream(
            &[Message::human("Weather in Paris?")],
            &CallOptions::default(),
        )
        .await?;
    let mut acc = StreamAccumulator::default();
    let mut finished = false;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        finished |= matches!(chunk, nodekit_core::model::StreamChunk::Finish { .. });
        acc.push(&chunk);
    }
    assert!(
        finished,
        "a stream that ends well ends with its Finish chunk"
    );
    Ok(acc.into_message())
}

#[tokio::test]
async fn every_stream_event_is_read_whole_and_in_1_and_7_byte_pieces() {
    let text = stream_events();
    let bytes = text.as_bytes();
    for size in [bytes.len(), 1, 7] {
        let pieces: Vec<&[u8]> = bytes.chunks(size).collect();
        let server = Server::start(vec![Reply::sse_pieces(&pieces, true)]).await;
        let answer = streamed(&model(&server, |c| c)).await.unwrap();
        assert_eq!(
            answer.content,
            Content::Parts(vec![
                ContentPart::Thinking {
                    thinking: "The user wants Paris.".into(),
                    signature: Some("EqQBsig".into())
                },
                ContentPart::text("Let me check. ☀"),
            ]),
            "pieces of {size} bytes"
        );
        assert_eq!(
            answer.tool_calls,
            vec![ToolCall {
                id: "toolu_s".into(),
                name: "get_weather".into(),
                args: json!({"city": "Paris"})
            }]
        );
        assert_eq!(answer.additional_kwargs["finish_reason"], "tool_calls");
        let usage = answer.usage.unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens
            ),
            (450, 89, Some(400))
        );
        assert_eq!(server.seen()[0].body["stream"], true);
    }
}

#[tokio::test]
async fn a_stream_cut_mid_block_is_an_error_not_a_short_answer() {
    let text = stream_events();
    // After the text block's first delta: the block is open.
    let at = text.find("text_delta").unwrap();
    let cut = &text.as_bytes()[..at + text[at..].find("\n\n").unwrap() + 2];
    // The server ends the stream well, but before message_stop; and the
    // connection breaks off.
    for finish in [true, false] {
        let server = Server::start(vec![Reply::sse_pieces(&[cut], finish)]).await;
        let error = streamed(&model(&server, |c| c))
            .await
            .unwrap_err()
            .to_string();
        let expected = if finish {
            "before message_stop"
        } else {
            "connection failed"
        };
        assert!(error.contains(expected), "{error}");
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_carries_its_type() {
    let text = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n\
        event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = Server::start(vec![Reply::sse_pieces(&[text.as_bytes()], true)]).await;
    let error = streamed(&model(&server, |c| c)).await.unwrap_err();
    let nodekit_core::Error::Model(e) = error else {
        panic!("{error}")
    };
    assert_eq!(
        (e.kind, e.status, e.code.as_deref(), e.message.as_str()),
        (
            ModelErrorKind::Server,
            Some(529),
            Some("overloaded_error"),
            "Overloaded"
        )
    );
}

#[tokio::test]
async fn overloaded_and_rate_limited_answers_are_retried_after_retry_after() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let limited = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}});
    let ok = json!({"id": "m", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let server = Server::start(vec![
        Reply::with_headers(
            529,
            &[("content-type", "application/json"), ("retry-after", "0")],
            overloaded.to_string().as_bytes(),
        ),
        Reply::with_headers(
            429,
            &[("content-type", "application/json"), ("retry-after", "0")],
            limited.to_string().as_bytes(),
        ),
        Reply::json(200, &ok),
    ])
    .await;
    let answer = model(&server, |mut c| {
        c.max_retries = 2;
        c
    })
    .invoke(&[Message::human("hi")], &CallOptions::default())
    .await
    .unwrap();
    assert_eq!(answer.text(), "ok");
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn a_refusal_carries_the_providers_message_status_and_type_without_the_key() {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("messages.0: bad key {KEY}")}});
    let server = Server::start(vec![Reply::json(400, &body)]).await;
    let error = model(&server, |c| c)
        .invoke(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap_err();
    let nodekit_core::Error::Model(e) = &error else {
        panic!("{error}")
    };
    assert_eq!(
        (e.kind, e.status, e.code.as_deref()),
        (
            ModelErrorKind::BadRequest,
            Some(400),
            Some("invalid_request_error")
        )
    );
    assert!(
        e.message.starts_with("messages.0: bad key"),
        "{}",
        e.message
    );
    assert!(!error.to_string().contains(KEY) && !format!("{error:?}").contains(KEY));
    assert!(!format!("{model:?}", model = model(&server, |c| c)).contains(KEY));
}

#[tokio::test]
async fn structured_output_tool_choice_and_settings_reach_the_body() {
    let ok = json!({"id": "m", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "{\"city\":\"Paris\"}"}], "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let server = Server::start(vec![Reply::json(200, &ok)]).await;
    let model = model(&server, |mut c| {
        c.settings.temperature = Some(0.2);
        c.settings.max_tokens = Some(512);
        c.top_k = Some(40);
        c
    });
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false});
    let options = CallOptions {
        tools: vec![weather_tool()],
        tool_choice: Some(ToolChoice::Tool("get_weather".into())),
        response_format: Some(ResponseFormat::JsonSchema {
            name: "city".into(),
            schema: schema.clone(),
            strict: true,
        }),
        ..CallOptions::default()
    };
    model
        .invoke(&[Message::human("Where?")], &options)
        .await
        .unwrap();
    let body = &server.seen()[0].body;
    assert_eq!(
        body["output_config"],
        json!({"format": {"type": "json_schema", "schema": schema}})
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "get_weather"})
    );
    assert_eq!(
        (
            body["temperature"].as_f64(),
            body["max_tokens"].as_u64(),
            body["top_k"].as_u64()
        ),
        (Some(0.2), Some(512), Some(40))
    );
    for (choice, wire) in [
        (ToolChoice::Required, json!({"type": "any"})),
        (ToolChoice::None, json!({"type": "none"})),
    ] {
        let options = CallOptions {
            tools: vec![weather_tool()],
            tool_choice: Some(choice),
            ..CallOptions::default()
        };
        let sent: Value = serde_json::from_slice(
            &model
                .request_body(&[Message::human("x")], &options, false)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(sent["tool_choice"], wire);
    }
}

#[tokio::test]
async fn signed_thinking_survives_memorys_stored_form_and_goes_back_unchanged() {
    let server = Server::start(vec![Reply::json(200, &json!({}))]).await;
    let model = model(&server, |c| c.thinking_budget(1024));
    let stored: Vec<Value> = conversation().iter().map(Message::to_stored).collect();
    let read: Vec<Message> = stored
        .iter()
        .map(|s| Message::from_stored(s).unwrap())
        .collect();
    let direct: Value = serde_json::from_slice(
        &model
            .request_body(&conversation(), &CallOptions::default(), false)
            .unwrap(),
    )
    .unwrap();
    let remembered: Value = serde_json::from_slice(
        &model
            .request_body(&read, &CallOptions::default(), false)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(direct, remembered);
    assert_eq!(
        remembered["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Both cities: two calls.", "signature": "EqQBCkYIBxgCKkA"})
    );
}

#[tokio::test]
async fn what_anthropic_would_refuse_is_refused_before_sending_naming_the_block() {
    let server = Server::start(vec![Reply::json(200, &json!({}))]).await;
    let plain = model(&server, |c| c);
    let refusal = |model: &AnthropicChatModel, messages: Vec<Message>| {
        let error = model
            .request_body(&messages, &CallOptions::default(), false)
            .unwrap_err();
        error.to_string()
    };
    // A tool result that answers no call.
    let e = refusal(
        &plain,
        vec![
            Message::human("hi"),
            Message::ai("hello"),
            Message::tool("18°C", "toolu_x"),
        ],
    );
    assert!(
        e.contains("message 2 (a tool result)") && e.contains("toolu_x"),
        "{e}"
    );
    // An image of a type Anthropic does not read.
    let tiff = Message::human(Content::Parts(vec![ContentPart::ImageUrl {
        image_url: ImageUrl {
            url: "data:image/tiff;base64,AAAA".into(),
            detail: None,
        },
    }]));
    let e = refusal(&plain, vec![tiff]);
    assert!(
        e.contains("message 0 (a user message): block 0 (an image)") && e.contains("image/tiff"),
        "{e}"
    );
    // Thinking on, and the turn that called tools has no thinking block.
    let mut called = Message::ai("");
    called.tool_calls = vec![ToolCall {
        id: "toolu_1".into(),
        name: "get_weather".into(),
        args: json!({"city": "Paris"}),
    }];
    let e = refusal(
        &model(&server, |c| c.thinking_budget(1024)),
        vec![
            Message::human("hi"),
            called.clone(),
            Message::tool("18°C", "toolu_1"),
        ],
    );
    assert!(e.contains("turn 1") && e.contains("thinking"), "{e}");
    // The same conversation is fine with thinking off.
    plain
        .request_body(
            &[
                Message::human("hi"),
                called,
                Message::tool("18°C", "toolu_1"),
            ],
            &CallOptions::default(),
            false,
        )
        .unwrap();
    // Arguments that are not an object.
    let mut bad = Message::ai("");
    bad.tool_calls = vec![ToolCall {
        id: "toolu_1".into(),
        name: "get_weather".into(),
        args: json!("Paris"),
    }];
    let e = refusal(&plain, vec![Message::human("hi"), bad]);
    assert!(e.contains("tool_use block `toolu_1`"), "{e}");
    // More than four cache breakpoints.
    let marked = |text: &str| {
        let mut m = Message::human(text);
        m.additional_kwargs
            .insert("cache_control".into(), json!({"type": "ephemeral"}));
        m
    };
    let messages = vec![
        marked("a"),
        Message::ai("b"),
        marked("c"),
        Message::ai("d"),
        marked("e"),
        Message::ai("f"),
        marked("g"),
        Message::ai("h"),
        marked("i"),
    ];
    let e = refusal(&plain, messages);
    assert!(
        e.contains("at most 4 cache_control breakpoints; this request has 5"),
        "{e}"
    );
    // An empty message, and a conversation of only a system prompt.
    assert!(
        refusal(&plain, vec![Message::human("")])
            .contains("message 0 (a user message): it is empty")
    );
    assert!(
        refusal(&plain, vec![Message::system("be terse")])
            .contains("no message besides the system prompt")
    );
    // Settings Anthropic refuses on every call.
    for (budget, max) in [(512, None), (4096, Some(4096))] {
        let mut c = AnthropicConfig::new(KEY, "claude-sonnet-4-5").thinking_budget(budget);
        c.settings.max_tokens = max;
        let e = AnthropicChatModel::new(c).unwrap_err().to_string();
        assert!(e.contains("thinking budget"), "{e}");
    }
    assert!(server.seen().is_empty(), "nothing refused was sent");
}

/// A cited answer: text, a cited text block and more text.
fn cited_blocks() -> Vec<Value> {
    vec![
        json!({"type": "text", "text": "The report says "}),
        json!({"type": "text", "text": "sales rose 4%", "citations": [
            {"type": "char_location", "cited_text": "Sales rose 4% in May.", "document_index": 0, "document_title": "May report", "start_char_index": 0, "end_char_index": 21}
        ]}),
        json!({"type": "text", "text": "."}),
    ]
}

fn expected_cited() -> Content {
    let blocks = cited_blocks();
    Content::Parts(
        blocks
            .iter()
            .map(|b| serde_json::from_value(b.clone()).unwrap())
            .collect(),
    )
}

#[tokio::test]
async fn citations_are_kept_on_their_text_whole_and_streamed_and_go_back() {
    // Whole.
    let server = Server::start(vec![Reply::json(
        200,
        &json!({
            "id": "msg_c", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": cited_blocks(), "stop_reason": "end_turn",
            "usage": {"input_tokens": 9, "output_tokens": 9}
        }),
    )])
    .await;
    let whole = model(&server, |c| c)
        .invoke(&[Message::human("Sales?")], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(whole.content, expected_cited());
    assert_eq!(whole.text(), "The report says sales rose 4%.");
    let Content::Parts(parts) = &whole.content else {
        unreachable!()
    };
    let ContentPart::Text { citations, .. } = &parts[1] else {
        unreachable!()
    };
    assert_eq!(citations[0].title(), Some("May report"));

    // Streamed: each citation comes as a `citations_delta` before its text.
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_c", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 9, "output_tokens": 1}}}),
    ];
    for (index, block) in cited_blocks().iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": "", "citations": []}}));
        for citation in block["citations"].as_array().into_iter().flatten() {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "citations_delta", "citation": citation}}));
        }
        events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}));
    events.push(json!({"type": "message_stop"}));
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    for size in [text.len(), 1, 7] {
        let pieces: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
        let server = Server::start(vec![Reply::sse_pieces(&pieces, true)]).await;
        let answer = streamed(&model(&server, |c| c)).await.unwrap();
        assert_eq!(answer.content, expected_cited(), "pieces of {size} bytes");
    }

    // Sent back on the next turn as Anthropic gave them; another
    // provider's citations are left off their text.
    let mut foreign = Message::ai(Content::Parts(vec![ContentPart::Text {
        text: "See the page.".into(),
        citations: vec![serde_json::from_value(
            json!({"type": "url_citation", "url": "https://x", "start_index": 0, "end_index": 3}),
        )
        .unwrap()],
    }]));
    foreign.id = None;
    let body: Value = serde_json::from_slice(
        &model(&server, |c| c)
            .request_body(
                &[
                    Message::human("Sales?"),
                    whole,
                    Message::human("And this?"),
                    foreign,
                    Message::human("Thanks."),
                ],
                &CallOptions::default(),
                false,
            )
            .unwrap(),
    )
    .unwrap();
    assert_eq!(body["messages"][1]["content"], json!(cited_blocks()));
    assert_eq!(
        body["messages"][3]["content"],
        json!([{"type": "text", "text": "See the page."}])
    );
}

#[tokio::test]
async fn anthropics_own_blocks_kept_from_memory_go_back_and_others_are_refused_by_name() {
    let server = Server::start(vec![]).await;
    let m = model(&server, |c| c);
    // A document with citations asked for, and a server tool's call and
    // result, as LangChain keeps them.
    let document = json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Sales rose 4% in May."}, "title": "May report", "citations": {"enabled": true}});
    let search = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "sales"}});
    let stored = |role: &str, blocks: Vec<Value>| {
        Message::from_stored(&json!({"type": role, "data": {"content": blocks}})).unwrap()
    };
    let messages = [
        stored(
            "human",
            vec![document.clone(), json!({"type": "text", "text": "Sales?"})],
        ),
        stored(
            "ai",
            vec![search.clone(), json!({"type": "text", "text": "Up 4%."})],
        ),
        Message::human("Thanks."),
    ];
    let body: Value = serde_json::from_slice(
        &m.request_body(&messages, &CallOptions::default(), false)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(body["messages"][0]["content"][0], document);
    assert_eq!(body["messages"][1]["content"][0], search);

    // Gemini's inline data, kept from another conversation, is named.
    let e = m
        .request_body(
            &[stored(
                "human",
                vec![json!({"type": "inlineData", "inlineData": {"mimeType": "image/png", "data": "iVBO"}})],
            )],
            &CallOptions::default(),
            false,
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("block 0 is a `inlineData` block, which Anthropic does not take"),
        "{e}"
    );
}

//! The Gemini client against a real HTTP server on 127.0.0.1 that answers
//! in the Generative Language API's exact wire format.

use futures::StreamExt;
use nodekit_core::embed::Embedder;
use nodekit_core::message::{Content, ContentPart, ImageUrl, Message, ToolCall};
use nodekit_core::model::{
    CallOptions, ChatModel, ModelErrorKind, ResponseFormat, StreamAccumulator, ToolChoice,
};
use nodekit_core::tool::ToolDefinition;
use nodekit_gemini::{
    GeminiChatModel, GeminiConfig, GeminiEmbedder, GeminiEmbeddingsConfig, SafetySetting,
};
use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

const KEY: &str = "AIzaSy-test-0123456789abcdef";

fn base(server: &Server) -> &str {
    server.base_url.trim_end_matches("/v1")
}

fn model(server: &Server, config: impl FnOnce(GeminiConfig) -> GeminiConfig) -> GeminiChatModel {
    let mut c = GeminiConfig::new(KEY, "models/gemini-2.5-flash").base_url(base(server));
    c.max_retries = 1;
    GeminiChatModel::new(config(c)).unwrap()
}

fn weather_tool() -> ToolDefinition {
    ToolDefinition {
        name: "get_weather".into(),
        description: "The weather in a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    }
}

fn answer(parts: Value, finish: &str) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 60, "candidatesTokenCount": 10, "thoughtsTokenCount": 25, "totalTokenCount": 135},
        "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"
    })
}

#[tokio::test]
async fn function_calls_come_back_with_their_thought_signature_and_usage() {
    let server = Server::start(vec![Reply::json(200, &answer(json!([
        {"text": "Weighing both cities.", "thought": true},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "CiQBsig=="},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
    ]), "STOP"))])
    .await;
    let model = model(&server, |c| c.thinking_budget(1024));
    let options = CallOptions {
        tools: vec![weather_tool()],
        tool_choice: Some(ToolChoice::Auto),
        ..CallOptions::default()
    };
    let reply = model
        .invoke(
            &[
                Message::system("Be terse."),
                Message::human("Weather in Paris and Rome?"),
            ],
            &options,
        )
        .await
        .unwrap();
    assert_eq!(
        reply.content,
        Content::Parts(vec![ContentPart::Thinking {
            thinking: "Weighing both cities.".into(),
            signature: Some("CiQBsig==".into())
        }])
    );
    let calls: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.args["city"].as_str().unwrap()))
        .collect();
    assert_eq!(calls, [("get_weather", "Paris"), ("get_weather", "Rome")]);
    assert_eq!(reply.additional_kwargs["finish_reason"], "tool_calls");
    let usage = reply.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (100, 35, 135)
    );
    assert_eq!(
        (usage.cache_read_tokens, usage.reasoning_tokens),
        (Some(60), Some(25))
    );

    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(seen.header("x-goog-api-key"), Some(KEY));
    assert_eq!(
        seen.body,
        json!({
            "contents": [{"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]}],
            "systemInstruction": {"role": "user", "parts": [{"text": "Be terse."}]},
            "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "The weather in a city",
                "parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}}
        })
    );

    // The next turn: the signature goes back on the first call, the results by name.
    let mut next = vec![Message::human("Weather in Paris and Rome?"), reply.clone()];
    for (call, result) in reply.tool_calls.iter().zip(["18°C", "{\"temp\": 24}"]) {
        next.push(Message::tool(result, call.id.clone()));
    }
    let body: Value =
        serde_json::from_slice(&model.request_body(&next, &CallOptions::default()).unwrap())
            .unwrap();
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "CiQBsig=="},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
        ]})
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"result": "18°C"}}},
            {"functionResponse": {"name": "get_weather", "response": {"temp": 24}}}
        ]})
    );
    // Through memory's stored form, the same.
    let remembered: Vec<Message> = next
        .iter()
        .map(|m| Message::from_stored(&m.to_stored()).unwrap())
        .collect();
    assert_eq!(
        model
            .request_body(&remembered, &CallOptions::default())
            .unwrap(),
        model.request_body(&next, &CallOptions::default()).unwrap()
    );
}

#[tokio::test]
async fn a_stream_is_read_whole_and_in_1_and_7_byte_pieces() {
    let responses = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Thinking about ", "thought": true}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Paris.", "thought": true}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It is ", "thoughtSignature": "sig-s"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "18°C ☀"}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 4, "thoughtsTokenCount": 6, "totalTokenCount": 18}}),
    ];
    let text: String = responses
        .iter()
        .map(|r| format!("data: {r}\r\n\r\n"))
        .collect();
    for size in [text.len(), 1, 7] {
        let pieces: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
        let server = Server::start(vec![Reply::sse_pieces(&pieces, true)]).await;
        let model = model(&server, |mut c| {
            c.include_thoughts = true;
            c
        });
        let mut stream = model
            .stream(&[Message::human("Weather?")], &CallOptions::default())
            .await
            .unwrap();
        let mut acc = StreamAccumulator::default();
        while let Some(chunk) = stream.next().await {
            acc.push(&chunk.unwrap());
        }
        let reply = acc.into_message();
        assert_eq!(
            reply.content,
            Content::Parts(vec![
                ContentPart::Thinking {
                    thinking: "Thinking about Paris.".into(),
                    signature: Some("sig-s".into())
                },
                ContentPart::text("It is 18°C ☀"),
            ]),
            "pieces of {size} bytes"
        );
        assert_eq!(reply.usage.unwrap().output_tokens, 10);
        let seen = &server.seen()[0];
        assert_eq!(
            seen.path,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            seen.body["generationConfig"],
            json!({"thinkingConfig": {"includeThoughts": true}})
        );
    }
}

#[tokio::test]
async fn a_stream_cut_before_its_finish_reason_is_an_error() {
    let text = format!(
        "data: {}\n\n",
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It is"}]}}]})
    );
    for finish in [true, false] {
        let server = Server::start(vec![Reply::sse_pieces(&[text.as_bytes()], finish)]).await;
        let mut stream = model(&server, |c| c)
            .stream(&[Message::human("Weather?")], &CallOptions::default())
            .await
            .unwrap();
        let mut error = None;
        while let Some(chunk) = stream.next().await {
            if let Err(e) = chunk {
                error = Some(e.to_string());
            }
        }
        let error = error.expect("a cut stream is an error");
        assert!(
            error.contains(if finish {
                "before Gemini's finishReason"
            } else {
                "connection failed"
            }),
            "{error}"
        );
    }
}

#[tokio::test]
async fn safety_blocks_are_errors_that_name_the_category() {
    let prompt = json!({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}]}});
    let answer = json!({"candidates": [{"finishReason": "SAFETY", "safetyRatings": [
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "MEDIUM"}]}]});
    let server = Server::start(vec![Reply::json(200, &prompt), Reply::json(200, &answer)]).await;
    let model = model(&server, |mut c| {
        c.safety_settings = vec![SafetySetting::new(
            "HARM_CATEGORY_DANGEROUS_CONTENT",
            "BLOCK_LOW_AND_ABOVE",
        )];
        c
    });
    for expected in [
        "the prompt (SAFETY): HARM_CATEGORY_DANGEROUS_CONTENT (probability HIGH)",
        "the answer (SAFETY): HARM_CATEGORY_HATE_SPEECH (probability MEDIUM)",
    ] {
        let error = model
            .invoke(&[Message::human("…")], &CallOptions::default())
            .await
            .unwrap_err();
        assert!(error.to_string().contains(expected), "{error}");
    }
    assert_eq!(
        server.seen()[0].body["safetySettings"],
        json!([{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_LOW_AND_ABOVE"}])
    );
}

#[tokio::test]
async fn errors_carry_gemini_s_message_status_and_code_without_the_key() {
    let body = json!({"error": {"code": 400, "message": format!("API key not valid: {KEY}"), "status": "INVALID_ARGUMENT"}});
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
            Some("INVALID_ARGUMENT")
        )
    );
    assert!(e.message.starts_with("API key not valid"), "{}", e.message);
    assert!(!error.to_string().contains(KEY));
}

#[tokio::test]
async fn structured_output_settings_and_refusals_before_sending() {
    let server = Server::start(vec![Reply::json(
        200,
        &answer(json!([{"text": "{\"city\": \"Paris\"}"}]), "STOP"),
    )])
    .await;
    let model = model(&server, |mut c| {
        c.settings.temperature = Some(0.3);
        c.settings.max_tokens = Some(256);
        c.top_k = Some(20);
        c
    });
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
    let options = CallOptions {
        response_format: Some(ResponseFormat::JsonSchema {
            name: "city".into(),
            schema: schema.clone(),
            strict: true,
        }),
        tools: vec![weather_tool()],
        tool_choice: Some(ToolChoice::Tool("get_weather".into())),
        stop: vec!["END".into()],
        ..CallOptions::default()
    };
    assert_eq!(
        model
            .invoke(&[Message::human("Where?")], &options)
            .await
            .unwrap()
            .text(),
        "{\"city\": \"Paris\"}"
    );
    let body = &server.seen()[0].body;
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 0.3, "topK": 20, "maxOutputTokens": 256, "stopSequences": ["END"],
        "responseMimeType": "application/json", "responseJsonSchema": schema})
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}})
    );

    let refusal = |messages: Vec<Message>| {
        model
            .request_body(&messages, &CallOptions::default())
            .unwrap_err()
            .to_string()
    };
    let e = refusal(vec![
        Message::human("hi"),
        Message::ai("hello"),
        Message::tool("18°C", "call_9"),
    ]);
    assert!(
        e.contains("message 2 (a tool result)") && e.contains("call_9"),
        "{e}"
    );
    let bad = Message::human(Content::Parts(vec![ContentPart::ImageUrl {
        image_url: ImageUrl {
            url: "ftp://x/y.png".into(),
            detail: None,
        },
    }]));
    assert!(refusal(vec![bad]).contains("block 0 (an image)"));
    // A block another provider's history kept (Anthropic's document with
    // citations asked for), named.
    let kept = Message::from_stored(&json!({"type": "human", "data": {"content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}, "citations": {"enabled": true}}
    ]}}))
    .unwrap();
    let e = refusal(vec![kept]);
    assert!(
        e.contains("block 0 is a `document` block, which Gemini does not take"),
        "{e}"
    );
    let mut args = Message::ai("");
    args.tool_calls = vec![ToolCall {
        id: "c".into(),
        name: "get_weather".into(),
        args: json!([1]),
    }];
    assert!(refusal(vec![Message::human("hi"), args]).contains("functionCall `c`"));
    assert!(
        refusal(vec![Message::system("x")]).contains("no message besides the system instruction")
    );
    assert!(GeminiChatModel::new(GeminiConfig::new(KEY, "../secrets")).is_err());
}

#[tokio::test]
async fn embeddings_use_embed_content_for_one_text_and_batches_for_more() {
    let server = Server::start_answering(|_, seen| {
        let body = if seen.path.ends_with(":embedContent") {
            json!({"embedding": {"values": [0.5, 0.25]}})
        } else {
            let n = seen.body["requests"].as_array().map_or(0, Vec::len);
            json!({"embeddings": (0..n).map(|i| json!({"values": [i as f64, 1.0]})).collect::<Vec<_>>()})
        };
        Reply::json(200, &body)
    })
    .await;
    let mut config =
        GeminiEmbeddingsConfig::new(KEY, "gemini-embedding-001").base_url(base(&server));
    config.task_type = Some("RETRIEVAL_DOCUMENT".into());
    config.dimensions = Some(2);
    config.batch_size = 2;
    let embedder = GeminiEmbedder::new(config).unwrap();
    assert_eq!(
        embedder.embed(&["one".into()]).await.unwrap(),
        vec![vec![0.5, 0.25]]
    );
    let texts: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    assert_eq!(
        embedder.embed(&texts).await.unwrap(),
        vec![vec![0.0, 1.0], vec![1.0, 1.0], vec![0.0, 1.0]]
    );
    let seen = server.seen();
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-embedding-001:embedContent"
    );
    assert_eq!(
        seen[0].body,
        json!({"content": {"parts": [{"text": "one"}]}, "taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 2})
    );
    assert_eq!(
        seen[1].path,
        "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    );
    assert_eq!(
        seen[1].body["requests"][1],
        json!({"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "b"}]}, "taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 2})
    );
    assert_eq!(seen.len(), 3);
}

#[tokio::test]
async fn citation_sources_cite_the_answer_whole_and_streamed() {
    let source = json!({"startIndex": 0, "endIndex": 12, "uri": "https://example.com/may", "license": "CC-BY"});
    let cited = || {
        let c = json!({"type": "url_citation", "url": "https://example.com/may", "start_index": 0, "end_index": 12, "license": "CC-BY"});
        Content::Parts(vec![ContentPart::Text {
            text: "Sales rose 4%.".into(),
            citations: vec![serde_json::from_value(c).unwrap()],
        }])
    };
    let mut whole = answer(json!([{"text": "Sales rose 4%."}]), "STOP");
    whole["candidates"][0]["citationMetadata"] = json!({"citationSources": [source]});
    let server = Server::start(vec![Reply::json(200, &whole)]).await;
    let reply = model(&server, |c| c)
        .invoke(&[Message::human("Sales?")], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.content, cited());

    // A stream repeats the sources it has given; each is kept once.
    let responses = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Sales rose"}]}, "citationMetadata": {"citationSources": [source]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " 4%."}]}, "citationMetadata": {"citationSources": [source]}, "finishReason": "STOP"}]}),
    ];
    let text: String = responses
        .iter()
        .map(|r| format!("data: {r}\r\n\r\n"))
        .collect();
    for size in [text.len(), 1, 7] {
        let pieces: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
        let server = Server::start(vec![Reply::sse_pieces(&pieces, true)]).await;
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
}

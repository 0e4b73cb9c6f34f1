//! The Ollama client against a real HTTP server on 127.0.0.1 that answers
//! in `/api/chat`'s exact wire format.

use futures::StreamExt;
use nodekit_core::message::{Content, ContentPart, FileUrl, ImageUrl, Message, ToolCall};
use nodekit_core::model::{
    CallOptions, ChatModel, FinishReason, ModelErrorKind, ModelSettings, ResponseFormat,
    StreamAccumulator, StreamChunk, ToolChoice,
};
use nodekit_core::tool::ToolDefinition;
use nodekit_ollama::{OllamaChatModel, OllamaConfig};
use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

fn model(server: &Server, f: impl FnOnce(OllamaConfig) -> OllamaConfig) -> OllamaChatModel {
    let root = server.base_url.trim_end_matches("/v1");
    let mut config = OllamaConfig::new("qwen3:8b").base_url(root);
    config.max_retries = 0;
    OllamaChatModel::new(f(config)).unwrap()
}

fn weather_tool() -> ToolDefinition {
    ToolDefinition {
        name: "get_weather".into(),
        description: "The weather in a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }
}

fn line(message: Value, done: bool) -> Value {
    json!({"model": "qwen3:8b", "created_at": "2026-12-04T02:00:00Z", "message": message, "done": done})
}

fn model_error(e: nodekit_core::Error) -> nodekit_core::model::ModelError {
    match e {
        nodekit_core::Error::Model(m) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_conversation_is_sent_as_ollama_takes_it_and_the_answer_is_read() {
    let mut answer = line(
        json!({"role": "assistant", "content": "", "thinking": "Paris first.",
               "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                              {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}),
        true,
    );
    answer["done_reason"] = json!("stop");
    answer["prompt_eval_count"] = json!(40);
    answer["eval_count"] = json!(12);
    let server = Server::start(vec![Reply::json(200, &answer)]).await;
    let m = model(&server, |mut c| {
        c.settings.temperature = Some(0.2);
        c.options.insert("num_ctx".into(), json!(8192));
        c.options.insert("top_k".into(), json!(20));
        c.keep_alive = Some(json!("10m"));
        c.think = Some(true);
        c.api_key = Some("proxy-token".into());
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
            ContentPart::text("And here?"),
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,iVBORw0=".into(),
                    detail: None,
                },
            },
        ]),
        ..Message::human("")
    };
    let messages = [
        Message::system("Be brief."),
        Message::human("Weather in Rome?"),
        earlier,
        Message {
            name: Some("get_weather".into()),
            ..Message::tool("sunny", "call_0")
        },
        picture,
    ];
    let options = CallOptions {
        tools: vec![weather_tool()],
        stop: vec!["END".into()],
        response_format: Some(ResponseFormat::JsonSchema {
            name: "w".into(),
            schema: json!({"type": "object"}),
            strict: true,
        }),
        overrides: ModelSettings {
            max_tokens: Some(256),
            ..Default::default()
        },
        ..Default::default()
    };
    let message = m.invoke(&messages, &options).await.unwrap();
    assert_eq!(message.reasoning().as_deref(), Some("Paris first."));
    let calls: Vec<(&str, &Value)> = message
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), &c.args))
        .collect();
    assert_eq!(
        calls,
        [
            ("get_weather", &json!({"city": "Paris"})),
            ("get_weather", &json!({"city": "Oslo"}))
        ]
    );
    assert_ne!(message.tool_calls[0].id, message.tool_calls[1].id);
    let usage = message.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (40, 12, 52)
    );

    let [seen] = server.seen().try_into().unwrap();
    assert_eq!(seen.path, "/api/chat");
    assert_eq!(seen.header("authorization"), Some("Bearer proxy-token"));
    let b = &seen.body;
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Rome?"},
            {"role": "assistant", "content": "Looking.",
             "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]},
            {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
            {"role": "user", "content": "And here?", "images": ["iVBORw0="]}
        ])
    );
    assert_eq!(
        b["options"],
        json!({"num_ctx": 8192, "top_k": 20, "temperature": 0.2, "num_predict": 256, "stop": ["END"]})
    );
    assert_eq!(b["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(b["format"], json!({"type": "object"}));
    assert_eq!(
        (&b["stream"], &b["keep_alive"], &b["think"]),
        (&json!(false), &json!("10m"), &json!(true))
    );
}

#[tokio::test]
async fn a_streamed_answer_is_read_whole_and_in_1_and_7_byte_pieces() {
    let mut last = line(json!({"role": "assistant", "content": ""}), true);
    last["done_reason"] = json!("length");
    last["prompt_eval_count"] = json!(5);
    last["eval_count"] = json!(3);
    let lines: String = [
        line(
            json!({"role": "assistant", "content": "", "thinking": "Hm."}),
            false,
        ),
        line(json!({"role": "assistant", "content": "Hel"}), false),
        line(json!({"role": "assistant", "content": "lo"}), false),
        last,
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect();
    for size in [lines.len(), 1, 7] {
        let pieces: Vec<&[u8]> = lines.as_bytes().chunks(size).collect();
        let server = Server::start(vec![Reply::stream_pieces(
            "application/x-ndjson",
            &pieces,
            true,
        )])
        .await;
        let m = model(&server, |c| c);
        let mut stream = m
            .stream(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap();
        let mut acc = StreamAccumulator::default();
        let mut finish = None;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.unwrap();
            if let StreamChunk::Finish { reason, .. } = &chunk {
                finish = Some(reason.clone());
            }
            acc.push(&chunk);
        }
        let message = acc.into_message();
        assert_eq!(
            (message.text(), message.reasoning()),
            ("Hello".into(), Some("Hm.".into()))
        );
        assert_eq!(finish, Some(FinishReason::Length), "pieces of {size} bytes");
        assert_eq!(message.usage.unwrap().total_tokens, 8);
        assert_eq!(server.seen()[0].body["stream"], true);
    }
}

#[tokio::test]
async fn what_ollama_cannot_take_and_how_it_fails() {
    let server = Server::start(vec![
        Reply::json(
            404,
            &json!({"error": "model \"qwen3:8b\" not found, try pulling it first"}),
        ),
        Reply::json_lines(
            &[
                line(json!({"role": "assistant", "content": "Hi"}), false),
                json!({"error": "out of memory"}),
            ],
            true,
        ),
        // Ended without its `done` line.
        Reply::json_lines(
            &[line(json!({"role": "assistant", "content": "Hi"}), false)],
            true,
        ),
        Reply::json(
            200,
            &line(json!({"role": "assistant", "content": "none"}), true),
        ),
    ])
    .await;
    let m = model(&server, |c| c);
    let hi = [Message::human("hi")];
    let e = model_error(m.invoke(&hi, &CallOptions::default()).await.unwrap_err());
    assert_eq!((e.kind, e.status), (ModelErrorKind::NotFound, Some(404)));
    assert!(e.message.contains("try pulling it first"), "{}", e.message);

    let collect = |s: nodekit_core::model::ChunkStream| async move {
        s.collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
    };
    let e = model_error(
        collect(m.stream(&hi, &CallOptions::default()).await.unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.message, "out of memory");
    let e = model_error(
        collect(m.stream(&hi, &CallOptions::default()).await.unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.kind, ModelErrorKind::Protocol, "{e:?}");
    assert!(
        e.message.contains("before the answer was done"),
        "{}",
        e.message
    );

    // "none" sends no tools, since Ollama cannot be told not to call them.
    let none = CallOptions {
        tools: vec![weather_tool()],
        tool_choice: Some(ToolChoice::None),
        ..Default::default()
    };
    m.invoke(&hi, &none).await.unwrap();
    assert!(server.seen()[3].body.get("tools").is_none());

    // Refused before sending, naming the message.
    for part in [
        ContentPart::ImageUrl {
            image_url: ImageUrl {
                url: "https://example.com/a.png".into(),
                detail: None,
            },
        },
        ContentPart::File {
            file: FileUrl {
                url: "data:application/pdf;base64,JVBERi0=".into(),
                filename: None,
                mime_type: None,
            },
        },
    ] {
        let message = Message {
            content: Content::Parts(vec![part]),
            ..Message::human("")
        };
        let e = model_error(
            m.invoke(&[Message::system("s"), message], &CallOptions::default())
                .await
                .unwrap_err(),
        );
        assert_eq!(e.kind, ModelErrorKind::BadRequest);
        assert!(
            e.message.starts_with("message 1: Ollama takes"),
            "{}",
            e.message
        );
    }
    assert_eq!(server.seen().len(), 4);
}

#[tokio::test]
async fn texts_are_embedded_in_batches_in_order() {
    use nodekit_core::embed::Embedder;
    use nodekit_ollama::{OllamaEmbedder, OllamaEmbeddingsConfig};
    let server = Server::start(vec![
        Reply::json(
            200,
            &json!({"model": "nomic-embed-text", "embeddings": [[0.1, 0.2], [0.3, 0.4]]}),
        ),
        Reply::json(
            200,
            &json!({"model": "nomic-embed-text", "embeddings": [[0.5, 0.6]]}),
        ),
        Reply::json(
            200,
            &json!({"model": "nomic-embed-text", "embeddings": [[0.5, 0.6]]}),
        ),
        Reply::json(
            404,
            &json!({"error": "model \"nope\" not found, try pulling it first"}),
        ),
    ])
    .await;
    let root = server.base_url.trim_end_matches("/v1");
    let mut config = OllamaEmbeddingsConfig::new("nomic-embed-text").base_url(root);
    config.batch_size = 2;
    config.keep_alive = Some(json!("1m"));
    let embedder = OllamaEmbedder::new(config.clone()).unwrap();
    let texts: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let vectors = embedder.embed(&texts).await.unwrap();
    assert_eq!(vectors, [vec![0.1, 0.2], vec![0.3, 0.4], vec![0.5, 0.6]]);
    let seen = server.seen();
    assert_eq!(seen[0].path, "/api/embed");
    assert_eq!(
        seen[0].body,
        json!({"model": "nomic-embed-text", "input": ["a", "b"], "keep_alive": "1m"})
    );
    assert_eq!(seen[1].body["input"], json!(["c"]));
    // An answer of the wrong length, and a missing model.
    let e = embedder.embed(&texts[..2]).await.unwrap_err().to_string();
    assert!(e.contains("asked for 2 embeddings, got 1"), "{e}");
    let e = embedder.embed(&texts[..1]).await.unwrap_err().to_string();
    assert!(e.contains("try pulling it first"), "{e}");
}

//! Messages in LangChain's stored form (what n8n persists) and in nodekit's own.

use nodekit::message::{
    Citation, Content, ContentPart, FileUrl, ImageUrl, Message, Role, ToolCall, Usage,
};
use serde_json::{Value, json};

fn langchain() -> Vec<Value> {
    serde_json::from_str(include_str!("fixtures/langchain_stored.json")).unwrap()
}

fn ours() -> Vec<Message> {
    let mut ai = Message::ai("");
    ai.tool_calls.push(ToolCall {
        id: "c1".into(),
        name: "t0".into(),
        args: json!({"x": 1}),
    });
    ai.usage = Some(Usage {
        input_tokens: 3,
        output_tokens: 4,
        total_tokens: 7,
        ..Default::default()
    });
    let mut tool = Message::tool("ok", "c1");
    tool.name = Some("t0".into());
    let mut parts = Message::human(Content::Parts(vec![
        ContentPart::text("look"),
        ContentPart::ImageUrl {
            image_url: ImageUrl {
                url: "data:x".into(),
                detail: None,
            },
        },
    ]));
    parts.name = Some("bob".into());
    vec![
        Message::human("hi"),
        parts,
        ai,
        tool,
        Message::system("sys"),
        Message::function("f", "fn"),
        Message::ai("plain"),
        Message::chat("critic", "hello there"),
    ]
    .into_iter()
    .chain(with_every_block())
    .collect()
}

/// Messages with every kind of block: documents inline and by address,
/// signed and redacted reasoning, cited text, and a block nodekit does not
/// model. The chat-history stores' tests use them too.
pub fn with_every_block() -> Vec<Message> {
    let file = |url: &str, filename: Option<&str>, mime_type: Option<&str>| ContentPart::File {
        file: FileUrl {
            url: url.into(),
            filename: filename.map(Into::into),
            mime_type: mime_type.map(Into::into),
        },
    };
    let human = Message::human(Content::Parts(vec![
        ContentPart::text("summarise"),
        file("data:application/pdf;base64,JVBERi0=", Some("a.pdf"), None),
        file("https://example.com/b.pdf", None, Some("application/pdf")),
    ]));
    let mut cited = Citation::new("char_location");
    cited.cited_text = Some("Sales rose 4%.".into());
    for (key, value) in [
        ("document_index", json!(0)),
        ("document_title", json!("a.pdf")),
        ("start_char_index", json!(0)),
        ("end_char_index", json!(14)),
    ] {
        cited.fields.insert(key.into(), value);
    }
    let server_tool = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "sales"}});
    let ai = Message::ai(Content::Parts(vec![
        ContentPart::Thinking {
            thinking: "The report says".into(),
            signature: Some("sig==".into()),
        },
        ContentPart::RedactedThinking {
            data: "enc==".into(),
        },
        ContentPart::text("It says "),
        ContentPart::Text {
            text: "sales rose".into(),
            citations: vec![cited],
        },
        ContentPart::Other(server_tool.as_object().unwrap().clone()),
    ]));
    vec![human, ai]
}

#[test]
fn stored_form_matches_langchain() {
    assert_eq!(ours().len(), langchain().len());
    for (message, expected) in ours().iter().zip(langchain()) {
        assert!(
            message.to_stored() == expected,
            "{}\n!=\n{expected}",
            message.to_stored()
        );
    }
}

#[test]
fn langchain_messages_read_back_unchanged() {
    for (stored, expected) in langchain().iter().zip(ours()) {
        let m = Message::from_stored(stored).unwrap();
        assert_eq!(m, expected);
        assert_eq!(&m.to_stored(), stored);
        assert_eq!(Message::from_json(stored).unwrap(), expected);
    }
}

#[test]
fn our_form_round_trips() {
    for m in ours() {
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(Message::from_json(&v).unwrap(), m);
    }
    assert_eq!(
        serde_json::to_value(Message::tool("ok", "c1")).unwrap(),
        json!({"role": "tool", "content": "ok", "toolCallId": "c1"})
    );
}

#[test]
fn older_langchain_tool_calls_in_additional_kwargs() {
    let stored = json!({"type": "ai", "data": {"content": "x", "additional_kwargs": {"tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}
    ]}}});
    let m = Message::from_stored(&stored).unwrap();
    assert_eq!(
        m.tool_calls,
        [ToolCall {
            id: "c".into(),
            name: "f".into(),
            args: json!({"a": 1})
        }]
    );
    let minimal =
        Message::from_stored(&json!({"type": "human", "data": {"content": "old"}})).unwrap();
    assert_eq!(
        (minimal.role, minimal.text()),
        (Role::Human, "old".to_owned())
    );
}

#[test]
fn unreadable_stored_messages_say_why() {
    for (stored, why) in [
        (
            json!({"data": {}}),
            "a stored message needs a string `type`",
        ),
        (
            json!({"type": "robot", "data": {}}),
            "unknown message type `robot`",
        ),
        (
            json!({"type": "human"}),
            "a stored message needs a `data` object",
        ),
        (
            json!({"type": "human", "data": {"content": 5}}),
            "unreadable content",
        ),
        (
            json!({"type": "generic", "data": {"content": "x"}}),
            "a generic message needs a string `role`",
        ),
    ] {
        let e = Message::from_stored(&stored).unwrap_err().to_string();
        assert!(e.starts_with(&format!("invalid message: {why}")), "{e}");
    }
}

#[test]
fn prompt_cache_counts_keep_langchains_names() {
    let mut ai = Message::ai("cached");
    ai.usage = Some(Usage {
        input_tokens: 100,
        output_tokens: 5,
        total_tokens: 105,
        cache_read_tokens: Some(60),
        cache_creation_tokens: Some(30),
        reasoning_tokens: None,
    });
    let stored = ai.to_stored();
    assert_eq!(
        stored["data"]["usage_metadata"]["input_token_details"],
        json!({"cache_read": 60, "cache_creation": 30})
    );
    assert_eq!(Message::from_stored(&stored).unwrap(), ai);
    let mut total = ai.usage.unwrap();
    total.add(&ai.usage.unwrap());
    assert_eq!(total.cache_creation_tokens, Some(60));
}

#[test]
fn blocks_are_read_from_every_form_langchain_and_its_providers_write() {
    let read = |block: Value| -> ContentPart {
        let stored = json!({"type": "human", "data": {"content": [block]}});
        match Message::from_stored(&stored).unwrap().content {
            Content::Parts(mut parts) => parts.remove(0),
            other => panic!("{other:?}"),
        }
    };
    let file = |url: &str, filename: Option<&str>, mime_type: Option<&str>| ContentPart::File {
        file: FileUrl {
            url: url.into(),
            filename: filename.map(Into::into),
            mime_type: mime_type.map(Into::into),
        },
    };
    let pdf = "data:application/pdf;base64,JVBERi0=";
    let image = |url: &str| ContentPart::ImageUrl {
        image_url: ImageUrl {
            url: url.into(),
            detail: None,
        },
    };
    for (block, expected) in [
        // OpenAI's, as nodekit wrote them before.
        (
            json!({"type": "file", "file": {"file_data": pdf, "filename": "a.pdf"}}),
            file(pdf, Some("a.pdf"), None),
        ),
        (
            json!({"type": "file", "file": {"url": pdf}}),
            file(pdf, None, None),
        ),
        // Anthropic's.
        (
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}, "title": "a.pdf"}),
            file(pdf, Some("a.pdf"), None),
        ),
        (
            json!({"type": "document", "source": {"type": "url", "url": "https://x/b.pdf"}}),
            file("https://x/b.pdf", None, None),
        ),
        (
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}),
            image("data:image/png;base64,iVBO"),
        ),
        // LangChain's data blocks, old and new.
        (
            json!({"type": "image", "source_type": "url", "url": "https://x/c.png"}),
            image("https://x/c.png"),
        ),
        (
            json!({"type": "file", "mimeType": "application/pdf", "data": "JVBERi0="}),
            file(pdf, None, None),
        ),
        (
            json!({"type": "file", "url": "https://x/b", "mimeType": "application/pdf"}),
            file("https://x/b", None, Some("application/pdf")),
        ),
        (
            json!({"type": "image_url", "image_url": "https://x/c.png"}),
            image("https://x/c.png"),
        ),
        (
            json!({"type": "reasoning", "reasoning": "hmm"}),
            ContentPart::Thinking {
                thinking: "hmm".into(),
                signature: None,
            },
        ),
    ] {
        assert_eq!(read(block.clone()), expected, "{block}");
    }
    // What says more than where the data is stays whole: a document with
    // citations asked for, one by file id, one with a text source.
    for block in [
        json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}, "citations": {"enabled": true}}),
        json!({"type": "file", "source_type": "id", "id": "file-1"}),
        json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hi"}}),
        json!({"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}),
    ] {
        assert_eq!(
            read(block.clone()),
            ContentPart::Other(block.as_object().unwrap().clone())
        );
    }
    for (block, why) in [
        (
            json!({"text": "no type"}),
            "a content block needs a string `type`",
        ),
        (
            json!({"type": "text"}),
            "a text block needs a string `text`",
        ),
        (
            json!({"type": "text", "text": "x", "citations": [{"cited_text": "no type"}]}),
            "a text block's `citations` cannot be read",
        ),
    ] {
        let stored = json!({"type": "human", "data": {"content": [block]}});
        let e = Message::from_stored(&stored).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn tool_calls_kept_in_the_content_too_are_read_once() {
    // ChatAnthropic keeps a call both as a `tool_use` block and in
    // `tool_calls`; sending both would repeat it.
    let stored = json!({"type": "ai", "data": {
        "content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        "tool_calls": [{"name": "f", "args": {}, "type": "tool_call", "id": "t1"}],
    }});
    let m = Message::from_stored(&stored).unwrap();
    assert_eq!(
        m.content,
        Content::Parts(vec![ContentPart::text("Looking.")])
    );
    assert_eq!(m.tool_calls.len(), 1);
}

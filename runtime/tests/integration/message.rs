//! Messages in LangChain's stored form (what n8n persists) and in nodekit's own.

use nodekit::message::{Content, ContentPart, ImageUrl, Message, Role, ToolCall, Usage};
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
        ContentPart::Text {
            text: "look".into(),
        },
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

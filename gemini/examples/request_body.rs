//! Prints the `generateContent` request bodies nodekit sends for two
//! fixed conversations, one a line: the first with a system instruction,
//! an image, a function call and its response, tools and settings; the
//! second with thinking (a thought signature sent back on its call) and
//! structured output. `scripts/provider-sdks.sh` compares them with the
//! bodies the official `google-genai` SDK sends for the same conversations.
//!
//! `cargo run -p nodekit-gemini --example request_body`

use nodekit_core::message::{Content, ContentPart, ImageUrl, Message, ToolCall};
use nodekit_core::model::{CallOptions, ModelSettings, ResponseFormat};
use nodekit_core::tool::ToolDefinition;
use nodekit_gemini::{GeminiChatModel, GeminiConfig};
use serde_json::json;

fn main() -> nodekit_core::error::Result<()> {
    let config = GeminiConfig::new("AIza-example", "gemini-2.5-flash").settings(ModelSettings {
        temperature: Some(0.5),
        max_tokens: Some(1024),
        top_p: Some(0.9),
        ..ModelSettings::default()
    });
    let model = GeminiChatModel::new(config)?;
    let mut asked = Message::ai("");
    asked.tool_calls.push(ToolCall {
        id: "call_1".into(),
        name: "get_weather".into(),
        args: json!({"city": "Paris"}),
    });
    let picture = Message {
        content: Content::Parts(vec![
            ContentPart::text("And what is in this picture?"),
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,iVBORw0KGgo=".into(),
                    detail: None,
                },
            },
        ]),
        ..Message::human("")
    };
    let messages = [
        Message::system("Be brief."),
        Message::human("What is the weather in Paris?"),
        asked,
        Message {
            name: Some("get_weather".into()),
            ..Message::tool("Sunny, 21 °C", "call_1")
        },
        picture,
    ];
    let options = CallOptions {
        tools: vec![ToolDefinition {
            name: "get_weather".into(),
            description: "The weather in a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }],
        stop: vec!["END".into()],
        ..CallOptions::default()
    };
    let body = model.request_body(&messages, &options)?;
    println!("{}", String::from_utf8_lossy(&body));

    let mut config = GeminiConfig::new("AIza-example", "gemini-2.5-flash").thinking_budget(1024);
    config.include_thoughts = true;
    let model = GeminiChatModel::new(config)?;
    // A thought signature is base64 on the wire ("sig-g").
    let mut thought = Message::ai(Content::Parts(vec![ContentPart::Thinking {
        thinking: String::new(),
        signature: Some("c2lnLWc=".into()),
    }]));
    thought.tool_calls.push(ToolCall {
        id: "call_1".into(),
        name: "get_weather".into(),
        args: json!({"city": "Paris"}),
    });
    let messages = [
        Message::system("Answer as JSON."),
        Message::human("What is the weather in Paris?"),
        thought,
        Message {
            name: Some("get_weather".into()),
            ..Message::tool("Sunny, 21 °C", "call_1")
        },
    ];
    let options = CallOptions {
        stop: Vec::new(),
        response_format: Some(ResponseFormat::JsonSchema {
            name: "weather".into(),
            schema: json!({"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}),
            strict: true,
        }),
        ..options
    };
    let body = model.request_body(&messages, &options)?;
    println!("{}", String::from_utf8_lossy(&body));
    Ok(())
}

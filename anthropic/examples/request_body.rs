//! Prints the Messages API request body nodekit sends for one fixed
//! conversation (system prompt, an image, a tool call and its result,
//! tools and settings). `scripts/provider-sdks.sh` compares it with the
//! body the official `anthropic` SDK sends for the same conversation.
//!
//! `cargo run -p nodekit-anthropic --example request_body`

use nodekit_anthropic::{AnthropicChatModel, AnthropicConfig};
use nodekit_core::message::{Content, ContentPart, ImageUrl, Message, ToolCall};
use nodekit_core::model::{CallOptions, ModelSettings, ToolChoice};
use nodekit_core::tool::ToolDefinition;
use serde_json::json;

fn main() -> nodekit_core::error::Result<()> {
    let config =
        AnthropicConfig::new("sk-ant-example", "claude-sonnet-4-5").settings(ModelSettings {
            temperature: Some(0.5),
            max_tokens: Some(1024),
            ..ModelSettings::default()
        });
    let model = AnthropicChatModel::new(config)?;
    let mut asked = Message::ai("Let me check.");
    asked.tool_calls.push(ToolCall {
        id: "toolu_01".into(),
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
        Message::tool("Sunny, 21 °C", "toolu_01"),
        picture,
    ];
    let options = CallOptions {
        tools: vec![ToolDefinition {
            name: "get_weather".into(),
            description: "The weather in a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }],
        tool_choice: Some(ToolChoice::Auto),
        stop: vec!["END".into()],
        ..CallOptions::default()
    };
    let body = model.request_body(&messages, &options, false)?;
    println!("{}", String::from_utf8_lossy(&body));
    Ok(())
}

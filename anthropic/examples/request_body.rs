//! Prints the Messages API request bodies nodekit sends for two fixed
//! conversations, one a line: the first with a system prompt, an image, a
//! tool call and its result, tools and settings; the second with extended
//! thinking (a signed thinking block sent back), cache breakpoints on the
//! system prompt and the tools, and structured output.
//! `scripts/provider-sdks.sh` compares them with the bodies the official
//! `anthropic` SDK sends for the same conversations.
//!
//! `cargo run -p nodekit-anthropic --example request_body`

use nodekit_anthropic::{AnthropicChatModel, AnthropicConfig, PromptCache};
use nodekit_core::message::{Content, ContentPart, ImageUrl, Message, ToolCall};
use nodekit_core::model::{CallOptions, ModelSettings, ResponseFormat, ToolChoice};
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

    let config = AnthropicConfig::new("sk-ant-example", "claude-sonnet-4-5")
        .settings(ModelSettings {
            max_tokens: Some(4096),
            ..ModelSettings::default()
        })
        .thinking_budget(2048)
        .prompt_cache({
            let mut cache = PromptCache::default();
            cache.system = true;
            cache.tools = true;
            cache
        });
    let model = AnthropicChatModel::new(config)?;
    let mut thought = Message::ai(Content::Parts(vec![ContentPart::Thinking {
        thinking: "The user wants Paris.".into(),
        signature: Some("EqQBCkYIBxgCKkA".into()),
    }]));
    thought.tool_calls.push(ToolCall {
        id: "toolu_01".into(),
        name: "get_weather".into(),
        args: json!({"city": "Paris"}),
    });
    let messages = [
        Message::system("Answer as JSON."),
        Message::human("What is the weather in Paris?"),
        thought,
        Message::tool("Sunny, 21 °C", "toolu_01"),
    ];
    let options = CallOptions {
        response_format: Some(ResponseFormat::JsonSchema {
            name: "weather".into(),
            schema: json!({"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"], "additionalProperties": false}),
            strict: true,
        }),
        ..options
    };
    let body = model.request_body(&messages, &options, false)?;
    println!("{}", String::from_utf8_lossy(&body));
    Ok(())
}

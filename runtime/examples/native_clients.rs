//! nodekit's native Anthropic and Gemini clients against a server of the
//! provider's format (`scripts/litellm.sh` runs them against the LiteLLM
//! proxy): for each client, a whole and a streamed tool round (the model
//! calls the tool, the result goes back, the model answers quoting it),
//! and an error the server reports (`[status:400]` in the question makes
//! the scripted model behind the proxy fail). Prints one line per check
//! and exits non-zero if one fails.
//!
//! `cargo run -p nodekit --features anthropic,gemini --example native_clients -- http://127.0.0.1:4000`

use futures::StreamExt;
use nodekit::message::Message;
use nodekit::model::anthropic::{AnthropicChatModel, AnthropicConfig};
use nodekit::model::gemini::{GeminiChatModel, GeminiConfig};
use nodekit::model::{CallOptions, ChatModel, StreamAccumulator};
use nodekit::tool::ToolDefinition;
use serde_json::json;

async fn answer(
    model: &dyn ChatModel,
    messages: &[Message],
    streamed: bool,
) -> nodekit::Result<Message> {
    let options = CallOptions {
        tools: vec![ToolDefinition {
            name: "get_weather".into(),
            description: "The weather in a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }],
        ..CallOptions::default()
    };
    if !streamed {
        return model.invoke(messages, &options).await;
    }
    let mut stream = model.stream(messages, &options).await?;
    let mut acc = StreamAccumulator::default();
    while let Some(chunk) = stream.next().await {
        acc.push(&chunk?);
    }
    Ok(acc.into_message())
}

/// A tool round: the call, then the answer quoting the result.
async fn tool_round(model: &dyn ChatModel, streamed: bool) -> Result<(), String> {
    let mut messages = vec![
        Message::system("Be brief."),
        Message::human("What is the weather in Paris?"),
    ];
    let call = answer(model, &messages, streamed)
        .await
        .map_err(|e| e.to_string())?;
    let asked = call
        .tool_calls
        .first()
        .ok_or(format!("no tool call in {call:?}"))?;
    if asked.name != "get_weather" || asked.args["city"] != "Paris" {
        return Err(format!("unexpected call {asked:?}"));
    }
    let id = asked.id.clone();
    messages.push(call);
    let mut result = Message::tool("Rain, 14 °C", id);
    result.name = Some("get_weather".into());
    messages.push(result);
    let done = answer(model, &messages, streamed)
        .await
        .map_err(|e| e.to_string())?;
    // Gemini's result is an object; the proxy passes it on as JSON text.
    if !done.text().contains("Rain, 14 ") {
        return Err(format!(
            "the answer does not quote the tool: {:?}",
            done.text()
        ));
    }
    if done.usage.is_none_or(|u| u.total_tokens == 0) && !streamed {
        return Err(format!("no usage in {done:?}"));
    }
    Ok(())
}

/// An error of the server reaches the caller with the status and the
/// message the server gave (`expected`), and without the API key.
async fn error(
    model: &dyn ChatModel,
    streamed: bool,
    expected: (u16, &str),
) -> Result<String, String> {
    let messages = [Message::human("Fail, please. [status:400]")];
    match answer(model, &messages, streamed).await {
        Ok(m) => Err(format!("an answer instead of an error: {m:?}")),
        Err(nodekit::Error::Model(e))
            if e.status == Some(expected.0)
                && e.message.contains(expected.1)
                && !format!("{e:?}").contains(KEY) =>
        {
            Ok(format!("{} {:?}", expected.0, e.message))
        }
        Err(e) => Err(format!("not the server's {}: {e:?}", expected.0)),
    }
}

const KEY: &str = "sk-local-0123456789";

/// A client, and the error the server gives it: its status and message.
type Client = (&'static str, Box<dyn ChatModel>, (u16, &'static str));

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let base = std::env::args().nth(1).expect("the server's root URL");
    let anthropic = AnthropicConfig::new(KEY, "claude-sonnet-4-5").base_url(base.clone());
    let gemini = GeminiConfig::new(KEY, "gemini-2.5-flash").base_url(base);
    // The errors as the proxy gives them: the model's 400 in Anthropic's
    // form, and a bare 500 on Gemini's route (LiteLLM's own answer there).
    let models: [Client; 2] = [
        (
            "Anthropic",
            Box::new(AnthropicChatModel::new(anthropic).unwrap()),
            (400, "scripted failure 400"),
        ),
        (
            "Gemini",
            Box::new(GeminiChatModel::new(gemini).unwrap()),
            (500, "Internal Server Error"),
        ),
    ];
    let mut failed = false;
    for (name, model, expected) in &models {
        for streamed in [false, true] {
            let how = if streamed { "streamed" } else { "whole" };
            for (check, outcome) in [
                (
                    "a tool round",
                    tool_round(model.as_ref(), streamed)
                        .await
                        .map(|()| String::new()),
                ),
                ("an error", error(model.as_ref(), streamed, *expected).await),
            ] {
                match outcome {
                    Ok(seen) => println!("ok    {name}, {how}: {check} {seen}"),
                    Err(why) => {
                        failed = true;
                        println!("FAIL  {name}, {how}: {check}: {why}");
                    }
                }
            }
        }
    }
    std::process::exit(i32::from(failed));
}

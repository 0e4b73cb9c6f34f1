//! Reads a chat history in LangChain's stored form (a JSON array, on
//! stdin) and prints the messages nodekit's Anthropic, OpenAI and Gemini
//! clients would send for it: `{"anthropic": [...], "openai": [...],
//! "gemini": [...]}`. `scripts/langchain-blocks.sh` compares them with
//! what LangChain's own integrations, as n8n runs them, send for the
//! same history.
//!
//! `cargo run -p nodekit --features anthropic,gemini,openai --example stored_blocks < history.json`

use std::io::Read;

use nodekit::message::Message;
use nodekit::model::CallOptions;
use nodekit::model::anthropic::{AnthropicChatModel, AnthropicConfig};
use nodekit::model::gemini::{GeminiChatModel, GeminiConfig};
use nodekit::model::openai::{OpenAiChatModel, OpenAiConfig};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let stored: Vec<Value> = serde_json::from_str(&input)?;
    let messages = stored
        .iter()
        .map(Message::from_stored)
        .collect::<Result<Vec<_>, _>>()?;
    let options = CallOptions::default();
    let body = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes);

    let anthropic = AnthropicChatModel::new(AnthropicConfig::new("key", "claude-sonnet-4-5"))?;
    let openai = OpenAiChatModel::new(OpenAiConfig::new("key", "gpt-4o"))?;
    let gemini = GeminiChatModel::new(GeminiConfig::new("key", "gemini-2.5-flash"))?;
    let out = json!({
        "anthropic": body(&anthropic.request_body(&messages, &options, false)?)?["messages"],
        "openai": body(&openai.request_body(&messages, &options, false))?["messages"],
        "gemini": body(&gemini.request_body(&messages, &options)?)?["contents"],
    });
    println!("{out}");
    Ok(())
}

//! Nodes of an imaginary `n8n-nodes-text` package: a text tool, and a tool
//! that misbehaves on purpose so you can see how n8n shows a failing Rust
//! node (a panic, a hang, a blocked thread, a crash of the process, stray
//! output).

use nodekit::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Counts the words, lines and characters of a text.
#[ai_node(
    name = "textStatsTool",
    display_name = "Text Statistics",
    output = tool,
    package = "n8n-nodes-text",
    icon = "fa:font"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct TextStatsTool {
    /// The text to measure.
    #[from_ai(description = "The text to count words, lines and characters of")]
    pub text: String,
    /// Also count how often each word occurs.
    #[param(default = false)]
    pub word_counts: bool,
}

impl ToolNode for TextStatsTool {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<Value> {
        let words: Vec<&str> = self.text.split_whitespace().collect();
        let mut out = json!({
            "words": words.len(),
            "lines": self.text.lines().count(),
            "characters": self.text.chars().count(),
        });
        if self.word_counts {
            let mut counts = serde_json::Map::new();
            for w in &words {
                let n = counts.get(*w).and_then(Value::as_u64).unwrap_or(0);
                counts.insert((*w).to_owned(), json!(n + 1));
            }
            out["wordCounts"] = Value::Object(counts);
        }
        Ok(out)
    }
}

/// Shortens a text for a preview. Version 1 keeps a number of characters,
/// version 2 a number of words: a node whose parameters differ by version.
#[ai_node(
    name = "textPreviewTool",
    display_name = "Text Preview",
    output = tool,
    package = "n8n-nodes-text",
    version = [1, 2],
    icon = "fa:cut"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct TextPreviewTool {
    /// The text to shorten.
    #[from_ai]
    pub text: String,
    /// How many characters to keep.
    #[param(default = 12, display_options(show("@version" = [1])))]
    pub max_characters: Option<u32>,
    /// How many words to keep.
    #[param(default = 2, display_options(show("@version" = [2])))]
    pub max_words: Option<u32>,
}

impl ToolNode for TextPreviewTool {
    async fn call(self, ctx: &SupplyContext) -> nodekit::Result<Value> {
        let preview = match (self.max_words, self.max_characters) {
            (Some(n), _) => self
                .text
                .split_whitespace()
                .take(n as usize)
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(n)) => self.text.chars().take(n as usize).collect(),
            (None, None) => self.text.clone(),
        };
        Ok(json!({ "preview": preview, "typeVersion": ctx.type_version() }))
    }
}

/// How [`FaultTool`] misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Fault {
    /// Answers normally.
    None,
    /// Panics.
    Panic,
    /// Never answers.
    Hang,
    /// Blocks its thread for an hour (the bridge cannot cancel it).
    Block,
    /// Aborts the whole process.
    Abort,
    /// Prints a line that is not JSON on standard output, then answers.
    Print,
}

/// A tool that fails the way you choose, to see how n8n shows it.
#[ai_node(
    name = "faultTool",
    display_name = "Fault Tool",
    output = tool,
    package = "n8n-nodes-text",
    icon = "fa:bug"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct FaultTool {
    /// What goes wrong.
    #[param(default = Fault::None)]
    pub fault: Fault,
    /// Echoed back when nothing goes wrong.
    #[from_ai(description = "Any text", default = "")]
    pub text: String,
}

impl ToolNode for FaultTool {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<Value> {
        match self.fault {
            Fault::None => {}
            Fault::Panic => panic!("the fault tool panics on purpose"),
            Fault::Hang => std::future::pending::<()>().await,
            Fault::Block => std::thread::sleep(std::time::Duration::from_secs(3600)),
            Fault::Abort => std::process::abort(),
            Fault::Print => println!("this line is not JSON"),
        }
        Ok(json!({ "echo": self.text }))
    }
}

/// Keeps this crate's node registrations in a binary that calls it.
pub fn link() {}

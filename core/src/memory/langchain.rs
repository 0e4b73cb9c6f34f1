//! LangChain's conversation memories, as n8n uses them: `BufferMemory`,
//! `BufferWindowMemory` and `ConversationTokenBufferMemory` from
//! `@langchain/classic`, with `getBufferString` from `@langchain/core`.
//!
//! Written as `crate::memory::langchain`. Behaviour is pinned against
//! fixtures recorded from `@langchain/classic` 1.0.50 and `@langchain/core`
//! 1.2.13 (`testdata/gen_memory_fixtures.mjs`).
//!
//! # What matches LangChain
//!
//! - [`get_buffer_string`]: one line per message, `"{role}: {name}, {content}"`
//!   joined with `"\n"`; roles `humanPrefix`, `aiPrefix`, `System`, `Tool`;
//!   the `"{name}, "` part only for a non-empty name; content parts joined
//!   with images as `[image]`; AI tool calls appended as JavaScript's
//!   `JSON.stringify` writes them (ids over 64 UTF-16 units cut to 64 plus
//!   `...`), else a legacy `additional_kwargs.function_call`.
//! - Window: the last `2k` *messages* (whatever their roles); `k = 0` keeps
//!   everything (JavaScript's `slice(-0)`).
//! - Token buffer: the count is of the whole buffer string (prefixes and
//!   newlines included), made like `getNumTokens`: tiktoken, or
//!   `ceil(UTF-16 length / 4)` when the text holds a special token such as
//!   `<|endoftext|>` (js-tiktoken refuses those and LangChain falls back).
//!   Messages are dropped oldest first, one at a time, until the count is at
//!   most `max_token_limit`; that may leave an AI message first.
//! - [`ConversationMemory::save_context`] picks values with LangChain's
//!   `getInputValue`/`getOutputValue` rules and error texts.
//!
//! # Where nodekit differs, on purpose
//!
//! - The token limit is applied when loading, to a view: stored history is
//!   never deleted. LangChain prunes on save by mutating the array that
//!   `getMessages()` returned, which trims the in-memory store but does
//!   nothing on persistent stores (Postgres, Redis, ...), so there its load
//!   returns everything. Here every store gets the limit and keeps its data.
//!   For the in-memory store the view equals what LangChain keeps (the
//!   fixtures replay its runs); they could part only where a special token's
//!   length estimate makes a longer buffer count less than a shorter one.
//! - Defaults follow n8n's AI Node SDK (`chat_history`, `input`, `output`,
//!   `return_messages = true`); LangChain's own are `history`, no keys,
//!   `false` ([`MemoryOptions::langchain_defaults`]).
//! - `save_context` checks both values before writing anything; LangChain
//!   stores the human message and then fails on a bad output.
//! - Function messages render as `Function: ...` (LangChain ≤ 0.3); current
//!   LangChain throws `Got unsupported message type: function`.
//! - Unknown model names count with `cl100k_base`, where LangChain falls back
//!   to `ceil(length / 4)`; names are matched case-insensitively and after a
//!   provider prefix (`openai/gpt-4o`). [`Tokenizer::Approximate`] is
//!   LangChain's fallback, for callers who want it.
//! - Counts come from tiktoken-rs, not js-tiktoken: text with U+0085 or
//!   U+FEFF can differ by a token (JavaScript's `\s` differs from Unicode's
//!   White_Space there), and a run of one character class longer than
//!   16 KiB is counted in chunks (tiktoken-rs would panic on it).
//! - Tool calls render from nodekit's [`ToolCall`], so always as
//!   `{"id","name","args"}`. LangChain prints the objects it holds: for
//!   messages LangChain itself wrote (`{"name","args","type":"tool_call","id"}`)
//!   or parsed from `additional_kwargs.tool_calls` (`{"name","args","id"}`),
//!   its string differs from nodekit's.
//! - No `ChatMessage` with a free role exists in nodekit; LangChain writes
//!   those as `"{role}: {content}"`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use futures::future::BoxFuture;

pub use super::tokenizer::Tokenizer;
#[cfg(all(test, feature = "tiktoken"))]
use super::tokenizer::{CL100K_SPECIAL, O200K_SPECIAL, Pieces, chunks};
use super::tokenizer::{MAX_TOKEN_BYTES, utf16_len};
use crate::history::ChatHistory;
use crate::memory::Memory;
use crate::message::{Content, ContentPart, Message, Role, ToolCall};
use serde_json::{Map, Number, Value};

#[cfg(all(test, feature = "tiktoken"))]
mod tests;

/// LangChain's default window, in exchanges (`BufferWindowMemory.k`).
pub const DEFAULT_K: usize = 5;

/// LangChain's default token limit (`ConversationTokenBufferMemory.maxTokenLimit`).
pub const DEFAULT_MAX_TOKEN_LIMIT: usize = 2000;

/// What part of the stored history a [`ConversationMemory`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// Every message (LangChain's `BufferMemory`).
    Buffer,
    /// The last `2k` messages; `k = 0` shows all (LangChain's `BufferWindowMemory`).
    BufferWindow {
        /// Exchanges to keep; each is two messages.
        k: usize,
    },
    /// The newest messages whose buffer string fits in `max_token_limit`
    /// tokens (LangChain's `ConversationTokenBufferMemory`).
    TokenBuffer {
        /// The most tokens the buffer string may have.
        max_token_limit: usize,
        /// How tokens are counted.
        tokenizer: Tokenizer,
    },
}

/// Settings of a [`ConversationMemory`], with n8n's defaults.
#[derive(Debug, Clone)]
pub struct MemoryOptions {
    /// Where the conversation is stored.
    pub history: Arc<dyn ChatHistory>,
    /// Which messages are shown.
    pub kind: MemoryKind,
    /// Key of the variable [`ConversationMemory::load_memory_variables`] returns.
    pub memory_key: String,
    /// Key of the human input in `save_context`'s inputs; `None` takes the only key.
    pub input_key: Option<String>,
    /// Key of the AI output in `save_context`'s outputs; `None` takes the only key.
    pub output_key: Option<String>,
    /// Whether the variable holds messages (`true`) or the buffer string.
    pub return_messages: bool,
    /// Role name of human messages in the buffer string.
    pub human_prefix: String,
    /// Role name of AI messages in the buffer string.
    pub ai_prefix: String,
}

impl MemoryOptions {
    fn with_kind(history: Arc<dyn ChatHistory>, kind: MemoryKind) -> Self {
        MemoryOptions {
            history,
            kind,
            memory_key: "chat_history".into(),
            input_key: Some("input".into()),
            output_key: Some("output".into()),
            return_messages: true,
            human_prefix: "Human".into(),
            ai_prefix: "AI".into(),
        }
    }

    /// All of `history` (n8n's defaults).
    pub fn buffer(history: Arc<dyn ChatHistory>) -> Self {
        Self::with_kind(history, MemoryKind::Buffer)
    }

    /// The last `k` exchanges of `history`; `k = 0` keeps all, as in LangChain.
    pub fn buffer_window(history: Arc<dyn ChatHistory>, k: usize) -> Self {
        Self::with_kind(history, MemoryKind::BufferWindow { k })
    }

    /// The newest messages of `history` that fit in `max_tokens`, counted
    /// with the encoding of `model_name` (see [`Tokenizer::for_model`]).
    pub fn token_buffer(
        history: Arc<dyn ChatHistory>,
        max_tokens: usize,
        model_name: &str,
    ) -> Self {
        let kind = MemoryKind::TokenBuffer {
            max_token_limit: max_tokens,
            tokenizer: Tokenizer::for_model(model_name),
        };
        Self::with_kind(history, kind)
    }

    /// These options with LangChain's own defaults instead of n8n's:
    /// memory key `history`, no input or output key, the buffer string.
    pub fn langchain_defaults(self) -> Self {
        MemoryOptions {
            memory_key: "history".into(),
            input_key: None,
            output_key: None,
            return_messages: false,
            ..self
        }
    }
}

/// Why [`ConversationMemory::save_context`] or a load failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// No usable input value: several keys and no `input_key`, the key is
    /// missing, or the value is empty (`""`, `null`, `false`, `0`). LangChain's text.
    #[error(
        "input values have {keys} keys, you must specify an input key or pass only 1 key as input"
    )]
    InputKey {
        /// How many keys the inputs had.
        keys: usize,
    },
    /// No usable output value (as for inputs, but `""` is allowed). LangChain's text.
    #[error(
        "output values have {keys} keys, you must specify an output key or pass only 1 key as output"
    )]
    OutputKey {
        /// How many keys the outputs had.
        keys: usize,
    },
    /// The value is neither text nor a list of content parts. (LangChain
    /// crashes on numbers and reads objects as message fields.)
    #[error(
        "the {side} value `{key}` must be a string or a list of content parts, but it is {found}"
    )]
    NotText {
        /// `input` or `output`.
        side: &'static str,
        /// The key the value was under.
        key: String,
        /// What the value is, shortened.
        found: String,
    },
    /// The history store failed.
    #[error(transparent)]
    History(#[from] crate::Error),
}

/// A LangChain-compatible conversation memory over a [`ChatHistory`].
///
/// ```
/// use std::sync::Arc;
///
/// use nodekit::history::InProcessHistory;
/// use nodekit::memory::{ConversationMemory, Memory, MemoryOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> nodekit::Result<()> {
/// let history = Arc::new(InProcessHistory::session("docs-ada"));
/// // The last exchange only (LangChain's BufferWindowMemory with k = 1).
/// let memory = ConversationMemory::new(MemoryOptions::buffer_window(history, 1));
/// memory.save("Hi, I am Ada.", "Hello Ada!").await?;
/// memory.save("What is my name?", "Ada.").await?;
/// let shown = memory.load().await?;
/// assert_eq!(shown.len(), 2);
/// assert_eq!(shown[0].text(), "What is my name?");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ConversationMemory {
    options: MemoryOptions,
}

impl ConversationMemory {
    /// A memory with these options.
    pub fn new(options: MemoryOptions) -> Self {
        ConversationMemory { options }
    }

    /// The options this memory was made with.
    pub fn options(&self) -> &MemoryOptions {
        &self.options
    }

    /// The variables [`load_memory_variables`](Self::load_memory_variables) returns.
    pub fn memory_keys(&self) -> Vec<String> {
        vec![self.options.memory_key.clone()]
    }

    /// The messages the model sees: the stored history cut to the window or
    /// token limit. The store itself is left as it is.
    ///
    /// Token counting runs inline, newest message first, and stops at the
    /// first message that does not fit, so it tokenizes about
    /// `max_token_limit × 256` bytes at most, however long the history.
    /// (Custom prefixes starting with whitespace or `/` take LangChain's
    /// literal loop, which recounts the whole buffer per dropped message.)
    pub async fn messages(&self) -> Result<Vec<Message>, MemoryError> {
        Ok(self.view().await?)
    }

    /// LangChain's `loadMemoryVariables`: `{memory_key: messages}` (nodekit's
    /// JSON form) when `return_messages`, else `{memory_key: buffer string}`.
    /// `values` is not used, as in LangChain.
    pub async fn load_memory_variables(
        &self,
        values: &Map<String, Value>,
    ) -> Result<Map<String, Value>, MemoryError> {
        let _ = values;
        let messages = self.view().await?;
        let value = if self.options.return_messages {
            Value::Array(
                messages
                    .iter()
                    .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
                    .collect(),
            )
        } else {
            Value::String(get_buffer_string(
                &messages,
                &self.options.human_prefix,
                &self.options.ai_prefix,
            ))
        };
        let mut variables = Map::new();
        variables.insert(self.options.memory_key.clone(), value);
        Ok(variables)
    }

    /// LangChain's `saveContext`: appends the human input and the AI output.
    ///
    /// Values are picked as LangChain does: the configured key, or the only
    /// key when none is configured; empty values fail with LangChain's error
    /// texts. Both are checked before anything is written, and nothing is
    /// pruned (the token limit applies when loading).
    pub async fn save_context(
        &self,
        inputs: &Map<String, Value>,
        outputs: &Map<String, Value>,
    ) -> Result<(), MemoryError> {
        let (input_key, input) = pick(inputs, self.options.input_key.as_deref());
        let input = match input {
            Some(v) if !is_falsy(v) => content_of("input", input_key, v)?,
            _ => return Err(MemoryError::InputKey { keys: inputs.len() }),
        };
        let (output_key, output) = pick(outputs, self.options.output_key.as_deref());
        let output = match output {
            // LangChain lets an empty output string through (`value !== ""`).
            Some(v) if !is_falsy(v) || v.as_str() == Some("") => {
                content_of("output", output_key, v)?
            }
            _ => {
                return Err(MemoryError::OutputKey {
                    keys: outputs.len(),
                });
            }
        };
        self.options
            .history
            .add_messages(&[Message::human(input), Message::ai(output)])
            .await?;
        Ok(())
    }

    /// Removes every stored message.
    pub async fn clear(&self) -> Result<(), MemoryError> {
        Ok(self.options.history.clear().await?)
    }

    async fn view(&self) -> crate::Result<Vec<Message>> {
        // A window needs only its own messages: the store reads just those.
        if let MemoryKind::BufferWindow { k } = self.options.kind
            && k > 0
        {
            return self
                .options
                .history
                .last_messages(k.saturating_mul(2))
                .await;
        }
        // The token limit is found newest first, so a tail is enough once the
        // limit cuts inside it: read growing tails rather than the whole history.
        if let MemoryKind::TokenBuffer {
            max_token_limit,
            tokenizer,
        } = self.options.kind
        {
            let mut n = 64usize;
            loop {
                let mut tail = self.options.history.last_messages(n).await?;
                let start = token_window_start(
                    &tail,
                    tokenizer,
                    max_token_limit,
                    &self.options.human_prefix,
                    &self.options.ai_prefix,
                );
                if start > 0 || tail.len() < n {
                    return Ok(tail.split_off(start.min(tail.len())));
                }
                n = n.saturating_mul(4);
            }
        }
        let mut messages = self.options.history.messages().await?;
        let start = match self.options.kind {
            MemoryKind::Buffer => 0,
            MemoryKind::BufferWindow { k } => window_start(messages.len(), k),
            MemoryKind::TokenBuffer {
                max_token_limit,
                tokenizer,
            } => token_window_start(
                &messages,
                tokenizer,
                max_token_limit,
                &self.options.human_prefix,
                &self.options.ai_prefix,
            ),
        };
        Ok(messages.split_off(start.min(messages.len())))
    }
}

impl Memory for ConversationMemory {
    fn load(&self) -> BoxFuture<'_, crate::Result<Vec<Message>>> {
        Box::pin(self.view())
    }

    fn messages(&self) -> BoxFuture<'_, crate::Result<Vec<Message>>> {
        self.options.history.messages()
    }

    /// Appends the exchange as given; LangChain's key and empty-value checks
    /// belong to [`ConversationMemory::save_context`], which takes maps.
    fn save<'a>(&'a self, input: &'a str, output: &'a str) -> BoxFuture<'a, crate::Result<()>> {
        Box::pin(async move {
            self.options
                .history
                .add_messages(&[Message::human(input), Message::ai(output)])
                .await
        })
    }
}

/// LangChain's `getValue`: the configured key, or the value of the only key.
fn pick<'a>(values: &'a Map<String, Value>, key: Option<&'a str>) -> (&'a str, Option<&'a Value>) {
    match key {
        Some(k) => (k, values.get(k)),
        None if values.len() == 1 => values
            .iter()
            .next()
            .map_or(("", None), |(k, v)| (k.as_str(), Some(v))),
        None => ("", None),
    }
}

/// JavaScript's falsiness for JSON values (`!value` in LangChain's checks).
fn is_falsy(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// Message content from a saved value: text, or content parts (LangChain
/// passes arrays through as multimodal content).
fn content_of(side: &'static str, key: &str, value: &Value) -> Result<Content, MemoryError> {
    let not_text = |found: String| MemoryError::NotText {
        side,
        key: key.to_owned(),
        found,
    };
    match value {
        Value::String(s) => Ok(Content::Text(s.clone())),
        Value::Array(_) => serde_json::from_value::<Vec<ContentPart>>(value.clone())
            .map(Content::Parts)
            .map_err(|_| not_text("an array that is not a list of content parts".into())),
        Value::Number(n) => Err(not_text(format!("the number {n}"))),
        Value::Bool(b) => Err(not_text(format!("the boolean {b}"))),
        Value::Object(_) => Err(not_text("an object".into())),
        Value::Null => Err(not_text("null".into())),
    }
}

/// First message of LangChain's window: `messages.slice(-k * 2)`, where `-0` is everything.
fn window_start(len: usize, k: usize) -> usize {
    if k == 0 {
        0
    } else {
        len.saturating_sub(k.saturating_mul(2))
    }
}

// ------------------------------------------------------------------ buffer string

/// LangChain's `getBufferString`: each message as `"{role}: {content}"`,
/// joined with `"\n"`.
///
/// Roles are `human_prefix`, `ai_prefix`, `System`, `Tool`, `Function`, and
/// a free role's own name (`critic: ...`); a non-empty `name` comes first as
/// `"{name}, "`. Content parts are joined,
/// images shown as `[image]`. An AI message's tool calls follow its content
/// as JavaScript's `JSON.stringify` writes the calls of a model's answer
/// (`[{"name":..,"args":..,"type":"tool_call","id":..}]`),
/// with ids longer than 64 UTF-16 units cut to 64 plus `...`; without tool
/// calls, a legacy `additional_kwargs.function_call` is appended the same way.
pub fn get_buffer_string(messages: &[Message], human_prefix: &str, ai_prefix: &str) -> String {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_buffer_line(&mut out, m, human_prefix, ai_prefix);
    }
    out
}

fn buffer_line(m: &Message, human_prefix: &str, ai_prefix: &str) -> String {
    let mut out = String::new();
    push_buffer_line(&mut out, m, human_prefix, ai_prefix);
    out
}

fn push_buffer_line(out: &mut String, m: &Message, human_prefix: &str, ai_prefix: &str) {
    out.push_str(match m.role {
        Role::Human => human_prefix,
        Role::Ai => ai_prefix,
        Role::System => "System",
        Role::Tool => "Tool",
        // Current LangChain throws on function messages; ≤ 0.3 wrote this.
        Role::Function => "Function",
        Role::Generic => m.chat_role.as_deref().unwrap_or_default(),
    });
    out.push_str(": ");
    if let Some(name) = m.name.as_deref().filter(|n| !n.is_empty()) {
        out.push_str(name);
        out.push_str(", ");
    }
    out.push_str(&readable_content(&m.content));
    if m.role == Role::Ai {
        if !m.tool_calls.is_empty() {
            push_tool_calls(out, &m.tool_calls);
        } else if let Some(call) = m.additional_kwargs.get("function_call") {
            push_js_json(out, call);
        }
    }
}

/// `_contentBlockToString` over the parts, joined without separator.
fn readable_content(content: &Content) -> Cow<'_, str> {
    match content {
        Content::Text(t) => Cow::Borrowed(t),
        Content::Parts(parts) => {
            let mut out = String::new();
            for part in parts {
                match part {
                    ContentPart::Text { text, .. } => out.push_str(text),
                    ContentPart::ImageUrl { .. } => out.push_str("[image]"),
                    other => {
                        out.push('[');
                        out.push_str(other.kind());
                        out.push(']');
                    }
                }
            }
            Cow::Owned(out)
        }
    }
}

/// How long a tool call id may be before the buffer string shortens it.
const TOOL_CALL_ID_DISPLAY_LIMIT: usize = 64;

fn push_tool_calls(out: &mut String, calls: &[ToolCall]) {
    // LangChain shortens only when some id is too long, and then only those ids.
    let too_long = |id: &str| id.encode_utf16().count() > TOOL_CALL_ID_DISPLAY_LIMIT;
    let shorten = calls.iter().any(|c| too_long(&c.id));
    out.push('[');
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        push_js_string(out, &call.name);
        out.push_str(",\"args\":");
        push_js_json(out, &call.args);
        out.push_str(",\"type\":\"tool_call\",\"id\":");
        if shorten && too_long(&call.id) {
            // `id.slice(0, 64)` counts UTF-16 units and may split a surrogate pair.
            let mut units: Vec<u16> = call
                .id
                .encode_utf16()
                .take(TOOL_CALL_ID_DISPLAY_LIMIT)
                .collect();
            units.extend("...".encode_utf16());
            push_js_string_units(out, &units);
        } else {
            push_js_string(out, &call.id);
        }
        out.push('}');
    }
    out.push(']');
}

/// `JSON.stringify(value)` as JavaScript writes it: integer-like keys first in
/// ascending order, numbers in JavaScript's shortest form.
fn push_js_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => push_js_number(out, n),
        Value::String(s) => push_js_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_js_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // JavaScript objects list array-index keys first, ascending.
            let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
            let mut named: Vec<(&String, &Value)> = Vec::new();
            for (k, v) in map {
                match array_index(k) {
                    Some(i) => indexed.push((i, k, v)),
                    None => named.push((k, v)),
                }
            }
            indexed.sort_by_key(|(i, _, _)| *i);
            out.push('{');
            let entries = indexed.into_iter().map(|(_, k, v)| (k, v)).chain(named);
            for (i, (k, v)) in entries.enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_js_string(out, k);
                out.push(':');
                push_js_json(out, v);
            }
            out.push('}');
        }
    }
}

/// The index if `key` is a canonical array index (`0` to `2^32 - 2`).
fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|&i| i != u32::MAX)
}

fn push_js_number(out: &mut String, n: &Number) {
    // JavaScript holds every number as a double: exact integers up to 2^53.
    const SAFE: u64 = 1 << 53;
    if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= SAFE) {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64().filter(|&u| u <= SAFE) {
        let _ = write!(out, "{u}");
    } else {
        out.push_str(&crate::from_ai::js_number_to_string(
            n.as_f64().unwrap_or(f64::NAN),
        ));
    }
}

fn push_js_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        push_js_char(out, c);
    }
    out.push('"');
}

/// A JSON string from UTF-16 units, lone surrogates escaped as JavaScript does.
fn push_js_string_units(out: &mut String, units: &[u16]) {
    out.push('"');
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok(c) => push_js_char(out, c),
            Err(e) => {
                let _ = write!(out, "\\u{:04x}", e.unpaired_surrogate());
            }
        }
    }
    out.push('"');
}

fn push_js_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c < ' ' => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// First message kept by LangChain's token pruning: drop the oldest message
/// until the buffer string counts at most `limit` tokens.
///
/// Counting every candidate suffix would cost O(n²); instead each line is
/// counted once, from the newest back, which gives the same answer because
/// the count of the joined text is the sum of the lines' counts (each line
/// with its `"\n"`) whenever every line after the first starts with a
/// character that no piece can reach across a line break into (not
/// whitespace, not `/`). Custom prefixes that break this take LangChain's
/// literal loop.
fn token_window_start(
    messages: &[Message],
    tokenizer: Tokenizer,
    limit: usize,
    human_prefix: &str,
    ai_prefix: &str,
) -> usize {
    let n = messages.len();
    let lines: Vec<String> = messages
        .iter()
        .map(|m| buffer_line(m, human_prefix, ai_prefix))
        .collect();
    let additive = lines.iter().skip(1).all(|l| {
        l.chars()
            .next()
            .is_none_or(|c| !c.is_whitespace() && c != '/')
    });
    if !additive && tokenizer != Tokenizer::Approximate {
        let mut start = 0;
        while start < n && tokenizer.count(&lines[start..].join("\n")) > limit {
            start += 1;
        }
        return start;
    }
    // Suffixes holding a special token are estimated from their length,
    // which can be *less* than a shorter suffix's real count: check them
    // first, oldest first, as LangChain's loop meets them.
    let last_estimated = match tokenizer {
        Tokenizer::Approximate => n.checked_sub(1),
        #[cfg(feature = "tiktoken")]
        _ => lines.iter().rposition(|l| tokenizer.has_special(l)),
    };
    if let Some(last) = last_estimated {
        let mut suffix_len = vec![0usize; n + 1];
        for i in (0..n).rev() {
            let newline = usize::from(i + 1 < n);
            suffix_len[i] = suffix_len[i + 1] + utf16_len(&lines[i]) + newline;
        }
        if let Some(start) = (0..=last).find(|&i| suffix_len[i].div_ceil(4) <= limit) {
            return start;
        }
    }
    let first = last_estimated.map_or(0, |l| l + 1);
    let mut budget = limit;
    let mut start = n;
    for j in (first..n).rev() {
        let line = &lines[j];
        let newline = j + 1 < n;
        // A line far longer than the budget cannot fit: skip counting it.
        if (line.len() + usize::from(newline)) / MAX_TOKEN_BYTES > budget {
            break;
        }
        let cost = if newline {
            tokenizer.count(&format!("{line}\n"))
        } else {
            tokenizer.count(line)
        };
        match budget.checked_sub(cost) {
            Some(rest) => {
                budget = rest;
                start = j;
            }
            None => break,
        }
    }
    start
}

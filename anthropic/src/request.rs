//! The Messages API's request body, built from nodekit's messages and
//! checked for what Anthropic would refuse, before anything is sent.

use std::borrow::Cow;

use base64::Engine;
use nodekit_core::message::{Citation, Content, ContentPart, Message, Role, data_url};
use nodekit_core::model::{CallOptions, ModelError, ModelErrorKind, ResponseFormat, ToolChoice};
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{AnthropicConfig, DEFAULT_MAX_TOKENS};

/// Most `cache_control` breakpoints Anthropic takes in one request.
const MAX_BREAKPOINTS: usize = 4;

/// What every request of one model shares, read once from its settings.
#[derive(Debug)]
pub(crate) struct Shape {
    pub(crate) model: String,
    settings: nodekit_core::model::ModelSettings,
    top_k: Option<u64>,
    thinking: Option<Value>,
    cache: crate::PromptCache,
    /// The `cache_control` object of the breakpoints the settings ask for.
    cache_control: Value,
}

impl Shape {
    pub(crate) fn new(config: &AnthropicConfig) -> Shape {
        let mut cache_control = json!({"type": "ephemeral"});
        if let Some(ttl) = &config.prompt_cache.ttl {
            cache_control["ttl"] = json!(ttl);
        }
        Shape {
            model: config.model.clone(),
            settings: config.settings.clone(),
            top_k: config.top_k,
            thinking: config
                .thinking_budget
                .map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
            cache: config.prompt_cache.clone(),
            cache_control,
        }
    }

    /// The JSON body for `messages`, or the reason Anthropic would refuse it.
    pub(crate) fn body(
        &self,
        messages: &[Message],
        options: &CallOptions,
        stream: bool,
    ) -> Result<bytes::Bytes, ModelError> {
        let s = self.settings.merged(&options.overrides);
        let mut system = Vec::new();
        let mut turns: Vec<Turn<'_>> = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            let at = At { index, message };
            match message.role {
                Role::System => system.extend(text_blocks(&message.content, at)?),
                Role::Ai => push(&mut turns, "assistant", assistant_blocks(at)?, at)?,
                Role::Tool => {
                    check_answers_a_call(&turns, at)?;
                    let result = Block::ToolResult {
                        tool_use_id: message.tool_call_id.as_deref().unwrap_or_default(),
                        content: tool_result_content(&message.content, at)?,
                        cache_control: None,
                    };
                    push(&mut turns, "user", vec![result], at)?;
                }
                Role::Human | Role::Function | Role::Generic => {
                    push(&mut turns, "user", user_blocks(&message.content, at)?, at)?;
                }
            }
        }
        if turns.is_empty() {
            return Err(refused(
                "the conversation has no message besides the system prompt",
            ));
        }
        if self.thinking.is_some() {
            check_thinking_leads_tool_turn(&turns)?;
        }

        let mut breakpoints = turns.iter().map(|t| t.marks).sum::<usize>();
        if self.cache.system
            && let Some(last) = system.last_mut()
        {
            last.mark(&self.cache_control);
            breakpoints += 1;
        }
        let mut tools: Vec<Tool<'_>> = options
            .tools
            .iter()
            .map(|t| Tool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
                cache_control: None,
            })
            .collect();
        if self.cache.tools
            && let Some(last) = tools.last_mut()
        {
            last.cache_control = Some(&self.cache_control);
            breakpoints += 1;
        }
        if self.cache.conversation
            && let Some(last) = turns.last_mut()
            && let Some(block) = last.blocks.last_mut()
            && !block.is_marked()
        {
            block.mark(&self.cache_control);
            last.text = None;
            breakpoints += 1;
        }
        if breakpoints > MAX_BREAKPOINTS {
            return Err(refused(format!(
                "Anthropic takes at most {MAX_BREAKPOINTS} cache_control breakpoints; this request has {breakpoints}"
            )));
        }

        let body = Body {
            model: &self.model,
            max_tokens: s.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: match system.as_slice() {
                [] => None,
                // One unmarked text is sent as a string, as most callers write it.
                [
                    Block::Text {
                        text,
                        cache_control: None,
                        citations: None,
                    },
                ] => Some(System::Text(text)),
                _ => Some(System::Blocks(system)),
            },
            messages: turns.into_iter().map(Turn::wire).collect(),
            temperature: s.temperature,
            top_p: s.top_p,
            top_k: self.top_k,
            stop_sequences: &options.stop,
            tools,
            tool_choice: options.tool_choice.as_ref().map(|c| match c {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            }),
            thinking: self.thinking.as_ref(),
            output_config: match &options.response_format {
                Some(ResponseFormat::JsonSchema { schema, .. }) => {
                    Some(json!({"format": {"type": "json_schema", "schema": schema}}))
                }
                // Anthropic has no mode for any JSON object: the prompt asks for it.
                _ => None,
            },
            stream: stream.then_some(true),
        };
        serde_json::to_vec(&body)
            .map(bytes::Bytes::from)
            .map_err(|e| refused(format!("the request cannot be written as JSON: {e}")))
    }
}

/// A message of the conversation, for errors that name it.
#[derive(Clone, Copy)]
struct At<'a> {
    index: usize,
    message: &'a Message,
}

impl At<'_> {
    fn refuse(&self, what: impl std::fmt::Display) -> ModelError {
        let role = match self.message.role {
            Role::Ai => "an assistant message",
            Role::Tool => "a tool result",
            Role::System => "a system message",
            _ => "a user message",
        };
        refused(format!("message {} ({role}): {what}", self.index))
    }
}

fn refused(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::BadRequest, message)
}

/// One role's turn, of one or more consecutive messages of that role.
struct Turn<'a> {
    role: &'static str,
    blocks: Vec<Block<'a>>,
    /// Its text as a string, while it is one unmarked text.
    text: Option<&'a str>,
    /// How many of its messages asked for a cache breakpoint.
    marks: usize,
    /// The ids of its `tool_use` blocks.
    calls: Vec<&'a str>,
}

impl<'a> Turn<'a> {
    fn wire(self) -> WireMessage<'a> {
        WireMessage {
            role: self.role,
            content: match self.text {
                Some(text) => WireContent::Text(text),
                None => WireContent::Blocks(self.blocks),
            },
        }
    }
}

/// Adds a message's blocks to the conversation: to the last turn when it is
/// of the same role (Anthropic's turns alternate), else as a new turn.
fn push<'a>(
    turns: &mut Vec<Turn<'a>>,
    role: &'static str,
    mut blocks: Vec<Block<'a>>,
    at: At<'a>,
) -> Result<(), ModelError> {
    if blocks.is_empty() {
        return Err(at.refuse("it is empty, and Anthropic takes no empty message"));
    }
    let marker = at.message.additional_kwargs.get("cache_control");
    if let Some(marker) = marker
        && let Some(block) = blocks.last_mut()
    {
        block.mark(marker);
    }
    let marks = usize::from(marker.is_some());
    let calls = blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(*id),
            _ => None,
        })
        .collect::<Vec<_>>();
    let text = match (&at.message.content, blocks.as_slice()) {
        (Content::Text(text), [Block::Text { .. }]) if marker.is_none() => Some(text.as_str()),
        _ => None,
    };
    match turns.last_mut().filter(|t| t.role == role) {
        Some(turn) => {
            turn.text = None;
            turn.marks += marks;
            turn.calls.extend(calls);
            turn.blocks.extend(blocks);
        }
        None => turns.push(Turn {
            role,
            blocks,
            text,
            marks,
            calls,
        }),
    }
    Ok(())
}

/// A tool result must answer a `tool_use` block of the assistant turn just
/// before it.
fn check_answers_a_call(turns: &[Turn<'_>], at: At<'_>) -> Result<(), ModelError> {
    let Some(id) = at
        .message
        .tool_call_id
        .as_deref()
        .filter(|id| !id.is_empty())
    else {
        return Err(at.refuse("it has no tool_call_id, so it answers no tool_use block"));
    };
    let assistant = match turns.last() {
        Some(t) if t.role == "assistant" => Some(t),
        // Tool results of parallel calls: the assistant turn is before them.
        Some(t)
            if t.blocks
                .iter()
                .all(|b| matches!(b, Block::ToolResult { .. })) =>
        {
            turns.len().checked_sub(2).map(|i| &turns[i])
        }
        _ => None,
    };
    if assistant.is_some_and(|t| t.calls.contains(&id)) {
        Ok(())
    } else {
        Err(at.refuse(format_args!(
            "the tool_result block for `{id}` answers no tool_use block of the assistant message before it"
        )))
    }
}

/// With thinking on, Anthropic needs the assistant turn whose tool calls
/// are being answered to begin with its (signed) thinking.
fn check_thinking_leads_tool_turn(turns: &[Turn<'_>]) -> Result<(), ModelError> {
    let Some(i) = turns.iter().rposition(|t| t.role == "assistant") else {
        return Ok(());
    };
    let turn = &turns[i];
    let answered = turns[i + 1..].iter().any(|t| {
        t.blocks
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
    });
    let leads = matches!(
        turn.blocks.first(),
        Some(Block::Thinking { .. } | Block::RedactedThinking { .. })
    );
    if answered && !turn.calls.is_empty() && !leads {
        return Err(refused(format!(
            "turn {i} (an assistant turn that called tools): with thinking on, Anthropic needs it to begin with its signed thinking block, and it has none (was it answered by another model, or with thinking off?)"
        )));
    }
    Ok(())
}

/// A system message's text.
fn text_blocks<'a>(content: &'a Content, at: At<'a>) -> Result<Vec<Block<'a>>, ModelError> {
    match content {
        Content::Text(text) => Ok(text_block(text).into_iter().collect()),
        Content::Parts(parts) => {
            let mut blocks = Vec::new();
            for (n, part) in parts.iter().enumerate() {
                match part {
                    ContentPart::Text { text, .. } => blocks.extend(text_block(text)),
                    other => {
                        return Err(at.refuse(format_args!(
                            "block {n} is {}, and a system prompt holds only text",
                            describe(other)
                        )));
                    }
                }
            }
            Ok(blocks)
        }
    }
}

/// A text block, unless the text is empty (Anthropic refuses empty ones).
fn text_block(text: &str) -> Option<Block<'_>> {
    (!text.is_empty()).then_some(Block::Text {
        text,
        citations: None,
        cache_control: None,
    })
}

/// An assistant's text block with its citations, when they are all of
/// Anthropic's kinds; another provider's are left out, the text kept.
fn cited_text_block<'a>(text: &'a str, citations: &'a [Citation]) -> Option<Block<'a>> {
    let mut block = text_block(text)?;
    if let Block::Text { citations: c, .. } = &mut block
        && !citations.is_empty()
        && citations
            .iter()
            .all(|c| CITATION_KINDS.contains(&c.kind.as_str()))
    {
        *c = Some(citations);
    }
    Some(block)
}

/// The kinds of citation Anthropic gives, and takes back.
const CITATION_KINDS: [&str; 5] = [
    "char_location",
    "page_location",
    "content_block_location",
    "web_search_result_location",
    "search_result_location",
];

/// The kinds of block of Anthropic's own that nodekit keeps as they came
/// ([`ContentPart::Other`]) and sends back unchanged.
const NATIVE_KINDS: [&str; 14] = [
    "image",
    "document",
    "search_result",
    "container_upload",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
];

/// A kept block of Anthropic's own, or the reason it cannot be sent.
fn native_block<'a>(
    part: &'a ContentPart,
    n: usize,
    at: At<'a>,
) -> Result<Option<Block<'a>>, ModelError> {
    match part {
        ContentPart::Other(block) if NATIVE_KINDS.contains(&part.kind()) => {
            Ok(Some(Block::Native(Native {
                block,
                cache_control: None,
            })))
        }
        other => Err(at.refuse(format_args!(
            "block {n} is {}, which Anthropic does not take",
            describe(other)
        ))),
    }
}

fn user_blocks<'a>(content: &'a Content, at: At<'a>) -> Result<Vec<Block<'a>>, ModelError> {
    match content {
        Content::Text(text) => Ok(text_block(text).into_iter().collect()),
        Content::Parts(parts) => {
            let mut blocks = Vec::new();
            for (n, part) in parts.iter().enumerate() {
                blocks.extend(media_block(part, n, at)?);
            }
            Ok(blocks)
        }
    }
}

/// Text, an image or a document, as a block of a user turn or tool result.
fn media_block<'a>(
    part: &'a ContentPart,
    n: usize,
    at: At<'a>,
) -> Result<Option<Block<'a>>, ModelError> {
    Ok(match part {
        ContentPart::Text { text, .. } => text_block(text),
        ContentPart::ImageUrl { image_url } => Some(Block::Image {
            source: image_source(&image_url.url)
                .map_err(|why| at.refuse(format_args!("block {n} (an image): {why}")))?,
            cache_control: None,
        }),
        ContentPart::File { file } => Some(Block::Document {
            source: document_source(&file.url)
                .map_err(|why| at.refuse(format_args!("block {n} (a document): {why}")))?,
            title: file.filename.as_deref(),
            cache_control: None,
        }),
        ContentPart::Thinking { .. } | ContentPart::RedactedThinking { .. } => {
            return Err(at.refuse(format_args!(
                "block {n} is {}, which only an assistant message holds",
                describe(part)
            )));
        }
        other => return native_block(other, n, at),
    })
}

fn assistant_blocks(at: At<'_>) -> Result<Vec<Block<'_>>, ModelError> {
    let mut blocks = Vec::new();
    match &at.message.content {
        Content::Text(text) => blocks.extend(text_block(text)),
        Content::Parts(parts) => {
            for (n, part) in parts.iter().enumerate() {
                match part {
                    ContentPart::Text { text, citations } => {
                        blocks.extend(cited_text_block(text, citations))
                    }
                    ContentPart::Thinking {
                        thinking,
                        signature: Some(signature),
                    } => blocks.push(Block::Thinking {
                        thinking,
                        signature,
                    }),
                    // Reasoning without Anthropic's signature (another
                    // provider's) cannot be verified: it stays out, as
                    // Anthropic's own SDKs leave it.
                    ContentPart::Thinking {
                        signature: None, ..
                    } => {}
                    ContentPart::RedactedThinking { data } => {
                        blocks.push(Block::RedactedThinking { data })
                    }
                    ContentPart::Other(_) => blocks.extend(native_block(part, n, at)?),
                    other => {
                        return Err(at.refuse(format_args!(
                            "block {n} is {}, and Anthropic takes none from the assistant",
                            describe(other)
                        )));
                    }
                }
            }
        }
    }
    for call in &at.message.tool_calls {
        if !call.args.is_object() {
            return Err(at.refuse(format_args!(
                "the tool_use block `{}` ({}) has arguments that are not a JSON object",
                call.id, call.name
            )));
        }
        blocks.push(Block::ToolUse {
            id: &call.id,
            name: &call.name,
            input: &call.args,
            cache_control: None,
        });
    }
    Ok(blocks)
}

fn tool_result_content<'a>(
    content: &'a Content,
    at: At<'a>,
) -> Result<ToolResultContent<'a>, ModelError> {
    Ok(match content {
        Content::Text(text) => ToolResultContent::Text(text),
        Content::Parts(parts) => {
            let mut blocks = Vec::new();
            for (n, part) in parts.iter().enumerate() {
                blocks.extend(media_block(part, n, at)?);
            }
            ToolResultContent::Blocks(blocks)
        }
    })
}

/// What a part is, for errors.
fn describe(part: &ContentPart) -> Cow<'static, str> {
    Cow::Borrowed(match part {
        ContentPart::Text { .. } => "text",
        ContentPart::ImageUrl { .. } => "an image",
        ContentPart::File { .. } => "a document",
        ContentPart::Thinking { .. } => "a thinking block",
        ContentPart::RedactedThinking { .. } => "a redacted_thinking block",
        other => return Cow::Owned(format!("a `{}` block", other.kind())),
    })
}

/// The media types Anthropic reads as images.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn is_web(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

fn image_source(url: &str) -> Result<Source<'_>, String> {
    if is_web(url) {
        return Ok(Source::Url { url });
    }
    let (media_type, data) =
        data_url(url).ok_or("its URL is neither http(s) nor a base64 `data:` URL".to_owned())?;
    if !IMAGE_TYPES.contains(&media_type) {
        return Err(format!(
            "its type `{media_type}` is not one Anthropic reads ({})",
            IMAGE_TYPES.join(", ")
        ));
    }
    Ok(Source::Base64 { media_type, data })
}

fn document_source(url: &str) -> Result<Source<'_>, String> {
    if is_web(url) {
        return Ok(Source::Url { url });
    }
    let (media_type, data) =
        data_url(url).ok_or("its URL is neither http(s) nor a base64 `data:` URL".to_owned())?;
    match media_type {
        "application/pdf" => Ok(Source::Base64 { media_type, data }),
        "text/plain" => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| format!("its base64 data cannot be read: {e}"))?;
            let text = String::from_utf8(bytes).map_err(|_| "its text is not UTF-8".to_owned())?;
            Ok(Source::Text {
                media_type,
                data: Cow::Owned(text),
            })
        }
        other => Err(format!(
            "its type `{other}` is not one Anthropic reads as a document (application/pdf, text/plain)"
        )),
    }
}

/// The Messages API's request body, borrowing from the caller.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<&'a Value>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: WireContent<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
#[serde(untagged)]
enum ToolResultContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

/// A content block of a request.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<&'a Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        citations: Option<&'a [Citation]>,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<&'a Value>,
    },
    Document {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<&'a Value>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<&'a Value>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ToolResultContent<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<&'a Value>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    /// A block of Anthropic's own kept as it came, `type` included.
    #[serde(untagged)]
    Native(Native<'a>),
}

/// A kept block, with the breakpoint a request may put on it.
struct Native<'a> {
    block: &'a serde_json::Map<String, Value>,
    cache_control: Option<&'a Value>,
}

impl Serialize for Native<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.block {
            if key != "cache_control" || self.cache_control.is_none() {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(cache_control) = self.cache_control {
            map.serialize_entry("cache_control", cache_control)?;
        }
        map.end()
    }
}

impl<'a> Block<'a> {
    /// Makes this block a cache breakpoint; thinking blocks cannot be one,
    /// and are left as they are.
    fn mark(&mut self, marker: &'a Value) {
        match self {
            Block::Text { cache_control, .. }
            | Block::Image { cache_control, .. }
            | Block::Document { cache_control, .. }
            | Block::ToolUse { cache_control, .. }
            | Block::ToolResult { cache_control, .. }
            | Block::Native(Native { cache_control, .. }) => *cache_control = Some(marker),
            Block::Thinking { .. } | Block::RedactedThinking { .. } => {}
        }
    }

    fn is_marked(&self) -> bool {
        match self {
            Block::Text { cache_control, .. }
            | Block::Image { cache_control, .. }
            | Block::Document { cache_control, .. }
            | Block::ToolUse { cache_control, .. }
            | Block::ToolResult { cache_control, .. } => cache_control.is_some(),
            Block::Native(native) => {
                native.cache_control.is_some() || native.block.contains_key("cache_control")
            }
            Block::Thinking { .. } | Block::RedactedThinking { .. } => false,
        }
    }
}

/// Where an image's or document's bytes are.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Source<'a> {
    Base64 {
        media_type: &'a str,
        data: &'a str,
    },
    Url {
        url: &'a str,
    },
    Text {
        media_type: &'a str,
        data: Cow<'a, str>,
    },
}

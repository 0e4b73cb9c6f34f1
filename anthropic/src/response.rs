//! Anthropic's answers: a whole message, and the events of a streamed one,
//! read into nodekit's stream chunks.

use nodekit_core::error::{Result, shorten};
use nodekit_core::message::{Citation, Message, Usage};
use nodekit_core::model::{
    FinishReason, ModelError, ModelErrorKind, StreamAccumulator, StreamChunk,
};
use nodekit_http::StreamParser;
use nodekit_http::sse::SseEvent;
use serde::Deserialize;
use serde_json::Value;

fn protocol(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Protocol, message)
}

/// Anthropic's stop reasons as nodekit's finish reasons.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The error object of an `error` event or body (`{"type": "error",
/// "error": {"type": "overloaded_error", "message": "Overloaded"}}`), its
/// type kept as the code.
pub(crate) fn error_event(v: &Value) -> ModelError {
    let e = v.get("error").unwrap_or(v);
    let kind_name = e.get("type").and_then(Value::as_str).unwrap_or("error");
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| shorten(&v.to_string(), 500), |m| shorten(m, 500));
    let (kind, status) = match kind_name {
        "overloaded_error" => (ModelErrorKind::Server, Some(529)),
        "rate_limit_error" => (ModelErrorKind::RateLimited, Some(429)),
        "api_error" => (ModelErrorKind::Server, Some(500)),
        "authentication_error" => (ModelErrorKind::Auth, Some(401)),
        "permission_error" => (ModelErrorKind::Auth, Some(403)),
        "not_found_error" => (ModelErrorKind::NotFound, Some(404)),
        "request_too_large" => (ModelErrorKind::TooLarge, Some(413)),
        "invalid_request_error" => (ModelErrorKind::BadRequest, Some(400)),
        _ => (ModelErrorKind::Server, None),
    };
    let mut error = ModelError::new(kind, message);
    error.status = status;
    error.code = Some(kind_name.to_owned());
    error
}

/// Anthropic's usage object; `None` when there is none. Input counts the
/// tokens written to and read from the cache too.
pub(crate) fn usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let n = |key: &str| u.get(key).and_then(Value::as_u64);
    let created = n("cache_creation_input_tokens");
    let read = n("cache_read_input_tokens");
    let input = n("input_tokens")
        .unwrap_or(0)
        .saturating_add(created.unwrap_or(0))
        .saturating_add(read.unwrap_or(0));
    let output = n("output_tokens").unwrap_or(0);
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: input.saturating_add(output),
        cache_read_tokens: read,
        cache_creation_tokens: created,
        reasoning_tokens: None,
    })
}

/// Reads a whole message (`{"type": "message", "content": [...]}`).
pub(crate) fn message(v: &Value) -> Result<Message, ModelError> {
    if v.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_event(v));
    }
    let blocks = v.get("content").and_then(Value::as_array).ok_or_else(|| {
        protocol(format!(
            "the answer has no content: {}",
            shorten(&v.to_string(), 200)
        ))
    })?;
    let mut reader = Blocks::default();
    let mut chunks = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        reader.start(index, block, &mut chunks)?;
        reader.stop(index, &mut chunks);
    }
    let mut acc = StreamAccumulator::default();
    for chunk in &chunks {
        acc.push(chunk);
    }
    acc.push(&StreamChunk::Finish {
        reason: v
            .get("stop_reason")
            .and_then(Value::as_str)
            .map_or(FinishReason::Stop, finish_reason),
        usage: v.get("usage").and_then(usage),
    });
    let mut message = acc.into_message();
    message.id = v.get("id").and_then(Value::as_str).map(str::to_owned);
    Ok(message)
}

/// What a message's content blocks have said so far, by index.
#[derive(Default)]
struct Blocks {
    /// The open blocks: their index, kind, and (tool calls) their ordinal
    /// among the message's calls; (thinking) its signature so far.
    open: Vec<OpenBlock>,
    calls: usize,
}

struct OpenBlock {
    index: u64,
    kind: BlockKind,
}

enum BlockKind {
    Text {
        citations: Vec<Citation>,
    },
    ToolUse {
        call: usize,
    },
    Thinking {
        signature: String,
    },
    /// Whole in its start event (redacted thinking), or of a kind nodekit
    /// does not read (a server tool's result): later deltas are ignored.
    Other,
}

impl Blocks {
    /// A block begins (streamed) or is read whole.
    fn start(
        &mut self,
        index: usize,
        block: &Value,
        out: &mut Vec<StreamChunk>,
    ) -> Result<(), ModelError> {
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        let kind = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                push_text(out, text("text"));
                let citations = match block.get("citations") {
                    Some(c @ Value::Array(_)) => Vec::deserialize(c).map_err(|e| {
                        protocol(format!(
                            "content block {index} has unreadable citations ({e})"
                        ))
                    })?,
                    _ => Vec::new(),
                };
                BlockKind::Text { citations }
            }
            Some("tool_use") => {
                let call = self.calls;
                self.calls += 1;
                // Streamed, the input comes as deltas after an empty object.
                let arguments = match block.get("input") {
                    Some(Value::Object(o)) if o.is_empty() => String::new(),
                    Some(input) => input.to_string(),
                    None => String::new(),
                };
                out.push(StreamChunk::ToolCallDelta {
                    index: call,
                    id: Some(text("id").to_owned()),
                    name: Some(text("name").to_owned()),
                    arguments,
                });
                BlockKind::ToolUse { call }
            }
            Some("thinking") => {
                push_reasoning(out, text("thinking"));
                BlockKind::Thinking {
                    signature: text("signature").to_owned(),
                }
            }
            Some("redacted_thinking") => {
                out.push(StreamChunk::RedactedReasoning {
                    data: text("data").to_owned(),
                });
                BlockKind::Other
            }
            Some(_) => BlockKind::Other,
            None => return Err(protocol(format!("content block {index} has no type"))),
        };
        self.open.push(OpenBlock {
            index: index as u64,
            kind,
        });
        Ok(())
    }

    fn find(&mut self, index: u64) -> Option<&mut OpenBlock> {
        self.open.iter_mut().find(|b| b.index == index)
    }

    /// More of an open block.
    fn delta(
        &mut self,
        index: u64,
        delta: &Delta<'_>,
        out: &mut Vec<StreamChunk>,
    ) -> Result<(), ModelError> {
        let delta_type = delta.kind.as_ref();
        let Some(block) = self.find(index) else {
            return Err(protocol(format!(
                "a {delta_type} came for content block {index}, which is not open"
            )));
        };
        match (&mut block.kind, delta_type) {
            (BlockKind::Text { .. }, "text_delta") => push_text(out, text(&delta.text)),
            (BlockKind::Text { citations }, "citations_delta") => {
                citations.extend(delta.citation.clone());
            }
            (BlockKind::ToolUse { call }, "input_json_delta") => {
                out.push(StreamChunk::ToolCallDelta {
                    index: *call,
                    id: None,
                    name: None,
                    arguments: text(&delta.partial_json).to_owned(),
                })
            }
            (BlockKind::Thinking { .. }, "thinking_delta") => {
                push_reasoning(out, text(&delta.thinking))
            }
            (BlockKind::Thinking { signature }, "signature_delta") => {
                signature.push_str(text(&delta.signature));
            }
            // Deltas of blocks nodekit does not read.
            _ => {}
        }
        Ok(())
    }

    /// A block ends: a thinking block's signature closes its reasoning, a
    /// text block's citations close its text.
    fn stop(&mut self, index: usize, out: &mut Vec<StreamChunk>) {
        let Some(at) = self.open.iter().position(|b| b.index == index as u64) else {
            return;
        };
        match self.open.swap_remove(at).kind {
            BlockKind::Thinking { signature } if !signature.is_empty() => {
                out.push(StreamChunk::ReasoningSignature { signature });
            }
            BlockKind::Text { citations } => out.push(StreamChunk::TextEnd { citations }),
            _ => {}
        }
    }
}

/// A delta's text field, empty when absent.
fn text<'a>(field: &'a Option<std::borrow::Cow<'_, str>>) -> &'a str {
    field.as_deref().unwrap_or_default()
}

fn push_reasoning(out: &mut Vec<StreamChunk>, text: &str) {
    if !text.is_empty() {
        out.push(StreamChunk::ReasoningDelta {
            text: text.to_owned(),
        });
    }
}

fn push_text(out: &mut Vec<StreamChunk>, text: &str) {
    if !text.is_empty() {
        out.push(StreamChunk::TextDelta {
            text: text.to_owned(),
        });
    }
}

/// A text delta exactly as Anthropic writes it,
/// `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`:
/// its index and text, read without a JSON parser but for the text's
/// escapes. Any other spelling (spaces, another key order) is `None`, and
/// read by [`DeltaEvent`].
fn text_delta(data: &str) -> Option<(u64, std::borrow::Cow<'_, str>)> {
    let rest = data.strip_prefix(r#"{"type":"content_block_delta","index":"#)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let index = rest[..digits].parse().ok()?;
    let quoted = rest[digits..]
        .strip_prefix(r#","delta":{"type":"text_delta","text":"#)?
        .strip_suffix("}}")?;
    // The text is one JSON string: it ends at its closing quote, at the end.
    let bytes = quoted.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => break,
            // A raw control character is not JSON: the parser says so.
            0..0x20 => return None,
            _ => i += 1,
        }
    }
    if bytes.first() != Some(&b'"') || i != bytes.len() - 1 {
        return None;
    }
    let inner = &quoted[1..i];
    if !inner.contains('\\') {
        return Some((index, std::borrow::Cow::Borrowed(inner)));
    }
    serde_json::from_str::<String>(quoted)
        .ok()
        .map(|text| (index, std::borrow::Cow::Owned(text)))
}

/// `content_block_delta`, the most frequent event, read without building
/// a JSON tree.
#[derive(serde::Deserialize)]
struct DeltaEvent<'a> {
    index: u64,
    #[serde(borrow)]
    delta: Delta<'a>,
}

/// A delta's fields that nodekit reads.
#[derive(serde::Deserialize, Default)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<std::borrow::Cow<'a, str>>,
    /// A `citations_delta`'s citation.
    #[serde(default)]
    citation: Option<Citation>,
}

/// Reads the events of a streamed message ([`Transport::chunk_stream`](nodekit_http::Transport::chunk_stream)).
#[derive(Default)]
pub(crate) struct Events {
    blocks: Blocks,
    started: bool,
    usage: Option<Usage>,
    /// `message_start`'s usage object, which `message_delta`'s completes.
    usage_fields: serde_json::Map<String, Value>,
    finish: Option<FinishReason>,
}

impl StreamParser for Events {
    fn closed(&mut self) -> Result<StreamChunk, ModelError> {
        Err(protocol(if self.started {
            "the stream ended before message_stop: the answer was cut off"
        } else {
            "the stream ended before message_start"
        }))
    }

    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamChunk>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if event.event.as_deref() == Some("content_block_delta") {
            if let Some((index, text)) = text_delta(data) {
                let delta = Delta {
                    kind: "text_delta".into(),
                    text: Some(text),
                    ..Delta::default()
                };
                self.blocks.delta(index, &delta, out)?;
                return Ok(false);
            }
            if let Ok(delta) = serde_json::from_str::<DeltaEvent<'_>>(data) {
                self.blocks.delta(delta.index, &delta.delta, out)?;
                return Ok(false);
            }
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            protocol(format!(
                "a streamed event is not JSON ({e}): {}",
                shorten(data, 200)
            ))
        })?;
        // The data's `type` names the event; the `event:` line repeats it.
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let index = || {
            v.get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| protocol(format!("{kind} has no index")))
        };
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(Value::Object(u)) = v.pointer("/message/usage") {
                    self.usage_fields = u.clone();
                    self.usage = usage(&Value::Object(u.clone()));
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").unwrap_or(&Value::Null);
                self.blocks.start(index()? as usize, block, out)?;
            }
            "content_block_delta" => {
                let delta = v.get("delta").map(Delta::deserialize).transpose();
                let delta =
                    delta.map_err(|e| protocol(format!("a delta is not Anthropic's ({e})")))?;
                self.blocks
                    .delta(index()?, &delta.unwrap_or_default(), out)?;
            }
            "content_block_stop" => self.blocks.stop(index()? as usize, out),
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = Some(finish_reason(reason));
                }
                // Its counts are the totals so far; those it leaves out stay.
                if let Some(Value::Object(u)) = v.get("usage") {
                    for (key, value) in u {
                        if !value.is_null() {
                            self.usage_fields.insert(key.clone(), value.clone());
                        }
                    }
                    self.usage = usage(&Value::Object(self.usage_fields.clone()));
                }
            }
            "message_stop" => {
                if !self.started {
                    return Err(protocol("message_stop came before message_start"));
                }
                out.push(StreamChunk::Finish {
                    reason: self.finish.take().unwrap_or(FinishReason::Stop),
                    usage: self.usage,
                });
                return Ok(true);
            }
            "error" => return Err(error_event(&v)),
            // `ping`, and events of later API versions.
            _ => {}
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::text_delta;

    #[test]
    fn text_deltas_are_read_as_the_json_parser_reads_them() {
        let event = |text: &str| {
            format!(
                r#"{{"type":"content_block_delta","index":3,"delta":{{"type":"text_delta","text":{text}}}}}"#
            )
        };
        // JSON strings, escapes and all.
        for json in [
            r#""plain ☀""#,
            r#""a \"quote\" and \\ and \n\u00e9""#,
            r#""""#,
            r#""ends with \\""#,
        ] {
            let data = event(json);
            let (index, read) = text_delta(&data).unwrap();
            let expected: String = serde_json::from_str(json).unwrap();
            assert_eq!((index, read.as_ref()), (3, expected.as_str()), "{json}");
        }
        // Other spellings, and what is not one JSON string, go to the parser.
        for data in [
            r#"{"type":"content_block_delta","index":3,"delta":{"text":"x","type":"text_delta"}}"#
                .to_owned(),
            r#"{"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}}"#
                .to_owned(),
            event(r#""a" + "b""#),
            event(r#""unterminated}}"#),
            event("\"raw\nnewline\""),
            r#"{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}"#
                .to_owned(),
        ] {
            assert!(text_delta(&data).is_none(), "{data}");
        }
    }
}

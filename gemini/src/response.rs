//! Gemini's answers (`GenerateContentResponse`), whole or streamed a
//! response at a time, read into nodekit's stream chunks.

use nodekit_core::error::{Result, shorten};
use nodekit_core::message::{Citation, Message, Usage};
use nodekit_core::model::{
    FinishReason, ModelError, ModelErrorKind, StreamAccumulator, StreamChunk,
};
use nodekit_http::StreamParser;
use nodekit_http::sse::SseEvent;
use serde_json::Value;

fn protocol(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Protocol, message)
}

/// Gemini's usage metadata. Output counts the thinking too.
pub(crate) fn usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let n = |key: &str| u.get(key).and_then(Value::as_u64);
    let input = n("promptTokenCount").unwrap_or(0);
    let thoughts = n("thoughtsTokenCount");
    let output = n("candidatesTokenCount")
        .unwrap_or(0)
        .saturating_add(thoughts.unwrap_or(0));
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: n("totalTokenCount").unwrap_or(input.saturating_add(output)),
        cache_read_tokens: n("cachedContentTokenCount"),
        cache_creation_tokens: None,
        reasoning_tokens: thoughts,
    })
}

/// The error object Gemini answers with (`{"error": {"code": 400,
/// "message": …, "status": "INVALID_ARGUMENT"}}`), inside a 200 answer.
fn embedded_error(v: &Value) -> Option<ModelError> {
    let e = v.get("error").filter(|e| e.is_object())?;
    let status = e
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok());
    let kind = match status {
        Some(429) => ModelErrorKind::RateLimited,
        Some(401 | 403) => ModelErrorKind::Auth,
        Some(404) => ModelErrorKind::NotFound,
        Some(400..=499) => ModelErrorKind::BadRequest,
        _ => ModelErrorKind::Server,
    };
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("Gemini answered with an error");
    let mut error = ModelError::new(kind, shorten(message, 500));
    error.status = status;
    error.code = e.get("status").and_then(Value::as_str).map(str::to_owned);
    Some(error)
}

/// A block by the safety filters, naming the categories that blocked it
/// (those marked `blocked`, else those rated MEDIUM or HIGH).
fn blocked(what: &str, reason: &str, ratings: Option<&Value>) -> ModelError {
    let ratings = ratings
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let named = |keep: &dyn Fn(&Value) -> bool| {
        ratings
            .iter()
            .filter(|r| keep(r))
            .filter_map(|r| {
                let category = r.get("category")?.as_str()?;
                let probability = r
                    .get("probability")
                    .and_then(Value::as_str)
                    .unwrap_or("UNKNOWN");
                Some(format!("{category} (probability {probability})"))
            })
            .collect::<Vec<_>>()
    };
    let mut categories = named(&|r| r.get("blocked").and_then(Value::as_bool) == Some(true));
    if categories.is_empty() {
        categories = named(&|r| {
            matches!(
                r.get("probability").and_then(Value::as_str),
                Some("MEDIUM" | "HIGH")
            )
        });
    }
    let by = if categories.is_empty() {
        "no category named".to_owned()
    } else {
        categories.join(", ")
    };
    let mut error = ModelError::new(
        ModelErrorKind::BadRequest,
        format!("Gemini's safety filters blocked {what} ({reason}): {by}"),
    );
    error.code = Some(reason.to_owned());
    error
}

/// What the responses of one answer have said so far.
#[derive(Default)]
pub(crate) struct Reader {
    calls: usize,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    id: Option<String>,
    /// The candidate's citation sources so far (a stream repeats them).
    citations: Vec<Citation>,
}

/// A citation source (`{"startIndex", "endIndex", "uri", "title",
/// "license"}`, a span of the answer) as a `url_citation`.
fn citation(source: &Value) -> Citation {
    let mut citation = Citation::new("url_citation");
    for (from, to) in [
        ("uri", "url"),
        ("title", "title"),
        ("startIndex", "start_index"),
        ("endIndex", "end_index"),
        ("license", "license"),
    ] {
        if let Some(v) = source.get(from).filter(|v| !v.is_null()) {
            citation.fields.insert(to.into(), v.clone());
        }
    }
    citation
}

impl Reader {
    /// Reads one response into chunks.
    pub(crate) fn response(
        &mut self,
        v: &Value,
        out: &mut Vec<StreamChunk>,
    ) -> Result<(), ModelError> {
        if let Some(e) = embedded_error(v) {
            return Err(e);
        }
        if let Some(feedback) = v.get("promptFeedback")
            && let Some(reason) = feedback.get("blockReason").and_then(Value::as_str)
        {
            return Err(blocked("the prompt", reason, feedback.get("safetyRatings")));
        }
        if let Some(u) = v.get("usageMetadata").and_then(usage) {
            self.usage = Some(u);
        }
        if let Some(id) = v.get("responseId").and_then(Value::as_str) {
            self.id = Some(id.to_owned());
        }
        let Some(candidate) = v
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        for part in candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.part(part, out);
        }
        for source in candidate
            .pointer("/citationMetadata/citationSources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let citation = citation(source);
            if !self.citations.contains(&citation) {
                self.citations.push(citation);
            }
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            if !self.citations.is_empty() {
                out.push(StreamChunk::TextEnd {
                    citations: std::mem::take(&mut self.citations),
                });
            }
            self.finish = Some(match reason {
                "STOP" if self.calls > 0 => FinishReason::ToolCalls,
                "STOP" => FinishReason::Stop,
                "MAX_TOKENS" => FinishReason::Length,
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
                | "IMAGE_SAFETY" => {
                    return Err(blocked(
                        "the answer",
                        reason,
                        candidate.get("safetyRatings"),
                    ));
                }
                other => FinishReason::Other(other.to_owned()),
            });
        }
        Ok(())
    }

    fn part(&mut self, part: &Value, out: &mut Vec<StreamChunk>) {
        let text = part.get("text").and_then(Value::as_str);
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            if let Some(text) = text.filter(|t| !t.is_empty()) {
                out.push(StreamChunk::ReasoningDelta {
                    text: text.to_owned(),
                });
            }
            if let Some(signature) = signature {
                out.push(StreamChunk::ReasoningSignature {
                    signature: signature.to_owned(),
                });
            }
            return;
        }
        // A signature on the answer's own part signs the thinking before it.
        if let Some(signature) = signature {
            out.push(StreamChunk::ReasoningSignature {
                signature: signature.to_owned(),
            });
        }
        if let Some(call) = part.get("functionCall") {
            let index = self.calls;
            self.calls += 1;
            out.push(StreamChunk::ToolCallDelta {
                index,
                id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                name: Some(
                    call.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                ),
                arguments: call
                    .get("args")
                    .map_or_else(|| "{}".to_owned(), Value::to_string),
            });
        } else if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push(StreamChunk::TextDelta {
                text: text.to_owned(),
            });
        }
    }

    /// The `Finish` chunk, once Gemini gave its finish reason.
    fn finish(&mut self) -> Option<StreamChunk> {
        let reason = self.finish.take()?;
        Some(StreamChunk::Finish {
            reason,
            usage: self.usage,
        })
    }
}

/// Reads a whole answer.
pub(crate) fn message(v: &Value) -> Result<Message, ModelError> {
    let mut reader = Reader::default();
    let mut chunks = Vec::new();
    reader.response(v, &mut chunks)?;
    if v.get("candidates")
        .and_then(Value::as_array)
        .is_none_or(|c| c.is_empty())
    {
        return Err(protocol(format!(
            "the answer has no candidates: {}",
            shorten(&v.to_string(), 200)
        )));
    }
    let mut acc = StreamAccumulator::default();
    for chunk in &chunks {
        acc.push(chunk);
    }
    let finish = reader.finish().unwrap_or(StreamChunk::Finish {
        reason: if reader.calls > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        },
        usage: reader.usage,
    });
    acc.push(&finish);
    let mut message = acc.into_message();
    message.id = reader.id;
    Ok(message)
}

/// Reads the responses of a streamed answer, one an event
/// ([`Transport::chunk_stream`](nodekit_http::Transport::chunk_stream)).
#[derive(Default)]
pub(crate) struct Events {
    reader: Reader,
}

/// The most frequent streamed response, a piece of the answer's text and
/// nothing else the reader acts on, read without building a JSON tree. A
/// response with any other field (a finish reason, a thought, a function
/// call, a safety rating) does not fit and is read whole.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TextResponse<'a> {
    #[serde(borrow)]
    candidates: Vec<TextCandidate<'a>>,
    #[serde(default)]
    usage_metadata: Option<Value>,
    #[serde(default, borrow)]
    response_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, rename = "modelVersion")]
    _model_version: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TextCandidate<'a> {
    #[serde(borrow)]
    content: TextContent<'a>,
    #[serde(default, rename = "index")]
    _index: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TextContent<'a> {
    #[serde(default, rename = "role")]
    _role: Option<serde::de::IgnoredAny>,
    #[serde(borrow)]
    parts: Vec<TextPart<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TextPart<'a> {
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
}

impl Reader {
    /// Reads a [`TextResponse`], as [`Reader::response`] reads its fields.
    fn text_response(&mut self, r: TextResponse<'_>, out: &mut Vec<StreamChunk>) {
        if let Some(u) = r.usage_metadata.as_ref().and_then(usage) {
            self.usage = Some(u);
        }
        if let Some(id) = r.response_id {
            self.id = Some(id.into_owned());
        }
        let parts = r.candidates.into_iter().next().map(|c| c.content.parts);
        for part in parts.into_iter().flatten() {
            if !part.text.is_empty() {
                out.push(StreamChunk::TextDelta {
                    text: part.text.into_owned(),
                });
            }
        }
    }
}

impl StreamParser for Events {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamChunk>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if let Ok(text) = serde_json::from_str::<TextResponse<'_>>(data) {
            self.reader.text_response(text, out);
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            protocol(format!(
                "a streamed response is not JSON ({e}): {}",
                shorten(data, 200)
            ))
        })?;
        self.reader.response(&v, out)?;
        Ok(false)
    }

    // Gemini's stream ends by closing; the last response has the finish reason.
    fn closed(&mut self) -> Result<StreamChunk, ModelError> {
        self.reader.finish().ok_or_else(|| {
            protocol("the stream ended before Gemini's finishReason: the answer was cut off")
        })
    }
}

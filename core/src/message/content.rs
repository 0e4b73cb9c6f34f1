//! Message content: text, or typed parts (images, documents, reasoning,
//! citations), written in the form LangChain stores and its provider
//! integrations read, and read back from every form LangChain and n8n write.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Message content: plain text, or parts (text, images, documents,
/// reasoning) for providers that take them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Parts: text, images, documents, reasoning.
    Parts(Vec<ContentPart>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl Content {
    /// The text of the content; text parts are joined, the others left out.
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// Whether there is no text and no part.
    pub fn is_empty(&self) -> bool {
        match self {
            Content::Text(t) => t.is_empty(),
            Content::Parts(p) => p.is_empty(),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("text, or a list of content blocks")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Content, E> {
                Ok(Content::Text(text.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Content, E> {
                Ok(Content::Text(text))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(part) = seq.next_element()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::Text(s.to_owned())
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}

/// One part of a multi-part message.
///
/// Parts are written as LangChain stores them, so that n8n reads a history
/// nodekit wrote and hands each part to its own provider integrations:
/// text as `{"type": "text", "text": ...}` (with Anthropic's `citations`),
/// images as `image_url`, documents as LangChain's data blocks
/// (`{"type": "file", "source_type": "base64", "mime_type": ..., "data": ...}`),
/// reasoning as Anthropic's `thinking` and `redacted_thinking`. They are
/// read from those forms and from the others LangChain and its providers
/// write: OpenAI's `file`, Anthropic's `image` and `document` with a
/// `source`, LangChain's newer `mimeType` blocks and `reasoning`. A block of
/// any other kind is kept unchanged as [`ContentPart::Other`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentPart {
    /// Text, with the sources the model cited for it.
    Text {
        /// The text.
        text: String,
        /// What the provider says this text cites, in the order it gave
        /// them (empty for plain text).
        citations: Vec<Citation>,
    },
    /// An image, by URL or `data:` URL.
    ImageUrl {
        /// Where the image is.
        image_url: ImageUrl,
    },
    /// A document (a PDF, a text file), by URL or `data:` URL.
    File {
        /// Where the document is.
        file: FileUrl,
    },
    /// The model's reasoning before its answer (Anthropic's `thinking`
    /// block, Gemini's thought), as the provider gave it. A provider that
    /// signs it needs the block back unchanged, signature included, on the
    /// next turn of a conversation that calls tools: it is kept in memory
    /// like any part, and left out of [`Content::text`].
    Thinking {
        /// The reasoning text (may be empty when only a signature came).
        thinking: String,
        /// The provider's signature over it (Anthropic's `signature`,
        /// Gemini's `thoughtSignature`).
        signature: Option<String>,
    },
    /// Reasoning the provider returns encrypted (Anthropic's
    /// `redacted_thinking`), to be sent back as it came.
    RedactedThinking {
        /// The encrypted reasoning.
        data: String,
    },
    /// A block of a kind nodekit does not model (Anthropic's
    /// `server_tool_use`, a `document` with a text source...), kept as it
    /// came so that a history loses nothing. A provider client sends it
    /// only if it is one of that provider's own kinds, and refuses it
    /// otherwise, naming its `type`.
    Other(Map<String, Value>),
}

impl ContentPart {
    /// A text part without citations.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text {
            text: text.into(),
            citations: Vec::new(),
        }
    }

    /// The block's `type`, as it is written (`text`, `image_url`, `file`,
    /// `thinking`, `redacted_thinking`, or an [`Other`](Self::Other)
    /// block's own).
    pub fn kind(&self) -> &str {
        match self {
            ContentPart::Text { .. } => "text",
            ContentPart::ImageUrl { .. } => "image_url",
            ContentPart::File { .. } => "file",
            ContentPart::Thinking { .. } => "thinking",
            ContentPart::RedactedThinking { .. } => "redacted_thinking",
            ContentPart::Other(block) => block.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

/// An image reference in OpenAI's form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageUrl {
    /// `https://...` or `data:image/png;base64,...`.
    pub url: String,
    /// `low`, `high` or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A document reference: a URL, or a `data:` URL with its media type
/// (`data:application/pdf;base64,...`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileUrl {
    /// `https://...` or `data:application/pdf;base64,...`.
    pub url: String,
    /// The file's name, for providers that show or need one.
    pub filename: Option<String>,
    /// The media type of a document given by address, for providers that
    /// need it (Gemini); a `data:` URL carries its own.
    pub mime_type: Option<String>,
}

impl FileUrl {
    /// The media type: a `data:` URL's own, else [`mime_type`](Self::mime_type).
    pub fn media_type(&self) -> Option<&str> {
        match data_url(&self.url) {
            Some((media_type, _)) => Some(media_type),
            None => self.mime_type.as_deref(),
        }
    }
}

/// A source the model cites for a span of its answer, in the provider's own
/// form: Anthropic's `char_location`, `page_location`,
/// `content_block_location`, `web_search_result_location` and
/// `search_result_location`; OpenAI's `url_citation` and `file_citation`;
/// Gemini's citation sources as `url_citation`. LangChain keeps
/// Anthropic's in the `citations` of a text block, and so does nodekit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    /// The provider's name for the kind of location.
    #[serde(rename = "type")]
    pub kind: String,
    /// The passage of the source that is cited, when the provider quotes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cited_text: Option<String>,
    /// The rest, under the provider's names: the document's index and
    /// title, character or page ranges, a URL, a span of the answer.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl Citation {
    /// A citation of kind `kind` with no quote and no fields yet.
    pub fn new(kind: impl Into<String>) -> Self {
        Citation {
            kind: kind.into(),
            cited_text: None,
            fields: Map::new(),
        }
    }

    /// The cited web page, for web citations.
    pub fn url(&self) -> Option<&str> {
        self.fields.get("url").and_then(Value::as_str)
    }

    /// The cited source's title (`document_title`, or a web page's `title`).
    pub fn title(&self) -> Option<&str> {
        ["document_title", "title"]
            .iter()
            .find_map(|k| self.fields.get(*k).and_then(Value::as_str))
    }
}

/// `data:<type>;base64,<data>` as its media type and data.
pub fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    Some((media_type, data))
}

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let ContentPart::Other(block) = self {
            return block.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.kind())?;
        match self {
            ContentPart::Text { text, citations } => {
                map.serialize_entry("text", text)?;
                if !citations.is_empty() {
                    map.serialize_entry("citations", citations)?;
                }
            }
            ContentPart::ImageUrl { image_url } => map.serialize_entry("image_url", image_url)?,
            ContentPart::File { file } => {
                // LangChain's data block, which its OpenAI, Anthropic and
                // Google integrations each turn into their own.
                match data_url(&file.url) {
                    Some((media_type, data)) => {
                        map.serialize_entry("source_type", "base64")?;
                        map.serialize_entry("mime_type", media_type)?;
                        map.serialize_entry("data", data)?;
                    }
                    None => {
                        map.serialize_entry("source_type", "url")?;
                        map.serialize_entry("url", &file.url)?;
                        if let Some(mime_type) = &file.mime_type {
                            map.serialize_entry("mime_type", mime_type)?;
                        }
                    }
                }
                if let Some(filename) = &file.filename {
                    map.serialize_entry("metadata", &serde_json::json!({"filename": filename}))?;
                }
            }
            ContentPart::Thinking {
                thinking,
                signature,
            } => {
                map.serialize_entry("thinking", thinking)?;
                if let Some(signature) = signature {
                    map.serialize_entry("signature", signature)?;
                }
            }
            ContentPart::RedactedThinking { data } => map.serialize_entry("data", data)?,
            ContentPart::Other(_) => unreachable!("written whole above"),
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let block = Map::<String, Value>::deserialize(deserializer)?;
        ContentPart::from_block(block).map_err(D::Error::custom)
    }
}

impl ContentPart {
    /// Reads one stored block; see [`ContentPart`] for the forms.
    fn from_block(mut block: Map<String, Value>) -> Result<ContentPart, String> {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let kind = s(block.get("type")).ok_or("a content block needs a string `type`")?;
        let part = match kind.as_str() {
            "text" => {
                let text = s(block.get("text")).ok_or("a text block needs a string `text`")?;
                let citations = match block.remove("citations") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(c) => serde_json::from_value(c)
                        .map_err(|e| format!("a text block's `citations` cannot be read: {e}"))?,
                };
                ContentPart::Text { text, citations }
            }
            "image_url" => match block.remove("image_url") {
                Some(Value::String(url)) => ContentPart::ImageUrl {
                    image_url: ImageUrl { url, detail: None },
                },
                Some(v) => ContentPart::ImageUrl {
                    image_url: serde_json::from_value(v)
                        .map_err(|e| format!("an image_url block cannot be read: {e}"))?,
                },
                None => return Err("an image_url block needs its `image_url`".into()),
            },
            "thinking" => ContentPart::Thinking {
                thinking: s(block.get("thinking")).unwrap_or_default(),
                signature: s(block.get("signature")),
            },
            // LangChain's standard reasoning block.
            "reasoning" if block.get("reasoning").is_some_and(Value::is_string) => {
                ContentPart::Thinking {
                    thinking: s(block.get("reasoning")).unwrap_or_default(),
                    signature: s(block.get("signature")),
                }
            }
            "redacted_thinking" => ContentPart::RedactedThinking {
                data: s(block.get("data")).ok_or("a redacted_thinking block needs its `data`")?,
            },
            "image" | "file" | "document" => match source(&block) {
                Some((url, ..)) if kind == "image" => ContentPart::ImageUrl {
                    image_url: ImageUrl { url, detail: None },
                },
                Some((url, mime_type, filename)) => ContentPart::File {
                    file: FileUrl {
                        url,
                        filename,
                        mime_type,
                    },
                },
                None => ContentPart::Other(block),
            },
            _ => ContentPart::Other(block),
        };
        Ok(part)
    }
}

/// Where an image or document block's data is, as `(url, mime_type,
/// filename)`, from any of the forms in [`ContentPart`]; `None` for a block
/// that says more than that (a file id, a text source, Anthropic's
/// `citations` or `context`), which is kept whole.
fn source(block: &Map<String, Value>) -> Option<(String, Option<String>, Option<String>)> {
    const KNOWN: [&str; 11] = [
        "type",
        "source_type",
        "source",
        "mime_type",
        "mimeType",
        "data",
        "url",
        "file",
        "metadata",
        "title",
        "id",
    ];
    if block.keys().any(|k| !KNOWN.contains(&k.as_str())) {
        return None;
    }
    fn s(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str)
    }
    let inner = |outer: &str, key: &str| s(block.get(outer).and_then(|o| o.get(key)));
    let filename = inner("metadata", "filename")
        .or_else(|| inner("metadata", "name"))
        .or_else(|| inner("file", "filename"))
        .or_else(|| s(block.get("title")))
        .map(str::to_owned);
    let mime = s(block.get("mime_type")).or_else(|| s(block.get("mimeType")));
    let base64 = |mime: Option<&str>, data: &str| Some(format!("data:{};base64,{data}", mime?));
    let url = if let Some(source) = block.get("source").and_then(Value::as_object) {
        // Anthropic's `{"type": "base64" | "url", ...}`.
        match s(source.get("type"))? {
            "base64" => base64(s(source.get("media_type")), s(source.get("data"))?)?,
            "url" => s(source.get("url"))?.to_owned(),
            _ => return None,
        }
    } else if let Some(file) = block.get("file").and_then(Value::as_object) {
        // OpenAI's `{"file": {"file_data" | "url": ...}}`.
        s(file.get("file_data"))
            .or_else(|| s(file.get("url")))?
            .to_owned()
    } else {
        match (
            s(block.get("source_type")),
            s(block.get("data")),
            s(block.get("url")),
        ) {
            (Some("base64") | None, Some(data), None) => base64(mime, data)?,
            (Some("url") | None, None, Some(url)) => url.to_owned(),
            _ => return None,
        }
    };
    let mime_type = match data_url(&url) {
        Some(_) => None,
        None => mime.map(str::to_owned),
    };
    Some((url, mime_type, filename))
}

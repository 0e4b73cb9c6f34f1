//! Text splitters: cut a text into chunks small enough to embed, with some
//! overlap so a chunk keeps its context. The chunks are LangChain JS's for
//! the same settings, character for character (pinned by fixtures
//! generated from `@langchain/textsplitters`, `testdata/`).
//!
//! - [`RecursiveCharacterTextSplitter`] tries separators in order
//!   (paragraphs, lines, words, characters) and merges the pieces into
//!   chunks of at most `chunk_size`, each overlapping the one before by up
//!   to `chunk_overlap`.
//! - [`CharacterTextSplitter`] splits on one separator and merges.
//! - [`split_documents`] splits documents and records each chunk's lines in
//!   its metadata (`loc.lines`), as LangChain's `createDocuments` does.
//!
//! Lengths are counted as JavaScript counts them, in UTF-16 code units (an
//! emoji counts 2), and chunks are trimmed of JavaScript's whitespace. One
//! difference, on purpose: with the empty separator LangChain cuts the text
//! into code units, and may cut an emoji in two halves that are not text;
//! nodekit cuts it into characters, so such a character stays whole.

mod js;
mod language;

pub use language::Language;

use std::collections::VecDeque;

use serde_json::{Map, Value, json};

use crate::document::Document;
use crate::error::{Error, Result};

/// LangChain's separators for plain text: paragraphs, lines, words, characters.
pub const DEFAULT_SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];

/// Cuts text into chunks. Object-safe: nodes supply `Arc<dyn TextSplitter>`.
pub trait TextSplitter: Send + Sync + std::fmt::Debug {
    /// The text's chunks, in order.
    fn split_text(&self, text: &str) -> Vec<String>;

    /// Whether this object already writes to a run log (nodekit's wrappers say yes).
    #[doc(hidden)]
    fn is_logged(&self) -> bool {
        false
    }
}

/// Chunk size and overlap, checked as LangChain checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sizes {
    chunk_size: usize,
    chunk_overlap: usize,
}

impl Sizes {
    fn new(chunk_size: usize, chunk_overlap: usize) -> Result<Sizes> {
        if chunk_overlap >= chunk_size {
            return Err(Error::InvalidSetting {
                name: "chunkOverlap".into(),
                value: chunk_overlap.to_string(),
                expected: format!("less than the chunk size ({chunk_size})"),
            });
        }
        Ok(Sizes {
            chunk_size,
            chunk_overlap,
        })
    }

    /// LangChain's `mergeSplits`: joins consecutive pieces with `separator`
    /// into chunks of at most `chunk_size` (counting the separators between
    /// them), starting each new chunk with as many of the previous chunk's
    /// last pieces as fit in `chunk_overlap` (not counting separators).
    fn merge(&self, splits: &[&str], separator: &str, out: &mut Vec<String>) {
        let separator_len = js::len(separator);
        let mut current: VecDeque<(&str, usize)> = VecDeque::new();
        let mut total = 0;
        for &piece in splits {
            let len = js::len(piece);
            let overflows = |total: usize, pieces: usize| {
                total + len + pieces * separator_len > self.chunk_size
            };
            if overflows(total, current.len()) {
                if total > self.chunk_size {
                    tracing::warn!(
                        size = total,
                        chunk_size = self.chunk_size,
                        "text splitter: created a chunk longer than the chunk size"
                    );
                }
                if !current.is_empty() {
                    push_joined(&current, separator, out);
                    while total > self.chunk_overlap
                        || (overflows(total, current.len()) && total > 0)
                    {
                        let Some((_, first)) = current.pop_front() else {
                            break;
                        };
                        total -= first;
                    }
                }
            }
            current.push_back((piece, len));
            total += len;
        }
        push_joined(&current, separator, out);
    }
}

/// The pieces joined by `separator` and trimmed, unless that leaves nothing.
fn push_joined(pieces: &VecDeque<(&str, usize)>, separator: &str, out: &mut Vec<String>) {
    let mut joined = String::with_capacity(pieces.iter().map(|(p, _)| p.len() + 1).sum());
    for (i, (piece, _)) in pieces.iter().enumerate() {
        if i > 0 {
            joined.push_str(separator);
        }
        joined.push_str(piece);
    }
    let trimmed = js::trim(&joined);
    if !trimmed.is_empty() {
        out.push(if trimmed.len() == joined.len() {
            joined
        } else {
            trimmed.to_owned()
        });
    }
}

/// `text` split on `separator`, without empty pieces. Kept separators stay
/// at the start of the piece that follows them, and the text is cut before
/// every place a separator starts, overlapping ones included (LangChain
/// splits on the regular expression `(?=separator)`). The empty separator
/// cuts the text into characters.
fn split_on<'t>(text: &'t str, separator: &str, keep: bool) -> Vec<&'t str> {
    if separator.is_empty() {
        return text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
    }
    if !keep {
        let mut pieces = Vec::new();
        let mut start = 0;
        while let Some(at) = find_from(text, start, separator) {
            if at > start {
                pieces.push(&text[start..at]);
            }
            start = at + separator.len();
        }
        if start < text.len() {
            pieces.push(&text[start..]);
        }
        return pieces;
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut from = 0;
    while let Some(at) = find_from(text, from, separator) {
        if at > start {
            pieces.push(&text[start..at]);
            start = at;
        }
        // The next place may overlap this one: look from the next character.
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Where the next `separator` (not empty) starts in `text`, at or after
/// byte `from`. The separator's first character is looked for with the
/// character searcher (a `memchr` over bytes), much faster than the
/// substring searcher on the short separators splitters use.
fn find_from(text: &str, from: usize, separator: &str) -> Option<usize> {
    let first = separator.chars().next()?;
    let mut at = from;
    loop {
        let found = at + text[at..].find(first)?;
        if text[found..].starts_with(separator) {
            return Some(found);
        }
        at = found + first.len_utf8();
    }
}

/// LangChain's `RecursiveCharacterTextSplitter`.
///
/// It splits the text on the first of its separators that occurs in it;
/// pieces shorter than the chunk size are merged into chunks, longer ones
/// are split again with the separators after that one. A piece still too
/// long when no separator is left becomes a chunk of its own.
///
/// ```
/// use nodekit::text_splitter::{RecursiveCharacterTextSplitter, TextSplitter};
///
/// let splitter = RecursiveCharacterTextSplitter::new(10, 3)?.keep_separator(false);
/// assert_eq!(
///     splitter.split_text("one two three four five six seven eight nine ten"),
///     ["one two", "two three", "four five", "six seven", "eight nine", "ten"],
/// );
/// # Ok::<(), nodekit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecursiveCharacterTextSplitter {
    sizes: Sizes,
    separators: Vec<String>,
    keep_separator: bool,
}

impl RecursiveCharacterTextSplitter {
    /// Chunks of at most `chunk_size` (UTF-16 code units), overlapping by
    /// up to `chunk_overlap`, on [`DEFAULT_SEPARATORS`], keeping separators
    /// (LangChain's defaults, what n8n's Default Data Loader uses). An
    /// overlap not below the chunk size is an error.
    pub fn new(chunk_size: usize, chunk_overlap: usize) -> Result<Self> {
        Ok(RecursiveCharacterTextSplitter {
            sizes: Sizes::new(chunk_size, chunk_overlap)?,
            separators: DEFAULT_SEPARATORS.map(str::to_owned).to_vec(),
            keep_separator: true,
        })
    }

    /// The separators to try, in order.
    pub fn separators<S: Into<String>>(mut self, separators: impl IntoIterator<Item = S>) -> Self {
        self.separators = separators.into_iter().map(Into::into).collect();
        self
    }

    /// The separators of `language` (LangChain's `fromLanguage`).
    pub fn language(self, language: Language) -> Self {
        self.separators(language.separators().iter().copied())
    }

    /// Whether a separator stays in the text, at the start of the piece
    /// after it (`true`, LangChain's default), or is dropped (`false`, what
    /// n8n's Recursive Character Text Splitter node does).
    pub fn keep_separator(mut self, keep: bool) -> Self {
        self.keep_separator = keep;
        self
    }

    fn split_with(&self, text: &str, separators: &[String], out: &mut Vec<String>) {
        // The first separator the text holds; the empty one always matches.
        let mut separator = separators.last().map_or("", String::as_str);
        let mut finer: Option<&[String]> = None;
        for (i, s) in separators.iter().enumerate() {
            if s.is_empty() {
                separator = "";
                break;
            }
            if find_from(text, 0, s).is_some() {
                separator = s;
                finer = Some(&separators[i + 1..]);
                break;
            }
        }
        let splits = split_on(text, separator, self.keep_separator);
        let joiner = if self.keep_separator { "" } else { separator };
        let mut good: Vec<&str> = Vec::new();
        for piece in splits {
            if js::len(piece) < self.sizes.chunk_size {
                good.push(piece);
                continue;
            }
            if !good.is_empty() {
                self.sizes.merge(&good, joiner, out);
                good.clear();
            }
            match finer {
                Some(finer) => self.split_with(piece, finer, out),
                None => out.push(piece.to_owned()),
            }
        }
        if !good.is_empty() {
            self.sizes.merge(&good, joiner, out);
        }
    }
}

impl TextSplitter for RecursiveCharacterTextSplitter {
    fn split_text(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.split_with(text, &self.separators, &mut out);
        out
    }
}

/// LangChain's `CharacterTextSplitter`: one separator, pieces merged into
/// chunks; a piece longer than the chunk size becomes a chunk of its own
/// (with a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharacterTextSplitter {
    sizes: Sizes,
    separator: String,
    keep_separator: bool,
}

impl CharacterTextSplitter {
    /// Chunks of at most `chunk_size` split on `separator` (dropped from
    /// the chunks; LangChain's default separator is `"\n\n"`, n8n's node's
    /// is `""`, single characters).
    pub fn new(
        separator: impl Into<String>,
        chunk_size: usize,
        chunk_overlap: usize,
    ) -> Result<Self> {
        Ok(CharacterTextSplitter {
            sizes: Sizes::new(chunk_size, chunk_overlap)?,
            separator: separator.into(),
            keep_separator: false,
        })
    }

    /// Whether the separator stays at the start of the piece after it.
    pub fn keep_separator(mut self, keep: bool) -> Self {
        self.keep_separator = keep;
        self
    }
}

impl TextSplitter for CharacterTextSplitter {
    fn split_text(&self, text: &str) -> Vec<String> {
        let splits = split_on(text, &self.separator, self.keep_separator);
        let joiner = if self.keep_separator {
            ""
        } else {
            &self.separator
        };
        let mut out = Vec::new();
        self.sizes.merge(&splits, joiner, &mut out);
        out
    }
}

/// Splits each document into chunks that keep its metadata, plus
/// `loc.lines` (`{"from", "to"}`, counted from 1): the lines of the
/// document the chunk spans, found as LangChain's `createDocuments` finds
/// them (the chunk's text looked up after the previous chunk's start).
pub fn split_documents(splitter: &dyn TextSplitter, documents: &[Document]) -> Vec<Document> {
    let mut out = Vec::new();
    for document in documents {
        let text = document.page_content.as_str();
        let mut at = js::Positions::new(text);
        let mut line = 1i64;
        let mut previous: Option<(i64, usize)> = None;
        for chunk in splitter.split_text(text) {
            let index = at.index_of(&chunk, previous.map_or(0, |(i, _)| i + 1));
            match previous {
                None => line += at.newlines_in_slice(0, index) as i64,
                Some((before, before_len)) => {
                    let end = before + before_len as i64;
                    if end < index {
                        line += at.newlines_in_slice(end, index) as i64;
                    } else if end > index {
                        line -= at.newlines_in_slice(index, end) as i64;
                    }
                }
            }
            let lines = js::newlines(&chunk) as i64;
            let mut metadata = document.metadata.clone();
            let mut loc = match metadata.get("loc") {
                Some(Value::Object(loc)) => loc.clone(),
                _ => Map::new(),
            };
            loc.insert("lines".into(), json!({"from": line, "to": line + lines}));
            metadata.insert("loc".into(), Value::Object(loc));
            line += lines;
            previous = Some((index, js::len(&chunk)));
            out.push(Document {
                page_content: chunk,
                metadata,
                id: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;

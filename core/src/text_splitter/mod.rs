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
//! - [`TextSplitter::chunks`] gives the chunks as parts of the text,
//!   copying none (the default, kept separators) or only those the
//!   dropped separators made differ from it; [`TextSplitter::split_text`]
//!   gives each its own `String`.
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

use std::borrow::Cow;
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

    /// The same chunks, borrowed from `text` wherever a chunk is a part of
    /// it, so nothing is copied (nodekit's splitters borrow every chunk
    /// when separators are kept, the default). The default method owns
    /// what [`split_text`](TextSplitter::split_text) returns.
    fn chunks<'t>(&self, text: &'t str) -> Vec<Cow<'t, str>> {
        self.split_text(text).into_iter().map(Cow::Owned).collect()
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

    /// A LangChain `mergeSplits` over pieces of `text` joined by `separator`.
    fn merger<'t, 's>(&self, text: &'t str, separator: &'s str) -> Merger<'t, 's> {
        Merger {
            sizes: *self,
            text,
            separator,
            separator_len: js::len(separator),
            current: VecDeque::new(),
            total: 0,
            bytes: 0,
        }
    }
}

/// LangChain's `mergeSplits`, fed one piece at a time: joins consecutive
/// pieces of `text` with `separator` into chunks of at most `chunk_size`
/// (counting the separators between them), starting each new chunk with
/// as many of the previous chunk's last pieces as fit in `chunk_overlap`
/// (not counting separators).
struct Merger<'t, 's> {
    sizes: Sizes,
    text: &'t str,
    separator: &'s str,
    separator_len: usize,
    /// The pieces of the chunk being built, with their lengths.
    current: VecDeque<(&'t str, usize)>,
    /// Their length in code units, and in bytes.
    total: usize,
    bytes: usize,
}

impl<'t> Merger<'t, '_> {
    /// Adds the next piece, `len` code units long.
    fn push(&mut self, piece: &'t str, len: usize, out: &mut Vec<Cow<'t, str>>) {
        let Sizes {
            chunk_size,
            chunk_overlap,
        } = self.sizes;
        let overflows =
            |total: usize, pieces: usize| total + len + pieces * self.separator_len > chunk_size;
        if overflows(self.total, self.current.len()) {
            if self.total > chunk_size {
                tracing::warn!(
                    size = self.total,
                    chunk_size,
                    "text splitter: created a chunk longer than the chunk size"
                );
            }
            if !self.current.is_empty() {
                self.emit(out);
                while self.total > chunk_overlap
                    || (overflows(self.total, self.current.len()) && self.total > 0)
                {
                    let Some((first, first_len)) = self.current.pop_front() else {
                        break;
                    };
                    self.total -= first_len;
                    self.bytes -= first.len();
                }
            }
        }
        self.current.push_back((piece, len));
        self.total += len;
        self.bytes += piece.len();
    }

    /// Ends the merge with the last chunk.
    fn finish(self, out: &mut Vec<Cow<'t, str>>) {
        self.emit(out);
    }

    /// The current pieces joined by the separator and trimmed, unless that
    /// leaves nothing. When they stand in the text one separator apart
    /// (always so when separators are kept and the joiner is empty), the
    /// chunk is borrowed from the text.
    fn emit(&self, out: &mut Vec<Cow<'t, str>>) {
        let (Some((first, _)), Some((last, _))) = (self.current.front(), self.current.back())
        else {
            return;
        };
        let text = self.text;
        let offset = |piece: &str| piece.as_ptr() as usize - text.as_ptr() as usize;
        let span = &text[offset(first)..offset(last) + last.len()];
        let joined_len = self.bytes + (self.current.len() - 1) * self.separator.len();
        let chunk = if span.len() == joined_len {
            Cow::Borrowed(js::trim(span))
        } else {
            let mut joined = String::with_capacity(joined_len);
            for (i, (piece, _)) in self.current.iter().enumerate() {
                if i > 0 {
                    joined.push_str(self.separator);
                }
                joined.push_str(piece);
            }
            match js::trim(&joined) {
                trimmed if trimmed.len() == joined.len() => Cow::Owned(joined),
                trimmed => Cow::Owned(trimmed.to_owned()),
            }
        };
        if !chunk.is_empty() {
            out.push(chunk);
        }
    }
}

/// `text` split on `separator`, without empty pieces. Kept separators stay
/// at the start of the piece that follows them, and the text is cut before
/// every place a separator starts, overlapping ones included (LangChain
/// splits on the regular expression `(?=separator)`); dropped ones are
/// found left to right without overlaps (JavaScript's `split`). The empty
/// separator cuts the text into characters.
fn split_on<'t, 's>(text: &'t str, separator: &'s str, keep: bool) -> Pieces<'t, 's> {
    Pieces {
        text,
        separator,
        keep,
        start: 0,
        starts: starts(text, separator),
    }
}

/// The pieces of [`split_on`], found as they are asked for, so each is
/// used while its bytes are still in the cache.
struct Pieces<'t, 's> {
    text: &'t str,
    separator: &'s str,
    keep: bool,
    /// Where the next piece starts.
    start: usize,
    /// The places of the separator after `start`.
    starts: Starts<'t, 's>,
}

impl<'t> Iterator for Pieces<'t, '_> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let text = self.text;
        let rest = text.get(self.start..).filter(|rest| !rest.is_empty())?;
        if self.separator.is_empty() {
            let len = rest.chars().next().map_or(0, char::len_utf8);
            self.start += len;
            return Some(&rest[..len]);
        }
        for at in self.starts.by_ref() {
            let start = self.start;
            if self.keep {
                if at > start {
                    self.start = at;
                    return Some(&text[start..at]);
                }
            } else if at >= start {
                self.start = at + self.separator.len();
                if at > start {
                    return Some(&text[start..at]);
                }
            }
        }
        let rest = &text[std::mem::replace(&mut self.start, text.len())..];
        (!rest.is_empty()).then_some(rest)
    }
}

/// Every byte position where `separator` (not empty; the empty one has
/// none) starts in `text`, overlapping ones included, in order.
fn starts<'t, 's>(text: &'t str, separator: &'s str) -> Starts<'t, 's> {
    let (first, tail) = separator
        .as_bytes()
        .split_first()
        .map_or((0, &[][..]), |(first, tail)| (*first, tail));
    Starts {
        bytes: text.as_bytes(),
        tail,
        firsts: (!separator.is_empty()).then(|| memchr::memchr_iter(first, text.as_bytes())),
    }
}

/// The places [`starts`] finds. The separator's first byte is found with
/// `memchr`, much faster than a substring search on the short separators
/// splitters use; a match always starts on a character boundary, as a
/// first byte of UTF-8 is never a continuation byte.
struct Starts<'t, 's> {
    bytes: &'t [u8],
    /// The separator after its first byte.
    tail: &'s [u8],
    firsts: Option<memchr::Memchr<'t>>,
}

impl Iterator for Starts<'_, '_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let (bytes, tail) = (self.bytes, self.tail);
        self.firsts
            .as_mut()?
            .find(|&at| tail.is_empty() || bytes[at + 1..].starts_with(tail))
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

    /// Splits `text` (ASCII throughout when `ascii`, so lengths are byte
    /// counts).
    fn split_with<'t>(
        &self,
        text: &'t str,
        ascii: bool,
        separators: &[String],
        out: &mut Vec<Cow<'t, str>>,
    ) {
        // The first separator the text holds; the empty one always matches.
        let mut separator = separators.last().map_or("", String::as_str);
        let mut finer: Option<&[String]> = None;
        for (i, s) in separators.iter().enumerate() {
            if s.is_empty() {
                separator = "";
                break;
            }
            if starts(text, s).next().is_some() {
                separator = s;
                finer = Some(&separators[i + 1..]);
                break;
            }
        }
        let joiner = if self.keep_separator { "" } else { separator };
        // The pieces shorter than a chunk, merged as they come.
        let mut good = self.sizes.merger(text, joiner);
        for piece in split_on(text, separator, self.keep_separator) {
            let len = if ascii { piece.len() } else { js::len(piece) };
            if len < self.sizes.chunk_size {
                good.push(piece, len, out);
                continue;
            }
            std::mem::replace(&mut good, self.sizes.merger(text, joiner)).finish(out);
            match finer {
                Some(finer) => self.split_with(piece, ascii, finer, out),
                None => out.push(Cow::Borrowed(piece)),
            }
        }
        good.finish(out);
    }
}

impl TextSplitter for RecursiveCharacterTextSplitter {
    fn split_text(&self, text: &str) -> Vec<String> {
        owned(self.chunks(text))
    }

    fn chunks<'t>(&self, text: &'t str) -> Vec<Cow<'t, str>> {
        let mut out = Vec::new();
        self.split_with(text, text.is_ascii(), &self.separators, &mut out);
        out
    }
}

fn owned(chunks: Vec<Cow<'_, str>>) -> Vec<String> {
    chunks.into_iter().map(Cow::into_owned).collect()
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
        owned(self.chunks(text))
    }

    fn chunks<'t>(&self, text: &'t str) -> Vec<Cow<'t, str>> {
        let joiner = if self.keep_separator {
            ""
        } else {
            &self.separator
        };
        let mut out = Vec::new();
        let mut merger = self.sizes.merger(text, joiner);
        for piece in split_on(text, &self.separator, self.keep_separator) {
            merger.push(piece, js::len(piece), &mut out);
        }
        merger.finish(&mut out);
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

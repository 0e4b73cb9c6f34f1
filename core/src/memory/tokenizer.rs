//! Token counting as LangChain's `getNumTokens` does it: with the
//! `tiktoken` feature, the encodings bundled in `tiktoken-rs` (no download),
//! split the way js-tiktoken splits; without it, and for text the encodings
//! refuse, LangChain's length estimate.

#[cfg(feature = "tiktoken")]
use std::sync::OnceLock;

/// How a token buffer counts tokens: like LangChain's `getNumTokens`. The
/// two encodings exist with the `tiktoken` feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tokenizer {
    /// `cl100k_base`: GPT-4, GPT-3.5, and nodekit's default.
    #[cfg(feature = "tiktoken")]
    Cl100kBase,
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-4.5, GPT-5 and the o-series.
    #[cfg(feature = "tiktoken")]
    O200kBase,
    /// `ceil(UTF-16 length / 4)`: LangChain's fallback when it has no encoding.
    Approximate,
}

#[cfg(feature = "tiktoken")]
/// Pieces longer than this are counted in chunks of this size: `fancy-regex`
/// (inside tiktoken-rs) panics on very long whitespace runs, and no real
/// token is near this long.
pub(super) const LONG_PIECE: usize = 16 * 1024;

/// The longest token of either encoding, in bytes; checked by a test. A text
/// of `b` bytes has at least `b / MAX_TOKEN_BYTES` tokens.
pub(super) const MAX_TOKEN_BYTES: usize = 128;

#[cfg(feature = "tiktoken")]
/// Special tokens js-tiktoken refuses to encode (all of the encoding's).
pub(super) const CL100K_SPECIAL: &[&str] = &[
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
];
#[cfg(feature = "tiktoken")]
pub(super) const O200K_SPECIAL: &[&str] = &["<|endoftext|>", "<|endofprompt|>"];

#[cfg(feature = "tiktoken")]
/// tiktoken's split pattern in the form js-tiktoken uses, without the
/// `\s+(?!\S)` look-ahead (emulated in [`Pieces`]) so the linear-time `regex`
/// crate can run it.
const CL100K_PIECES: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+";
#[cfg(feature = "tiktoken")]
const O200K_PIECES: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+",
);

impl Tokenizer {
    /// The encoding for `model`: `o200k_base` for GPT-4o, GPT-4.1, GPT-4.5,
    /// GPT-5, gpt-oss and o-series names, else `cl100k_base`. Case and a
    /// provider prefix (`openai/`) are ignored.
    /// Without the `tiktoken` feature every model counts approximately.
    #[cfg(feature = "tiktoken")]
    pub fn for_model(model: &str) -> Tokenizer {
        let name = model.rsplit('/').next().unwrap_or(model).trim();
        let name = name.to_ascii_lowercase();
        let o200k_family = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "chatgpt-4o",
            "gpt-oss",
        ]
        .iter()
        .any(|p| name.starts_with(p));
        let mut chars = name.chars();
        let o_series =
            chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit());
        if o200k_family || o_series {
            Tokenizer::O200kBase
        } else {
            Tokenizer::Cl100kBase
        }
    }

    /// The encoding for `model`: without the `tiktoken` feature, always
    /// [`Tokenizer::Approximate`].
    #[cfg(not(feature = "tiktoken"))]
    pub fn for_model(_model: &str) -> Tokenizer {
        Tokenizer::Approximate
    }

    /// The encoding's name (`cl100k_base`, `o200k_base`, `approximate`).
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "tiktoken")]
            Tokenizer::Cl100kBase => "cl100k_base",
            #[cfg(feature = "tiktoken")]
            Tokenizer::O200kBase => "o200k_base",
            Tokenizer::Approximate => "approximate",
        }
    }

    /// Tokens in `text`, as LangChain's `getNumTokens` counts them.
    ///
    /// Text holding one of the encoding's special tokens (`<|endoftext|>`, ...)
    /// counts `ceil(UTF-16 length / 4)`, because js-tiktoken refuses it and
    /// LangChain falls back to that estimate. Runs of one character class
    /// longer than 16 KiB (no real text has them) are counted in 16 KiB
    /// chunks, which may differ from tiktoken by a token per chunk.
    pub fn count(self, text: &str) -> usize {
        #[cfg(feature = "tiktoken")]
        if let Some((bpe, pieces)) = self.encoder()
            && !self.has_special(text)
        {
            return count_encoded(bpe, pieces, text);
        }
        approximate(text)
    }

    /// Whether `text` holds one of the encoding's special tokens.
    #[cfg(feature = "tiktoken")]
    pub(super) fn has_special(self, text: &str) -> bool {
        let specials = match self {
            Tokenizer::Cl100kBase => CL100K_SPECIAL,
            Tokenizer::O200kBase => O200K_SPECIAL,
            Tokenizer::Approximate => return false,
        };
        // Every special token starts with `<|`: skip the search for most texts.
        text.contains("<|") && specials.iter().any(|s| text.contains(s))
    }

    /// The BPE and the piece splitter, built once per process.
    #[cfg(feature = "tiktoken")]
    pub(super) fn encoder(self) -> Option<(&'static tiktoken_rs::CoreBPE, &'static regex::Regex)> {
        static CL100K: OnceLock<Option<regex::Regex>> = OnceLock::new();
        static O200K: OnceLock<Option<regex::Regex>> = OnceLock::new();
        // The patterns are constants; a build failure would mean a broken
        // `regex` crate, and then the estimate is better than a panic.
        let build = |p: &str| regex::Regex::new(p).ok();
        match self {
            Tokenizer::Cl100kBase => CL100K
                .get_or_init(|| build(CL100K_PIECES))
                .as_ref()
                .map(|re| (tiktoken_rs::cl100k_base_singleton(), re)),
            Tokenizer::O200kBase => O200K
                .get_or_init(|| build(O200K_PIECES))
                .as_ref()
                .map(|re| (tiktoken_rs::o200k_base_singleton(), re)),
            Tokenizer::Approximate => None,
        }
    }
}

/// LangChain's estimate: `Math.ceil(text.length / 4)`, `length` in UTF-16 units.
pub(super) fn approximate(text: &str) -> usize {
    utf16_len(text).div_ceil(4)
}

pub(super) fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

#[cfg(feature = "tiktoken")]
/// Counts with tiktoken-rs, split so that every call is safe and agrees with
/// js-tiktoken.
///
/// tiktoken-rs runs a newer form of the split pattern whose `\s++$` joins
/// trailing whitespace into one piece where js-tiktoken makes two, and its
/// `fancy-regex` can overflow on huge pieces. So the text is split here with
/// js-tiktoken's pattern; tiktoken-rs gets stretches that end in a piece with
/// non-whitespace (where both patterns agree), each trailing whitespace piece
/// on its own, and long pieces in chunks.
pub(super) fn count_encoded(bpe: &tiktoken_rs::CoreBPE, re: &regex::Regex, text: &str) -> usize {
    let count = |s: &str| {
        if s.is_empty() {
            0
        } else {
            bpe.encode_ordinary(s).len()
        }
    };
    let mut total = 0;
    // Current stretch: text[start..safe_end] plus whitespace-only pieces after it.
    let mut start = 0;
    let mut safe_end = 0;
    let mut tail: Vec<(usize, usize)> = Vec::new();
    let flush = |start: usize, safe_end: usize, tail: &[(usize, usize)]| {
        count(&text[start..safe_end]) + tail.iter().map(|&(s, e)| count(&text[s..e])).sum::<usize>()
    };
    for (s, e) in Pieces::new(re, text) {
        let piece = &text[s..e];
        if piece.len() > LONG_PIECE {
            total += flush(start, safe_end, &tail);
            total += chunks(piece, LONG_PIECE).map(count).sum::<usize>();
            tail.clear();
            start = e;
            safe_end = e;
        } else if piece.chars().all(char::is_whitespace) {
            tail.push((s, e));
        } else {
            tail.clear();
            safe_end = e;
        }
    }
    total + flush(start, safe_end, &tail)
}

#[cfg(feature = "tiktoken")]
/// `text` in pieces of at most `size` bytes, cut at character boundaries.
pub(super) fn chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            // `size` is smaller than one character: take the character.
            cut = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

#[cfg(feature = "tiktoken")]
/// The pre-tokenizer's pieces of a text, as byte ranges.
pub(super) struct Pieces<'a> {
    re: &'a regex::Regex,
    text: &'a str,
    pos: usize,
}

#[cfg(feature = "tiktoken")]
impl<'a> Pieces<'a> {
    pub(super) fn new(re: &'a regex::Regex, text: &'a str) -> Self {
        Pieces { re, text, pos: 0 }
    }
}

#[cfg(feature = "tiktoken")]
impl Iterator for Pieces<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let (text, start) = (self.text, self.pos);
        if start >= text.len() {
            return None;
        }
        // Every character matches some branch, so the match starts here; if
        // not, the gap is taken as a piece rather than lost.
        let mut end = match self.re.find_at(text, start) {
            Some(m) if m.start() == start => m.end(),
            Some(m) => m.start(),
            None => text.len(),
        };
        if end == start {
            // The patterns cannot match empty text; should one, step over a
            // character instead of looping forever.
            end = start + text[start..].chars().next().map_or(1, char::len_utf8);
        }
        let piece = &text[start..end];
        // `\s+(?!\S)`: a whitespace run (no line break, else `\s*[\r\n]+`
        // took it) followed by more text leaves its last character to the
        // next piece, as the look-ahead does.
        if end < text.len()
            && !piece.contains(['\r', '\n'])
            && piece.chars().all(char::is_whitespace)
            && let Some((last, _)) = piece.char_indices().last().filter(|&(i, _)| i > 0)
        {
            end = start + last;
        }
        self.pos = end;
        Some((start, end))
    }
}

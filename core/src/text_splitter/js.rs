//! The JavaScript string semantics LangChain's splitters depend on: lengths
//! in UTF-16 code units, `trim()`'s whitespace, and `indexOf` / `slice`
//! positions in code units.

/// `text.length` in JavaScript: UTF-16 code units. A character takes two
/// units when its UTF-8 form starts with a byte of `0xF0` or more (four
/// bytes), else one; continuation bytes count for nothing.
pub(super) fn len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// `text.trim()` in JavaScript.
pub(super) fn trim(text: &str) -> &str {
    crate::from_ai::js::js_trim(text)
}

/// A position in a text, in bytes and in UTF-16 code units.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pos {
    pub(super) byte: usize,
    pub(super) unit: usize,
}

/// Byte and code-unit positions of one text, found by walking from the
/// last position asked for (callers ask for positions close together, so
/// the walks add up to about one pass over the text).
pub(super) struct Positions<'a> {
    text: &'a str,
    at: Pos,
    units: Option<usize>,
}

impl<'a> Positions<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Positions {
            text,
            at: Pos::default(),
            units: None,
        }
    }

    /// The text's length in code units.
    pub(super) fn units(&mut self) -> usize {
        *self.units.get_or_insert_with(|| len(self.text))
    }

    /// The byte position of code unit `unit`, rounded up to a character
    /// boundary (a unit inside a surrogate pair is the pair's end).
    pub(super) fn byte_of(&mut self, unit: usize) -> usize {
        let text = self.text;
        while self.at.unit > unit {
            let c = text[..self.at.byte]
                .chars()
                .next_back()
                .expect("a position past the start has a character before it");
            self.at.byte -= c.len_utf8();
            self.at.unit -= c.len_utf16();
        }
        for c in text[self.at.byte..].chars() {
            if self.at.unit >= unit {
                break;
            }
            self.at.byte += c.len_utf8();
            self.at.unit += c.len_utf16();
        }
        self.at.byte
    }

    /// The code-unit position of byte `byte` (a character boundary).
    pub(super) fn unit_of(&mut self, byte: usize) -> usize {
        let at = self.at;
        let unit = if byte >= at.byte {
            at.unit + len(&self.text[at.byte..byte])
        } else {
            at.unit - len(&self.text[byte..at.byte])
        };
        self.at = Pos { byte, unit };
        unit
    }

    /// `text.indexOf(needle, from)`: the code-unit position of the first
    /// `needle` at or after code unit `from`, or -1.
    pub(super) fn index_of(&mut self, needle: &str, from: i64) -> i64 {
        let from = usize::try_from(from.max(0)).unwrap_or(0);
        if from > self.units() {
            return if needle.is_empty() {
                self.units() as i64
            } else {
                -1
            };
        }
        let start = self.byte_of(from);
        match self.text[start..].find(needle) {
            Some(offset) => self.unit_of(start + offset) as i64,
            None => -1,
        }
    }

    /// How many `\n` `text.slice(from, to)` holds (JavaScript's `slice`:
    /// a negative position counts from the end; an empty range when `from`
    /// is not before `to`).
    pub(super) fn newlines_in_slice(&mut self, from: i64, to: i64) -> usize {
        let units = self.units() as i64;
        let clamp = |p: i64| {
            if p < 0 {
                (units + p).max(0)
            } else {
                p.min(units)
            }
        };
        let (from, to) = (clamp(from), clamp(to));
        if from >= to {
            return 0;
        }
        let a = self.byte_of(from as usize);
        let b = self.byte_of(to as usize);
        newlines(&self.text[a..b])
    }
}

/// How many `\n` `text` holds.
pub(super) fn newlines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_utf16_code_units() {
        assert_eq!(len("abc"), 3);
        assert_eq!(len("é"), 1);
        assert_eq!(len("€"), 1);
        assert_eq!(len("😀"), 2);
        assert_eq!(len("a😀b"), 4);
    }

    #[test]
    fn trim_follows_javascript() {
        assert_eq!(trim("\u{FEFF} a \u{3000}\n"), "a");
        assert_eq!(trim("\u{0085}a"), "\u{0085}a");
    }

    #[test]
    fn positions_convert_between_bytes_and_units() {
        let text = "a😀b\nc😀\nd";
        let mut p = Positions::new(text);
        assert_eq!(p.units(), 10);
        assert_eq!(p.index_of("b", 0), 3);
        assert_eq!(p.index_of("c", 4), 5);
        assert_eq!(p.index_of("a", 1), -1);
        assert_eq!(p.index_of("a", 0), 0);
        assert_eq!(p.newlines_in_slice(0, 10), 2);
        assert_eq!(p.newlines_in_slice(0, -1), 2);
        assert_eq!(p.newlines_in_slice(-1, 3), 0);
        assert_eq!(p.newlines_in_slice(5, 9), 1);
    }
}

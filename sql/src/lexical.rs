//! Checks on SQL text before it is parsed, shared by the filter tool and
//! the execute tool's statement checker: size and characters, then the
//! tokens no checked SQL needs, and parser errors as tool errors.

use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use super::response::{Reason, ToolError};
use super::schema::Dialect;
use super::writer::clip;
use nodekit_core::error::shorten;

/// Size cap and character check applied before any parsing: at most `max`
/// characters, and no NUL or other control characters except tab, newline
/// and carriage return. `what` names the argument in the message.
pub(super) fn check_text(text: &str, max: usize, what: &str) -> Result<(), ToolError> {
    // Bytes bound characters from above: skip counting huge inputs.
    if text.len() > max * 4 || text.chars().count() > max {
        return Err(ToolError::malformed(
            Reason::TooLong,
            format!("{what} is too long: at most {max} characters"),
        ));
    }
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(ToolError::malformed(
            Reason::ControlCharacter,
            format!("{what} contains a NUL or control character"),
        ));
    }
    Ok(())
}

/// Tokenizes `text` in `dialect` and refuses the tokens no checked SQL
/// needs: comments (which hide text from reviewers and change meaning across
/// dialects), placeholders (values are bound by us), dollar-quoted, escape,
/// national, unicode, hex, byte, raw and triple-quoted strings (each has its
/// own escaping rules, the classic way to break quoting), and `;` unless
/// `allow_semicolon`. `what` names the input in messages ("filters").
pub(super) fn tokenize_checked(
    dialect: Dialect,
    text: &str,
    what: &str,
    allow_semicolon: bool,
) -> Result<Vec<Token>, ToolError> {
    let tokens = match dialect {
        Dialect::Postgres => Tokenizer::new(&PostgreSqlDialect {}, text).tokenize(),
        Dialect::Sqlite => Tokenizer::new(&SQLiteDialect {}, text).tokenize(),
    }
    .map_err(|e| {
        ToolError::syntax(format!("could not read the SQL: {}", clip(&e.message)))
            .suggest("Check the quotes: strings use 'single quotes' ('' inside), names use \"double quotes\".")
    })?;
    for t in &tokens {
        let refused = match t {
            Token::Whitespace(Whitespace::SingleLineComment { .. })
            | Token::Whitespace(Whitespace::MultiLineComment(_)) => "comments",
            Token::Placeholder(_) | Token::Question => "placeholders",
            Token::DollarQuotedString(_) => "dollar-quoted strings",
            Token::EscapedStringLiteral(_) => "escape strings (E'...')",
            Token::NationalStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_) => "national and quote-delimited strings",
            Token::UnicodeStringLiteral(_) => "unicode escape strings (U&'...')",
            Token::HexStringLiteral(_) => "hex literals (X'...', 0x...)",
            Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_) => "byte and bit strings",
            Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DoubleQuotedString(_) => "raw and triple-quoted strings",
            Token::SemiColon if !allow_semicolon => "`;`",
            _ => continue,
        };
        return Err(
            ToolError::denied(format!("{refused} are not allowed in {what}")).suggest(
                "Use plain 'single-quoted' strings and numbers; no comments, placeholders or `;`.",
            ),
        );
    }
    Ok(tokens)
}

/// A parser error as a tool error: a syntax error with a short message, or
/// invalid input when nesting is too deep.
pub(super) fn parser_error(e: ParserError) -> ToolError {
    match e {
        ParserError::RecursionLimitExceeded => {
            ToolError::malformed(Reason::TooComplex, "the SQL is nested too deeply")
        }
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => {
            // Parser messages quote the offending token, which is model input.
            ToolError::syntax(format!("syntax error: {}", shorten(&m, 120)))
        }
    }
}

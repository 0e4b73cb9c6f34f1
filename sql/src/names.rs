//! The tool arguments that name things: the column list and the order-by of
//! the select tool, table names before lookup, and the table lists of the
//! workflow settings.
//!
//! A name is never written into SQL as the model spelled it: it is looked up
//! in the live schema ([`Table::column`]) and the catalog's spelling is
//! quoted by the writer. So these parsers only have to split the text
//! reliably; anything that is not exactly a column's name fails the lookup.

use super::lexical::check_text;
use super::response::{ErrorType, Reason, ToolError};
use super::schema::{Column, Table};
use super::writer::clip;

/// Longest column list or order-by accepted, in characters.
pub const MAX_NAMES_CHARS: usize = 1024;
/// Most names in a column list or order-by.
pub const MAX_NAMES: usize = 256;
/// Longest identifier accepted by [`check_identifier`], in characters.
pub const MAX_IDENTIFIER_CHARS: usize = 128;

/// One item of a comma-separated list: a name, quoted or bare, and the
/// words after a quoted name (order-by directions).
struct Item {
    /// The name, with `""` inside quotes unescaped.
    name: String,
    /// Whether it was written in double quotes.
    quoted: bool,
    /// Whitespace-separated words after the name. For a bare item these are
    /// all its words (the caller decides which are the name).
    words: Vec<String>,
}

/// Splits `text` at top-level commas. A double-quoted part may contain
/// commas, spaces and `""` (an escaped quote). A bare part is everything up
/// to the next comma, trimmed.
fn split_items(text: &str, what: &str) -> Result<Vec<Item>, ToolError> {
    let mut items = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let item = if chars.peek() == Some(&'"') {
            chars.next();
            let mut name = String::new();
            loop {
                match chars.next() {
                    None => {
                        return Err(ToolError::malformed(
                            Reason::Malformed,
                            format!("unterminated double quote in {what}"),
                        ));
                    }
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        name.push('"');
                    }
                    Some('"') => break,
                    Some(c) => name.push(c),
                }
            }
            let mut rest = String::new();
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                rest.push(c);
                chars.next();
            }
            Item {
                name,
                quoted: true,
                words: rest.split_whitespace().map(str::to_owned).collect(),
            }
        } else {
            let mut raw = String::new();
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                raw.push(c);
                chars.next();
            }
            let raw = raw.trim().to_owned();
            Item {
                words: raw.split_whitespace().map(str::to_owned).collect(),
                name: raw,
                quoted: false,
            }
        };
        if !item.quoted && item.name.is_empty() {
            return Err(ToolError::malformed(
                Reason::Empty,
                format!("empty name in {what}: check the commas"),
            ));
        }
        items.push(item);
        if items.len() > MAX_NAMES {
            return Err(ToolError::malformed(
                Reason::TooComplex,
                format!("too many names in {what}: at most {MAX_NAMES}"),
            ));
        }
        // Both branches above stop only at a comma or at the end.
        if chars.next().is_none() {
            return Ok(items);
        }
    }
}

fn unknown_column(table: &Table, name: &str) -> ToolError {
    ToolError::new(
        ErrorType::InvalidColumn,
        format!(
            "column `{}` does not exist in table `{}`",
            clip(name),
            clip(&table.name)
        ),
    )
    .suggest(format!("Available columns: {}", table.column_list()))
}

fn lookup<'t>(table: &'t Table, name: &str) -> Result<&'t Column, ToolError> {
    table
        .column(name)
        .ok_or_else(|| unknown_column(table, name))
}

/// The columns named by the select tool's `columns` argument: empty or `*`
/// for all of them in catalog order; otherwise comma-separated names, each
/// optionally double-quoted (`""` inside quotes is a quote), whitespace
/// around them trimmed.
///
/// Errors: [`ErrorType::SyntaxError`] for more than 1024 characters, more
/// than 256 names, control characters, empty items, duplicates or text after
/// a quoted name; [`ErrorType::InvalidColumn`] (suggesting the table's
/// columns) for any name that is not exactly a column — which is what
/// `count(*)`, `id--` or `(select password from users)` are.
pub fn parse_columns<'t>(table: &'t Table, text: &str) -> Result<Vec<&'t Column>, ToolError> {
    check_text(text, MAX_NAMES_CHARS, "the column list")?;
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "*" {
        return Ok(table.columns.iter().collect());
    }
    let mut out: Vec<&Column> = Vec::new();
    for item in split_items(text, "the column list")? {
        if item.quoted && !item.words.is_empty() {
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!(
                    "unexpected `{}` after column \"{}\"",
                    clip(&item.words.join(" ")),
                    clip(&item.name)
                ),
            ));
        }
        let column = lookup(table, &item.name)?;
        if out.iter().any(|c| c.name == column.name) {
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!("column `{}` is listed twice", clip(&column.name)),
            ));
        }
        out.push(column);
    }
    Ok(out)
}

/// One key of the select tool's order-by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderBy<'t> {
    /// The column to sort by.
    pub column: &'t Column,
    /// Whether the order is descending (`DESC`).
    pub descending: bool,
}

/// The select tool's `order_by` argument: `name DESC, id`,
/// `"Full Name" asc`. Empty text gives no keys. `ASC`/`DESC` are
/// case-insensitive and optional (ascending by default).
///
/// `NULLS FIRST` / `NULLS LAST` are refused ([`ErrorType::SyntaxError`]):
/// the databases' defaults differ, and the key has nowhere to carry it.
/// Unknown columns (including positions such as `2`) are
/// [`ErrorType::InvalidColumn`]; a column listed twice, anything after the
/// direction, and the size limits of [`parse_columns`] are
/// [`ErrorType::SyntaxError`].
pub fn parse_order_by<'t>(table: &'t Table, text: &str) -> Result<Vec<OrderBy<'t>>, ToolError> {
    check_text(text, MAX_NAMES_CHARS, "the order-by")?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out: Vec<OrderBy<'t>> = Vec::new();
    for item in split_items(text, "the order-by")? {
        // For a bare item, the name is every word but a trailing direction
        // (so an unquoted `Full Name DESC` still finds "Full Name").
        let (name, words) = if item.quoted {
            (item.name, item.words)
        } else {
            let mut words = item.words;
            let direction = words
                .last()
                .filter(|w| is_direction(w) && words.len() > 1)
                .cloned();
            if direction.is_some() {
                words.pop();
            }
            if words.len() > 1 && words.iter().any(|w| w.eq_ignore_ascii_case("nulls")) {
                return Err(nulls_refused());
            }
            (words.join(" "), direction.into_iter().collect())
        };
        let descending = match words.len() {
            0 => false,
            1 if is_direction(&words[0]) => words[0].eq_ignore_ascii_case("desc"),
            _ => {
                if words.iter().any(|w| w.eq_ignore_ascii_case("nulls")) {
                    return Err(nulls_refused());
                }
                return Err(ToolError::malformed(
                    Reason::Malformed,
                    format!(
                        "unexpected `{}` in the order-by; write `column [ASC|DESC], ...`",
                        clip(&words.join(" "))
                    ),
                ));
            }
        };
        let column = lookup(table, &name)?;
        if out.iter().any(|o| o.column.name == column.name) {
            return Err(ToolError::malformed(
                Reason::Malformed,
                format!("column `{}` is in the order-by twice", clip(&column.name)),
            ));
        }
        out.push(OrderBy { column, descending });
    }
    Ok(out)
}

fn is_direction(word: &str) -> bool {
    word.eq_ignore_ascii_case("asc") || word.eq_ignore_ascii_case("desc")
}

fn nulls_refused() -> ToolError {
    ToolError::malformed(
        Reason::Malformed,
        "NULLS FIRST / NULLS LAST is not supported in the order-by",
    )
    .suggest("Write `column ASC` or `column DESC`.")
}

/// The checks applied to a name (a table's, usually) before it is looked up
/// in the catalog: not empty or blank, at most 128 characters, no NUL or
/// other control characters. `kind` names it in the message ("table").
/// Errors are [`ErrorType::SyntaxError`]; whether the name exists is the
/// lookup's business.
pub fn check_identifier(kind: &str, name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() {
        return Err(ToolError::malformed(
            Reason::Empty,
            format!("the {kind} name is empty"),
        ));
    }
    if name.len() > MAX_IDENTIFIER_CHARS * 4 || name.chars().count() > MAX_IDENTIFIER_CHARS {
        return Err(ToolError::malformed(
            Reason::TooLong,
            format!("the {kind} name is too long: at most {MAX_IDENTIFIER_CHARS} characters"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ToolError::malformed(
            Reason::ControlCharacter,
            format!("the {kind} name contains a NUL or control character"),
        ));
    }
    Ok(())
}

/// The table names of a workflow setting (allowed or denied tables),
/// written the way an author might: separated by commas, semicolons or
/// line breaks, quoted (`"orders"`, `` `orders` ``, `[orders]`) or
/// schema-qualified (`public.orders`). Each entry becomes the bare table
/// name, so a deny list never fails open on how a name was written;
/// empty entries and duplicates are dropped.
pub fn parse_table_list(text: &str) -> Vec<String> {
    let unquote = |s: &str| {
        let s = s.trim();
        for (open, close) in [('"', '"'), ('`', '`'), ('[', ']'), ('\'', '\'')] {
            if let Some(inner) = s.strip_prefix(open).and_then(|s| s.strip_suffix(close)) {
                return inner.to_owned();
            }
        }
        s.to_owned()
    };
    let mut out: Vec<String> = Vec::new();
    for entry in text.split([',', ';', '\n']) {
        // The table is the last dot-separated part (outside quotes, since
        // table names with dots are rare and the quoted form keeps them).
        let entry = entry.trim();
        let name = if entry.starts_with(['"', '`', '[']) && !entry.contains("\".\"") {
            unquote(entry)
        } else {
            unquote(entry.rsplit('.').next().unwrap_or(entry))
        };
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests;

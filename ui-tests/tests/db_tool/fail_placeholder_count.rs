use nodekit::prelude::*;

/// One field too many.
#[db_tool(query = "SELECT id, name FROM users WHERE email = $1 AND status = $2")]
pub struct TooManyFields {
    /// E-mail.
    email: String,
    /// Status.
    status: String,
    /// Not in the query.
    extra: u32,
}

/// One placeholder too many.
#[db_tool(query = "SELECT id FROM users WHERE email = $1 AND status = $2")]
pub struct TooFewFields {
    /// E-mail.
    email: String,
}

/// Placeholders, but nothing to bind.
#[db_tool(query = "SELECT id FROM users WHERE email = $1")]
pub struct NoFields;

fn main() {}

use nodekit::prelude::*;

/// A `?` placeholder.
#[db_tool(query = "SELECT id FROM users WHERE email = ?")]
pub struct Question {
    /// E-mail.
    email: String,
}

/// A named placeholder.
#[db_tool(query = "SELECT id FROM users WHERE email = $email")]
pub struct Named {
    /// E-mail.
    email: String,
}

fn main() {}

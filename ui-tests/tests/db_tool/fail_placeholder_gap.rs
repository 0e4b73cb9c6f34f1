use nodekit::prelude::*;

/// A gap in the numbering.
#[db_tool(query = "SELECT * FROM users WHERE email = $1 AND status = $3")]
pub struct Gap {
    /// E-mail.
    email: String,
    /// Status.
    status: String,
}

fn main() {}

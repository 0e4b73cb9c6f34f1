use nodekit::prelude::*;

/// Not SQL.
#[db_tool(query = "SELEC id FROM users WHERE email = $1")]
pub struct Typo {
    /// E-mail.
    email: String,
}

fn main() {}

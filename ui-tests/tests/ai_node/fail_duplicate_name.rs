use nodekit::prelude::*;

/// Sends mail.
#[ai_node]
pub struct Mail {
    /// Recipient.
    to_address: String,
    /// Also the recipient?
    #[param(name = "toAddress")]
    recipient: String,
}

fn main() {}

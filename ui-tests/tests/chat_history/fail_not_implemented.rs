use nodekit::prelude::*;

/// Declared, but the trait is never implemented.
#[chat_history(namespace = ["example", "memory", "nothing"])]
pub struct Forgotten {
    session_id: String,
}

fn main() {}

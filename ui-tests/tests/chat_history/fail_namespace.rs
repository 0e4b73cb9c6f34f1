use nodekit::prelude::*;

#[chat_history]
pub struct NoNamespace;

#[chat_history(namespace = [])]
pub struct EmptyNamespace;

#[chat_history(namespace = ["ok", "not ok"], namspace = ["x"])]
pub struct BadPart;

fn main() {}

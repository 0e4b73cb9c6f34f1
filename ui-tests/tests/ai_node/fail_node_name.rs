use nodekit::prelude::*;

/// Has a bad name.
#[ai_node(name = "my-node", credentials = ["my api"])]
pub struct MyNode {}

fn main() {}

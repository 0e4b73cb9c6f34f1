use nodekit::prelude::*;

/// `main_input` on a memory node.
#[ai_node(output = memory, main_input)]
pub struct MemoryWithInput {}

/// `main_input` on a main node, which has one already.
#[ai_node(main_input)]
pub struct MainWithInput {}

/// A credential both required and optional.
#[ai_node(output = tool, credentials = ["postgres"], optional_credentials = ["postgres", "bad-name"])]
pub struct Twice {}

fn main() {}

//! The built-in node types, one module each.

pub mod lm_chat_openai_compatible;
pub mod memory_buffer_window;

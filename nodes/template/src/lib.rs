//! {{name}}'s nodes. Each `#[ai_node]` registers itself in the catalog of
//! the program that links this crate.
use nodekit::prelude::*;
use nodekit::serde_json::{Value, json};

/// Count the words of a text.
#[ai_node(name = "wordCountTool", display_name = "Word Count", output = tool)]
pub struct WordCountTool {
    /// The text whose words are counted.
    #[from_ai]
    pub text: String,
    /// How many of the most frequent words to list, 0 to 20.
    #[from_ai(default = 3)]
    #[param(min = 0, max = 20)]
    pub top: u32,
}

impl ToolNode for WordCountTool {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<Value> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for word in self.text.split_whitespace().map(str::to_lowercase) {
            match counts.iter_mut().find(|(w, _)| *w == word) {
                Some((_, n)) => *n += 1,
                None => counts.push((word, 1)),
            }
        }
        let words: usize = counts.iter().map(|(_, n)| n).sum();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        counts.truncate(self.top as usize);
        Ok(json!({"words": words, "top": counts}))
    }
}

/// Keeps this crate's nodes in a program that links it: call it from
/// `main` (the linker drops registrations nothing names).
pub fn link() {}

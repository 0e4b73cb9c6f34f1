use nodekit::prelude::*;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Model {
    #[serde(rename = "small")]
    Small,
    #[serde(rename = "large")]
    Large,
}

/// Answers.
#[ai_node]
pub struct Answer {
    /// Which model.
    #[param(default = "small")]
    model: Model,
}

fn main() {}

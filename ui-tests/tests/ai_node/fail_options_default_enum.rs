use nodekit::prelude::*;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Model {
    Small,
    Large,
}

/// Answers.
#[ai_node]
pub struct Answer {
    /// Which model.
    #[param(default = Model::Huge)]
    model: Model,
}

fn main() {}

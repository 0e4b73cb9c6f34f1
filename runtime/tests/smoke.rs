use nodekit::prelude::*;
use serde::{Deserialize, Serialize};

/// Which model answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Model {
    /// The big one.
    #[serde(rename = "gpt-4o")]
    #[schemars(title = "GPT-4o")]
    Gpt4o,
    /// The small one.
    #[serde(rename = "gpt-4o-mini")]
    #[schemars(title = "GPT-4o mini")]
    Gpt4oMini,
}

/// Extra settings.
#[derive(Debug, NodeParams)]
pub struct Extra {
    /// Sampling temperature.
    #[param(default = 0.7, min = 0, max = 2)]
    temperature: f64,
    /// Stop words.
    stop: Option<Vec<String>>,
}

/// Looks things up.
#[ai_node(name = "lookup", output = tool, version = [1, 1.1], credentials = ["lookupApi"])]
#[derive(Debug)]
pub struct Lookup {
    /// What to search for.
    #[from_ai]
    query: String,
    /// Max results.
    #[from_ai(default = 5)]
    #[param(min = 1, max = 50)]
    limit: u32,
    /// Mode.
    #[param(options = ["simple", "advanced"], default = "simple")]
    mode: String,
    /// Model.
    #[param(default = Model::Gpt4o, display_options(show(mode = ["advanced"], "@version" = [1.1])))]
    model: Model,
    /// Extra.
    #[param(collection, placeholder = "Add Option")]
    extra: Extra,
    /// Filter JSON.
    filter: Option<serde_json::Value>,
}

#[test]
fn smoke() {
    println!(
        "{}",
        serde_json::to_string_pretty(Lookup::description()).unwrap()
    );
    let n = Lookup::from_params(&serde_json::json!({"query": "x", "limit": 3, "mode": "advanced", "model": "gpt-4o-mini", "extra": {"temperature": 1}}), "Lookup").unwrap();
    assert_eq!(n.model, Model::Gpt4oMini);
    println!("{:?}", n.extra);
    let e = Lookup::from_params(&serde_json::json!({"query": "x", "limit": "ten"}), "Lookup")
        .unwrap_err();
    println!("{e}");
    let e = Lookup::from_params(
        &serde_json::json!({"query": "x", "limit": 3, "model": "gpt5"}),
        "Lookup",
    )
    .unwrap_err();
    println!("{e}");
    let e = Lookup::from_params(&serde_json::json!({"limit": 3}), "Lookup").unwrap_err();
    println!("{e}");
    for e in nodekit::Catalog::global().entries() {
        println!("{}", e.full_name());
    }
}

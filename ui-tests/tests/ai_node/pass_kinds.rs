//! Every kind of node, with the inputs, outputs and codex n8n expects.
use nodekit::prelude::*;
use serde_json::json;

/// A chat model.
#[ai_node(output = chat_model)]
pub struct Model {}

/// A memory.
#[ai_node(output = memory)]
pub struct Memory {}

/// A tool.
#[ai_node(output = tool)]
pub struct Tool {}

/// A tool that takes optional context on its main input and may use a credential.
#[ai_node(output = tool, main_input, credentials = ["httpBasicAuth"], optional_credentials = ["postgres", "sqlite"])]
pub struct ContextTool {}

/// Embeddings.
#[ai_node(output = embeddings)]
pub struct Embeddings {}

/// A vector store.
#[ai_node(output = vector_store)]
pub struct Store {}

/// A document loader.
#[ai_node(output = document_loader)]
pub struct Loader {}

/// A text splitter.
#[ai_node(output = text_splitter)]
pub struct Splitter {}

/// An agent.
#[ai_node(output = agent)]
pub struct Agent {}

/// A plain node.
#[ai_node]
pub struct Plain;

#[ai_node(description = "Described by the attribute.")]
pub struct Described {
    /// The doc comment loses to the attribute.
    #[param(description = "From the attribute.", required, default = "x")]
    text: String,
    /// A map read from JSON text.
    #[param(json, default = "{\"k\": 1}")]
    counts: std::collections::BTreeMap<String, u32>,
}

/// The implicit version 1 may be named as the default.
#[ai_node(default_version = 1)]
pub struct DefaultOne;

fn main() {
    let d = |desc: &NodeDescription| serde_json::to_value(desc).unwrap();
    assert_eq!(
        d(Model::description())["outputs"],
        json!(["ai_languageModel"])
    );
    assert_eq!(
        d(Model::description())["codex"]["subcategories"]["AI"],
        json!(["Language Models", "Root Nodes"])
    );
    assert_eq!(d(Memory::description())["outputNames"], json!(["Memory"]));
    assert_eq!(d(Tool::description())["outputs"], json!(["ai_tool"]));
    assert_eq!(d(Tool::description())["inputs"], json!([]));
    assert_eq!(d(ContextTool::description())["inputs"], json!(["main"]));
    assert_eq!(d(ContextTool::description())["outputs"], json!(["ai_tool"]));
    assert_eq!(
        d(ContextTool::description())["credentials"],
        json!([
            {"name": "httpBasicAuth", "required": true},
            {"name": "postgres", "required": false},
            {"name": "sqlite", "required": false},
        ])
    );
    assert_eq!(
        d(Embeddings::description())["outputs"],
        json!(["ai_embedding"])
    );
    // A vector store's connections follow its `mode`, as n8n's do.
    let store = d(Store::description());
    for (key, parts) in [
        ("inputs", ["ai_embedding", "ai_document", "main"]),
        ("outputs", ["ai_vectorStore", "ai_tool", "main"]),
    ] {
        let expression = store[key].as_str().unwrap();
        assert!(
            expression.starts_with("={{") && expression.contains("parameters?.mode"),
            "{expression}"
        );
        assert!(parts.iter().all(|p| expression.contains(p)), "{expression}");
    }
    assert_eq!(
        store["codex"]["subcategories"]["AI"],
        json!(["Vector Stores", "Tools", "Root Nodes"])
    );
    let loader = d(Loader::description());
    assert_eq!(loader["outputs"], json!(["ai_document"]));
    assert!(
        loader["inputs"]
            .as_str()
            .unwrap()
            .contains("ai_textSplitter")
    );
    assert_eq!(
        d(Splitter::description())["outputs"],
        json!(["ai_textSplitter"])
    );
    assert_eq!(
        d(Splitter::description())["outputNames"],
        json!(["Text Splitter"])
    );
    // n8n's expression: a second model input when `needsFallback` is on.
    let agent_inputs = d(Agent::description())["inputs"].clone();
    let agent_inputs = agent_inputs.as_str().unwrap();
    for part in [
        "'main'",
        "ai_languageModel",
        "needsFallback",
        "ai_memory",
        "ai_tool",
    ] {
        assert!(agent_inputs.contains(part), "{part} in {agent_inputs}");
    }
    assert_eq!(d(Plain::description())["name"], "plain");
    assert_eq!(d(Plain::description())["displayName"], "Plain");
    assert_eq!(d(Plain::description()).get("codex"), None);
    assert_eq!(d(DefaultOne::description())["defaultVersion"], 1);
    let described = d(Described::description());
    assert_eq!(described["description"], "Described by the attribute.");
    assert_eq!(
        described["properties"][0]["description"],
        "From the attribute."
    );
    assert_eq!(described["properties"][0]["required"], true);
    assert_eq!(described["properties"][1]["type"], "json");
    assert_eq!(described["properties"][1]["default"], "{\"k\": 1}");
    let node = Described::from_params(&json!({}), "n").unwrap();
    assert_eq!((node.text.as_str(), node.counts.get("k")), ("x", Some(&1)));
    assert_eq!(Catalog::global().entries().len(), 12);
}

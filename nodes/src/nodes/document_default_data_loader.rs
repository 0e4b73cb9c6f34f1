//! n8n's "Default Data Loader": documents from the workflow's items, split
//! into chunks.
//!
//! JSON mode makes a document of every string in the item's JSON (or in
//! the parts the JSON Pointers option names), in order; numbers and
//! booleans are left out, as LangChain's JSON loader leaves them out. One
//! difference from n8n, on purpose: n8n's loader, with no pointers, emits a
//! string nested `n` levels deep `n` times; nodekit emits each string once.
//!
//! Metadata: `source` (`blob`), `blobType` (`application/json`, or
//! `text/plain` for text), `line` (the string's number, when there are
//! several), the splitter's `loc.lines`, then the "Metadata" option's
//! fields, which win.

use std::sync::Arc;

use nodekit::document::{Document, DocumentLoader};
use nodekit::model::BoxFuture;
use nodekit::prelude::*;
use nodekit::serde::{Deserialize, Serialize};
use nodekit::serde_json::{Map, Value};
use nodekit::text_splitter::{RecursiveCharacterTextSplitter, TextSplitter, split_documents};
use nodekit::vector_store::node::MetadataValue;

/// Where the documents come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(crate = "nodekit::serde")]
#[schemars(crate = "nodekit::schemars")]
pub enum JsonMode {
    /// Use all JSON data that flows into the parent agent or chain
    #[serde(rename = "allInputData")]
    #[schemars(title = "Load All Input Data")]
    AllInputData,
    /// Load a subset of data, and/or data from any previous step in the workflow
    #[serde(rename = "expressionData")]
    #[schemars(title = "Load Specific Data")]
    ExpressionData,
}

/// How documents are split into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(crate = "nodekit::serde")]
#[schemars(crate = "nodekit::schemars")]
pub enum TextSplittingMode {
    /// Splits every 1000 characters with a 200 character overlap
    #[serde(rename = "simple")]
    #[schemars(title = "Simple")]
    Simple,
    /// Connect a custom text-splitting sub-node
    #[serde(rename = "custom")]
    #[schemars(title = "Custom")]
    Custom,
}

/// The data to load: text (one document), or JSON whose strings become documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(crate = "nodekit::serde", transparent)]
#[schemars(crate = "nodekit::schemars", transparent)]
pub struct LoaderData(pub Value);

/// The loader's options.
#[derive(NodeParams, Debug, Clone, PartialEq, Default)]
pub struct LoaderOptions {
    /// Pointers to extract from JSON, e.g. "/text" or "/text, /meta/title"
    #[param(display_name = "JSON Pointers", default = "")]
    pub pointers: String,
    /// Metadata to add to each document. Could be used for filtering during retrieval
    #[param(
        display_name = "Metadata",
        fixed_collection = "metadataValues",
        placeholder = "Add property"
    )]
    pub metadata: Vec<MetadataValue>,
}

/// Load data from previous step in the workflow
#[ai_node(
    name = "documentDefaultDataLoader",
    display_name = "Default Data Loader",
    output = document_loader,
    icon = "file:binary.svg",
    notice = "This will load data from a previous step in the workflow."
)]
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentDefaultDataLoader {
    /// Which data becomes documents.
    #[param(display_name = "Mode", default = JsonMode::AllInputData, required)]
    pub json_mode: JsonMode,
    /// Drag and drop fields from the input pane, or use an expression
    #[param(
        display_name = "Data",
        kind = "string",
        rows = 6,
        required,
        display_options(show(json_mode = [JsonMode::ExpressionData]))
    )]
    pub json_data: Option<LoaderData>,
    /// How documents are split into chunks.
    #[param(
        display_name = "Text Splitting",
        default = TextSplittingMode::Simple,
        required,
        no_data_expression
    )]
    pub text_splitting_mode: TextSplittingMode,
    /// Options.
    #[param(collection, placeholder = "Add Option")]
    pub options: LoaderOptions,
}

/// The loader a Default Data Loader node supplies.
#[derive(Debug)]
struct JsonItemLoader {
    node: DocumentDefaultDataLoader,
    name: String,
    splitter: Arc<dyn TextSplitter>,
}

/// Every string of `value`, in order (object values in their order).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

impl JsonItemLoader {
    fn documents(&self, item: &Value) -> nodekit::Result<Vec<Document>> {
        let (data, blob_type) = match self.node.json_mode {
            JsonMode::AllInputData => (item.clone(), "application/json"),
            JsonMode::ExpressionData => match &self.node.json_data {
                Some(LoaderData(Value::String(text))) => {
                    (Value::String(text.clone()), "text/plain")
                }
                Some(LoaderData(v @ (Value::Object(_) | Value::Array(_)))) => {
                    (v.clone(), "application/json")
                }
                Some(LoaderData(Value::Null)) | None => {
                    return Err(nodekit::Error::NodeFailed {
                        node: self.name.clone(),
                        message: "\"Data\" is empty: give the text or JSON to load".into(),
                    });
                }
                Some(LoaderData(other)) => (Value::String(other.to_string()), "text/plain"),
            },
        };
        let mut texts = Vec::new();
        if blob_type == "text/plain" {
            if let Value::String(s) = data {
                texts.push(s);
            }
        } else {
            let pointers: Vec<&str> = self
                .node
                .options
                .pointers
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .collect();
            if pointers.is_empty() {
                strings(&data, &mut texts);
            } else {
                for p in pointers {
                    if let Some(v) = data.pointer(p) {
                        strings(v, &mut texts);
                    }
                }
            }
        }
        let several = texts.len() > 1;
        let documents: Vec<Document> = texts
            .into_iter()
            .enumerate()
            .map(|(i, text)| {
                let mut d = Document::new(text)
                    .with("source", "blob")
                    .with("blobType", blob_type);
                if several {
                    d = d.with("line", i + 1);
                }
                d
            })
            .collect();
        let mut chunks = split_documents(&*self.splitter, &documents);
        let extra: Map<String, Value> = self
            .node
            .options
            .metadata
            .iter()
            .filter(|m| !m.name.is_empty())
            .map(|m| (m.name.clone(), Value::String(m.value.clone())))
            .collect();
        for chunk in &mut chunks {
            chunk.metadata.extend(extra.clone());
        }
        Ok(chunks)
    }
}

impl DocumentLoader for JsonItemLoader {
    fn load<'a>(&'a self, item: &'a Value) -> BoxFuture<'a, nodekit::Result<Vec<Document>>> {
        Box::pin(async move { self.documents(item) })
    }
}

impl SupplyData for DocumentDefaultDataLoader {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let no_splitter = || nodekit::Error::MissingInput {
            node: ctx.node_name().to_owned(),
            input: "a text splitter (ai_textSplitter), or \"Text Splitting\" set to \"Simple\""
                .into(),
        };
        let splitter: Arc<dyn TextSplitter> = match self.text_splitting_mode {
            TextSplittingMode::Simple => Arc::new(RecursiveCharacterTextSplitter::new(1000, 200)?),
            TextSplittingMode::Custom => ctx.connected_text_splitter().ok_or_else(no_splitter)?,
        };
        let loader: Arc<dyn DocumentLoader> = Arc::new(JsonItemLoader {
            name: ctx.node_name().to_owned(),
            node: self,
            splitter,
        });
        Ok(loader.into())
    }
}

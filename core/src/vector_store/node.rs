//! n8n's vector store node, for any store: the operation modes and their
//! parameters as a group to flatten into a node, and what each mode does.
//!
//! ```
//! use std::sync::Arc;
//! use nodekit::prelude::*;
//! use nodekit::serde_json::Value;
//! use nodekit::vector_store::node::VectorStoreModes;
//! use nodekit::vector_store::{Filter, InProcessVectorStore};
//!
//! /// Documents in a store of my own.
//! #[ai_node(name = "vectorStoreMine", output = vector_store, package = "docs")]
//! pub struct MyVectorStore {
//!     /// n8n's modes.
//!     #[param(flatten)]
//!     pub modes: VectorStoreModes,
//!     /// Which store.
//!     #[param(default = "default")]
//!     pub key: String,
//! }
//!
//! impl SupplyData for MyVectorStore {
//!     async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
//!         self.modes.supply(ctx, Arc::new(InProcessVectorStore::named(&self.key)), Filter::all())
//!     }
//! }
//!
//! impl Execute for MyVectorStore {
//!     async fn execute(self, ctx: &ExecuteContext) -> nodekit::Result<Vec<Value>> {
//!         let store = Arc::new(InProcessVectorStore::named(&self.key));
//!         self.modes.execute(ctx, store, Filter::all()).await
//!     }
//! }
//! # let d = MyVectorStore::description();
//! # assert!(d.properties.iter().any(|p| p.name == "mode"));
//! ```
//!
//! | mode (`mode`) | n8n's name | runs as | does |
//! | --- | --- | --- | --- |
//! | `load` | Get Many | root node | searches with `prompt` for each item; outputs `{document: {pageContent, metadata}, score}` per document found |
//! | `insert` | Insert Documents | root node | loads each item's documents through the connected loader, adds them all (`embeddingBatchSize` per embedder call); outputs `{metadata, pageContent}` per document |
//! | `retrieve` | Retrieve Documents (As Vector Store for Chain/Tool) | sub-node | supplies the store (`ai_vectorStore`) |
//! | `retrieve-as-tool` | Retrieve Documents (As Tool for AI Agent) | sub-node | supplies a tool named after the node; the model sends `{"input": query}` and gets the `topK` documents as `[{"type": "text", "text": "<document JSON>"}]` |

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{DocumentStore, Filter, Found, VectorStore, VectorStoreOptions};
use crate::error::{Error, Result};
use crate::node::{ExecuteContext, Supply, SupplyContext};
use crate::tool::{Tool, ToolDefinition};

/// n8n's operation modes of a vector store node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Mode {
    /// Get many ranked documents from vector store for query
    #[serde(rename = "load")]
    #[schemars(title = "Get Many")]
    Load,
    /// Insert documents into vector store
    #[serde(rename = "insert")]
    #[schemars(title = "Insert Documents")]
    Insert,
    /// Retrieve documents from vector store to be used as vector store with AI nodes
    #[serde(rename = "retrieve")]
    #[schemars(title = "Retrieve Documents (As Vector Store for Chain/Tool)")]
    Retrieve,
    /// Retrieve documents from vector store to be used as tool with AI nodes
    #[serde(rename = "retrieve-as-tool")]
    #[schemars(title = "Retrieve Documents (As Tool for AI Agent)")]
    RetrieveAsTool,
}

/// The parameters every vector store node shares (n8n's), to flatten into
/// a node with `#[param(flatten)]`.
#[derive(crate::NodeParams, Debug, Clone, PartialEq)]
pub struct VectorStoreModes {
    /// What the node does.
    #[param(display_name = "Operation Mode", default = Mode::Retrieve, no_data_expression)]
    pub mode: Mode,
    /// Explain to the LLM what this tool does, a good, specific description would allow LLMs to produce expected results much more often
    #[param(
        display_name = "Description",
        rows = 2,
        required,
        display_options(show(mode = [Mode::RetrieveAsTool]))
    )]
    pub tool_description: Option<String>,
    /// Number of documents to embed in a single batch
    #[param(
        display_name = "Embedding Batch Size",
        default = 200,
        min = 1,
        display_options(show(mode = [Mode::Insert]))
    )]
    pub embedding_batch_size: u32,
    /// Search prompt to retrieve matching documents from the vector store using similarity-based ranking
    #[param(display_name = "Prompt", required, display_options(show(mode = [Mode::Load])))]
    pub prompt: Option<String>,
    /// Number of top results to fetch from vector store
    #[param(
        display_name = "Limit",
        name = "topK",
        default = 4,
        min = 1,
        display_options(show(mode = [Mode::Load, Mode::RetrieveAsTool]))
    )]
    pub top_k: u32,
    /// Whether or not to include document metadata
    #[param(
        display_name = "Include Metadata",
        default = true,
        display_options(show(mode = [Mode::Load, Mode::RetrieveAsTool]))
    )]
    pub include_document_metadata: bool,
}

/// One condition of n8n's "Metadata Filter": the metadata key `name` must
/// have the value `value`.
#[derive(crate::NodeParams, Debug, Clone, PartialEq)]
pub struct MetadataValue {
    /// The metadata key.
    #[param(display_name = "Name", required)]
    pub name: String,
    /// The value it must have.
    #[param(display_name = "Value", default = "")]
    pub value: String,
}

/// The filter n8n's "Metadata Filter" entries make: every name equal to
/// its value (a name given twice: the last value).
pub fn metadata_filter(values: &[MetadataValue]) -> Filter {
    let mut by_name: Vec<(&str, &str)> = Vec::new();
    for v in values.iter().filter(|v| !v.name.is_empty()) {
        match by_name.iter_mut().find(|(n, _)| *n == v.name) {
            Some(entry) => entry.1 = &v.value,
            None => by_name.push((&v.name, &v.value)),
        }
    }
    by_name
        .into_iter()
        .fold(Filter::all(), |f, (name, value)| f.eq(name, value))
}

fn failed(node: &str, message: impl Into<String>) -> Error {
    Error::NodeFailed {
        node: node.to_owned(),
        message: message.into(),
    }
}

/// A document as a `load` output item shows it.
fn found_item(found: &Found, metadata: bool) -> Value {
    let mut document = Map::new();
    document.insert(
        "pageContent".into(),
        found.document.page_content.clone().into(),
    );
    if metadata {
        document.insert(
            "metadata".into(),
            Value::Object(found.document.metadata.clone()),
        );
    }
    json!({"document": document, "score": found.score})
}

/// The text a tool answers for one document: its JSON, or its text alone.
fn tool_text(found: &Found, metadata: bool) -> Value {
    let text = if metadata {
        serde_json::to_string(&found.document)
    } else {
        serde_json::to_string(&json!({"pageContent": found.document.page_content}))
    }
    .unwrap_or_default();
    json!({"type": "text", "text": text})
}

impl VectorStoreModes {
    fn options(
        &self,
        store: Arc<dyn VectorStore>,
        embedder: Arc<dyn crate::embed::Embedder>,
        filter: Filter,
    ) -> VectorStoreOptions {
        VectorStoreOptions {
            filter,
            embedding_batch: self.embedding_batch_size.max(1) as usize,
            ..VectorStoreOptions::new(store, embedder)
        }
    }

    /// What the node supplies in the `retrieve` and `retrieve-as-tool`
    /// modes, searching `store` through the connected embeddings model
    /// with `filter` added to every search.
    pub fn supply(
        &self,
        ctx: &SupplyContext,
        store: Arc<dyn VectorStore>,
        filter: Filter,
    ) -> Result<Supply> {
        let documents =
            ctx.create_vector_store(self.options(store, ctx.connected_embedder()?, filter));
        match self.mode {
            Mode::Retrieve => Ok(Supply::VectorStore(documents)),
            Mode::RetrieveAsTool => {
                let description = self
                    .tool_description
                    .clone()
                    .filter(|d| !d.trim().is_empty())
                    .ok_or_else(|| {
                        failed(
                            ctx.node_name(),
                            "the tool needs a Description: tell the model what the documents hold",
                        )
                    })?;
                let tool = RetrieveTool {
                    definition: ToolDefinition {
                        name: crate::from_ai::tool_name(ctx.node_name()),
                        description,
                        parameters: json!({
                            "type": "object",
                            "properties": {"input": {"type": "string", "description": "Query to search for. Required"}},
                            "required": ["input"],
                            "additionalProperties": false,
                        }),
                    },
                    documents,
                    top_k: self.top_k.max(1) as usize,
                    metadata: self.include_document_metadata,
                };
                Ok(Supply::Tool(Arc::new(tool)))
            }
            Mode::Load | Mode::Insert => Err(failed(
                ctx.node_name(),
                "only the \"retrieve\" and \"retrieve-as-tool\" operation modes supply data; \
                 in \"load\" and \"insert\" the node runs on the items of its main input",
            )),
        }
    }

    /// What the node does as a root node: `insert`, `load`, or
    /// `retrieve-as-tool` run on items (the `input` field of each is the
    /// query, as n8n's agent sends tool calls).
    pub async fn execute(
        &self,
        ctx: &ExecuteContext,
        store: Arc<dyn VectorStore>,
        filter: Filter,
    ) -> Result<Vec<Value>> {
        let node = ctx.node_name();
        let documents =
            ctx.create_vector_store(self.options(store, ctx.connected_embedder()?, filter));
        match self.mode {
            Mode::Insert => {
                let loader = ctx.connected_document_loader()?;
                let mut all = Vec::new();
                let mut out = Vec::new();
                for item in ctx.items() {
                    for d in loader.load(item).await? {
                        out.push(json!({"metadata": d.metadata, "pageContent": d.page_content}));
                        all.push(d);
                    }
                }
                documents.add_documents(&all).await?;
                Ok(out)
            }
            Mode::Load => {
                let prompt = self
                    .prompt
                    .as_deref()
                    .filter(|p| !p.trim().is_empty())
                    .ok_or_else(|| {
                        failed(node, "the Prompt is empty: give the text to search for")
                    })?;
                let found = documents
                    .search(prompt, self.top_k.max(1) as usize, &Filter::all())
                    .await?;
                Ok(found
                    .iter()
                    .map(|f| found_item(f, self.include_document_metadata))
                    .collect())
            }
            Mode::RetrieveAsTool => {
                let mut out = Vec::new();
                for item in ctx.items() {
                    let query = item.get("input").and_then(Value::as_str).ok_or_else(|| {
                        failed(
                            node,
                            "input data must contain an \"input\" field with the search query",
                        )
                    })?;
                    let found = documents
                        .search(query, self.top_k.max(1) as usize, &Filter::all())
                        .await?;
                    let response: Vec<Value> = found
                        .iter()
                        .map(|f| tool_text(f, self.include_document_metadata))
                        .collect();
                    out.push(json!({"response": response}));
                }
                Ok(out)
            }
            Mode::Retrieve => Err(failed(
                node,
                "in \"retrieve\" mode the node supplies a vector store to another node; \
                 connect it to one, or pick \"load\", \"insert\" or \"retrieve-as-tool\"",
            )),
        }
    }
}

/// A vector store as an agent's tool.
#[derive(Debug)]
struct RetrieveTool {
    definition: ToolDefinition,
    documents: Arc<DocumentStore>,
    top_k: usize,
    metadata: bool,
}

impl Tool for RetrieveTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, args: Value) -> BoxFuture<'a, Result<Value>> {
        Box::pin(async move {
            let query = match &args {
                Value::String(s) => s.as_str(),
                other => other.get("input").and_then(Value::as_str).ok_or_else(|| {
                    super::store_error(format!(
                        "the tool `{}` needs {{\"input\": \"query text\"}}",
                        self.definition.name
                    ))
                })?,
            };
            let found = self
                .documents
                .search(query, self.top_k, &Filter::all())
                .await?;
            Ok(Value::Array(
                found.iter().map(|f| tool_text(f, self.metadata)).collect(),
            ))
        })
    }
}

//! Documents: a text with its metadata (LangChain's `Document`), what text
//! splitters cut, loaders make and vector stores hold.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::Result;

/// A text and its metadata, in LangChain's JSON form:
/// `{"pageContent": "...", "metadata": {...}}`, plus `"id"` when the
/// document has one (a vector store's id for it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// The text.
    pub page_content: String,
    /// Facts about the text (its source, its lines, anything the author
    /// adds); vector stores filter on them.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The id a vector store gave the document, when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Document {
    /// A document with no metadata.
    pub fn new(page_content: impl Into<String>) -> Document {
        Document {
            page_content: page_content.into(),
            ..Document::default()
        }
    }

    /// The same document with metadata `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Document {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// Makes documents from a workflow item (n8n's document loaders, which a
/// vector store's insert mode calls once per input item). Object-safe.
pub trait DocumentLoader: Send + Sync + std::fmt::Debug {
    /// The documents of `item` (its JSON), split into chunks if the loader
    /// has a text splitter.
    fn load<'a>(&'a self, item: &'a Value) -> BoxFuture<'a, Result<Vec<Document>>>;
}

//! n8n's text splitter nodes: LangChain's recursive and character
//! splitters, with n8n's parameters (separators are dropped from chunks).

use std::sync::Arc;

use nodekit::prelude::*;
use nodekit::serde::{Deserialize, Serialize};
use nodekit::text_splitter::{
    CharacterTextSplitter, DEFAULT_SEPARATORS, Language, RecursiveCharacterTextSplitter,
    TextSplitter,
};

/// The languages n8n's "Split Code" option offers (LangChain's, without Solidity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(crate = "nodekit::serde", rename_all = "lowercase")]
#[schemars(crate = "nodekit::schemars")]
#[allow(missing_docs)]
pub enum SplitCode {
    #[schemars(title = "cpp")]
    Cpp,
    #[schemars(title = "go")]
    Go,
    #[schemars(title = "java")]
    Java,
    #[schemars(title = "js")]
    Js,
    #[schemars(title = "php")]
    Php,
    #[schemars(title = "proto")]
    Proto,
    #[schemars(title = "python")]
    Python,
    #[schemars(title = "rst")]
    Rst,
    #[schemars(title = "ruby")]
    Ruby,
    #[schemars(title = "rust")]
    Rust,
    #[schemars(title = "scala")]
    Scala,
    #[schemars(title = "swift")]
    Swift,
    #[schemars(title = "markdown")]
    Markdown,
    #[schemars(title = "latex")]
    Latex,
    #[schemars(title = "html")]
    Html,
}

impl SplitCode {
    fn language(self) -> Language {
        // The variants are LangChain's language names, capitalised.
        Language::from_name(&format!("{self:?}").to_lowercase())
            .expect("every SplitCode is one of LangChain's languages")
    }
}

/// Options of the recursive splitter.
#[derive(NodeParams, Debug, Clone, PartialEq, Default)]
pub struct RecursiveOptions {
    /// Split at the structure of this language first (its separators).
    #[param(default = SplitCode::Markdown)]
    pub split_code: Option<SplitCode>,
}

fn refused(ctx: &SupplyContext, e: nodekit::Error) -> nodekit::Error {
    nodekit::Error::NodeFailed {
        node: ctx.node_name().to_owned(),
        message: e.to_string(),
    }
}

/// Split text into chunks by characters recursively, recommended for most use cases
#[ai_node(
    name = "textSplitterRecursiveCharacterTextSplitter",
    display_name = "Recursive Character Text Splitter",
    output = text_splitter,
    icon = "fa:grip-lines-vertical",
    notice = "This node must be connected to a document loader."
)]
#[derive(Debug, Clone, PartialEq)]
pub struct TextSplitterRecursiveCharacterTextSplitter {
    /// The most characters (UTF-16 code units, as JavaScript counts) a chunk holds.
    #[param(default = 1000, min = 1)]
    pub chunk_size: u32,
    /// How many characters of the previous chunk a chunk repeats, at most.
    #[param(default = 0, min = 0)]
    pub chunk_overlap: u32,
    /// Options.
    #[param(collection, placeholder = "Add Option")]
    pub options: RecursiveOptions,
}

impl SupplyData for TextSplitterRecursiveCharacterTextSplitter {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let mut splitter = RecursiveCharacterTextSplitter::new(
            self.chunk_size as usize,
            self.chunk_overlap as usize,
        )
        .map_err(|e| refused(ctx, e))?
        .separators(DEFAULT_SEPARATORS)
        .keep_separator(false);
        if let Some(code) = self.options.split_code {
            splitter = splitter.language(code.language());
        }
        let splitter: Arc<dyn TextSplitter> = Arc::new(splitter);
        Ok(splitter.into())
    }
}

/// Split text into chunks by characters
#[ai_node(
    name = "textSplitterCharacterTextSplitter",
    display_name = "Character Text Splitter",
    output = text_splitter,
    icon = "fa:grip-lines-vertical",
    notice = "This node must be connected to a document loader."
)]
#[derive(Debug, Clone, PartialEq)]
pub struct TextSplitterCharacterTextSplitter {
    /// Where chunks may be cut; empty: anywhere (between characters).
    #[param(default = "")]
    pub separator: String,
    /// Maximum number of characters per chunk
    #[param(default = 1000, min = 1)]
    pub chunk_size: u32,
    /// Number of characters shared between consecutive chunks to preserve context
    #[param(default = 0, min = 0)]
    pub chunk_overlap: u32,
}

impl SupplyData for TextSplitterCharacterTextSplitter {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let splitter = CharacterTextSplitter::new(
            self.separator.clone(),
            self.chunk_size as usize,
            self.chunk_overlap as usize,
        )
        .map_err(|e| refused(ctx, e))?;
        let splitter: Arc<dyn TextSplitter> = Arc::new(splitter);
        Ok(splitter.into())
    }
}

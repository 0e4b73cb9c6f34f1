//! nodekit's SQLite vector store: documents in a SQLite file (sqlite-vec's
//! vector format), by collection.

use std::sync::Arc;

use nodekit::prelude::*;
use nodekit::serde_json::Value;
use nodekit::vector_store::node::{MetadataValue, Mode, VectorStoreModes, metadata_filter};
use nodekit::vector_store::sqlite::SqliteVectorStore;

/// Options of the SQLite store's searches.
#[derive(NodeParams, Debug, Clone, PartialEq, Default)]
pub struct SqliteSearchOptions {
    /// Metadata to filter the document by
    #[param(
        display_name = "Metadata Filter",
        fixed_collection = "metadataValues",
        placeholder = "Add filter field"
    )]
    pub metadata: Vec<MetadataValue>,
}

/// Work with your documents in a SQLite file, without a server.
#[ai_node(
    name = "vectorStoreSqlite",
    display_name = "SQLite Vector Store",
    output = vector_store,
    credentials = ["sqlite"],
    icon = "fa:database"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct VectorStoreSqlite {
    /// n8n's operation modes.
    #[param(flatten)]
    pub modes: VectorStoreModes,
    /// The collection the documents are kept in; created on first insert.
    #[param(default = "n8n")]
    pub collection: String,
    /// Search options.
    #[param(
        collection,
        placeholder = "Add Option",
        display_options(show(mode = [Mode::Load, Mode::Retrieve, Mode::RetrieveAsTool]))
    )]
    pub options: SqliteSearchOptions,
}

impl VectorStoreSqlite {
    async fn store(
        &self,
        ctx_credentials: nodekit::Result<&Value>,
    ) -> nodekit::Result<Arc<SqliteVectorStore>> {
        let path = crate::credentials::sqlite_path(ctx_credentials?)?;
        Ok(Arc::new(
            SqliteVectorStore::open(path, &self.collection).await?,
        ))
    }
}

impl SupplyData for VectorStoreSqlite {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let store = self.store(ctx.credentials("sqlite")).await?;
        self.modes
            .supply(ctx, store, metadata_filter(&self.options.metadata))
    }
}

impl Execute for VectorStoreSqlite {
    async fn execute(self, ctx: &ExecuteContext) -> nodekit::Result<Vec<Value>> {
        let store = self.store(ctx.credentials("sqlite")).await?;
        let filter = metadata_filter(&self.options.metadata);
        self.modes.execute(ctx, store, filter).await
    }
}

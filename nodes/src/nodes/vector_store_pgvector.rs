//! n8n's "Postgres PGVector Store": documents in PostgreSQL with pgvector,
//! in n8n's table layout, so documents n8n inserted are found here and the
//! other way round.
//!
//! n8n's parameters have no place for nodekit's in-process index
//! (`PgVectorOptions::in_process_index`): the environment variable
//! [`IN_PROCESS_INDEX`] set to `true` turns it on for the stores with
//! cosine distance (n8n's default) of the process running the node.

use std::sync::Arc;

use nodekit::node::SharedPools;
use nodekit::prelude::*;
use nodekit::serde::{Deserialize, Serialize};
use nodekit::serde_json::Value;
use nodekit::vector_store::node::{MetadataValue, VectorStoreModes, metadata_filter};
use nodekit::vector_store::pgvector::{Columns, Distance, PgVectorOptions, PgVectorStore};

/// `true` (or `1`): the node's cosine-distance stores search through an
/// in-process graph of the table (kept for the life of the process, so
/// worth it in a long-lived one such as the n8n bridge).
pub const IN_PROCESS_INDEX: &str = "NODEKIT_PGVECTOR_IN_PROCESS_INDEX";

/// n8n's distance strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(crate = "nodekit::serde")]
#[schemars(crate = "nodekit::schemars")]
pub enum DistanceStrategy {
    /// Cosine distance.
    #[serde(rename = "cosine")]
    #[schemars(title = "Cosine")]
    Cosine,
    /// Negative inner product.
    #[serde(rename = "innerProduct")]
    #[schemars(title = "Inner Product")]
    InnerProduct,
    /// Euclidean distance.
    #[serde(rename = "euclidean")]
    #[schemars(title = "Euclidean")]
    Euclidean,
}

/// n8n's "Collection Settings".
#[derive(NodeParams, Debug, Clone, PartialEq)]
pub struct CollectionSettings {
    /// Whether documents are kept in a named collection.
    #[param(default = false)]
    pub use_collection: bool,
    /// The collection's name.
    #[param(default = "n8n", display_options(show(use_collection = [true])))]
    pub collection_name: String,
    /// The table collections are listed in.
    #[param(default = "n8n_vector_collections", display_options(show(use_collection = [true])))]
    pub collection_table_name: String,
}

/// n8n's "Column Name Settings".
#[derive(NodeParams, Debug, Clone, PartialEq)]
pub struct ColumnNames {
    /// The id column (`uuid`).
    #[param(display_name = "ID Column Name", default = "id")]
    pub id_column_name: String,
    /// The vector column.
    #[param(default = "embedding")]
    pub vector_column_name: String,
    /// The text column.
    #[param(default = "text")]
    pub content_column_name: String,
    /// The metadata column (`jsonb`).
    #[param(default = "metadata")]
    pub metadata_column_name: String,
}

/// n8n's PGVector options.
#[derive(NodeParams, Debug, Clone, PartialEq, Default)]
pub struct PgVectorNodeOptions {
    /// The method to calculate the distance between two vectors
    #[param(default = DistanceStrategy::Cosine)]
    pub distance_strategy: Option<DistanceStrategy>,
    /// Collection of vectors
    #[param(fixed_collection, placeholder = "Add Collection Settings")]
    pub collection: Vec<CollectionSettings>,
    /// The names of the columns in the PGVector table
    #[param(fixed_collection, placeholder = "Set Column Names")]
    pub column_names: Vec<ColumnNames>,
    /// Metadata to filter the document by
    #[param(
        display_name = "Metadata Filter",
        fixed_collection = "metadataValues",
        placeholder = "Add filter field"
    )]
    pub metadata: Vec<MetadataValue>,
}

/// Work with your data in Postgresql with the PGVector extension
#[ai_node(
    name = "vectorStorePGVector",
    display_name = "Postgres PGVector Store",
    output = vector_store,
    credentials = ["postgres"],
    icon = "file:postgres.svg"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct VectorStorePgVector {
    /// n8n's operation modes.
    #[param(flatten)]
    pub modes: VectorStoreModes,
    /// The table name to store the vectors in. If table does not exist, it will be created.
    #[param(default = "n8n_vectors")]
    pub table_name: String,
    /// Options.
    #[param(collection, placeholder = "Add Option")]
    pub options: PgVectorNodeOptions,
}

impl VectorStorePgVector {
    /// The store of this table and credential, opened (its tables checked)
    /// once for the owner of `pools` (the bridge's or the server's process,
    /// a run) on the pool it shares; its in-process graph is the process's.
    async fn store(
        &self,
        pools: &SharedPools,
        credential: &Value,
    ) -> nodekit::Result<Arc<PgVectorStore>> {
        let config = crate::credentials::postgres(credential)?;
        let columns = self
            .options
            .column_names
            .first()
            .map_or_else(Columns::default, |c| Columns {
                id: c.id_column_name.clone(),
                vector: c.vector_column_name.clone(),
                content: c.content_column_name.clone(),
                metadata: c.metadata_column_name.clone(),
            });
        let collection = self
            .options
            .collection
            .first()
            .filter(|c| c.use_collection)
            .map(|c| (c.collection_name.clone(), c.collection_table_name.clone()));
        let distance = match self.options.distance_strategy {
            None | Some(DistanceStrategy::Cosine) => Distance::Cosine,
            Some(DistanceStrategy::InnerProduct) => Distance::InnerProduct,
            Some(DistanceStrategy::Euclidean) => Distance::Euclidean,
        };
        let in_process_index = distance == Distance::Cosine
            && std::env::var(IN_PROCESS_INDEX).is_ok_and(|v| matches!(v.trim(), "true" | "1"));
        let options = PgVectorOptions {
            table: self.table_name.clone(),
            collection,
            columns,
            distance,
            in_process_index,
            ..PgVectorOptions::default()
        };
        let what = format!("PGVector store {options:?}");
        pools
            .made_once((config.clone(), what), || async {
                let pg = PgVectorStore::shared_postgres(pools, &config)?;
                PgVectorStore::open(&pg, options).await
            })
            .await
    }
}

impl SupplyData for VectorStorePgVector {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let store = self
            .store(ctx.pools(), ctx.credentials("postgres")?)
            .await?;
        self.modes
            .supply(ctx, store, metadata_filter(&self.options.metadata))
    }
}

impl Execute for VectorStorePgVector {
    async fn execute(self, ctx: &ExecuteContext) -> nodekit::Result<Vec<Value>> {
        let store = self
            .store(ctx.pools(), ctx.credentials("postgres")?)
            .await?;
        let filter = metadata_filter(&self.options.metadata);
        self.modes.execute(ctx, store, filter).await
    }
}

//! Vector stores: documents kept with their embeddings and found again by
//! meaning (the AI Node SDK's `createVectorStore`, LangChain's
//! `VectorStore`).
//!
//! Two layers, as chat histories and memory are two:
//!
//! - a [`VectorStore`] keeps documents and their vectors: add, search by a
//!   vector (with a metadata [`Filter`]), delete by id or filter. The trait
//!   is object-safe; declare your own store with
//!   `#[vector_store(namespace = [...])]`, which registers it as
//!   `#[chat_history]` registers a history;
//! - a [`DocumentStore`] pairs a store with the [`Embedder`] that fills it
//!   and works in text: add documents, search with a query. Nodes make one
//!   through their context ([`SupplyContext::create_vector_store`](crate::node::SupplyContext::create_vector_store)),
//!   so every call is in the run log.
//!
//! nodekit's stores:
//!
//! | store | where | scores | search |
//! | --- | --- | --- | --- |
//! | [`InProcessVectorStore`] | this process, by key (n8n's Simple Vector Store) | cosine similarity, highest first | in memory: exact up to 4,096 documents, then an HNSW graph |
//! | `nodekit::vector_store::sqlite::SqliteVectorStore` (feature `vector-store-sqlite`) | a SQLite file, by collection; vectors in sqlite-vec's format | cosine similarity, highest first | the collection held in memory as above once loaded; sqlite-vec's exact scan meanwhile, and for filtered searches |
//! | `nodekit::vector_store::pgvector::PgVectorStore` (feature `vector-store-postgres`) | PostgreSQL with pgvector, in n8n's PGVector table layout (`n8n_vectors`, collections optional) | distance (cosine by default), lowest first, as n8n shows it | pgvector's HNSW index, created when missing |
//!
//! Every store checks the length of the vectors it is given against the
//! vectors it holds: a different embedding model is an error, never a
//! silent mix.
//!
//! `#[vector_store(namespace = ["my_package", "vectors", "store"])]` on a
//! struct registers the type under that namespace
//! ([`vector_store_types`], [`find_vector_store_type`]), fails to compile,
//! with a note saying so, if the struct does not implement [`VectorStore`],
//! and writes a `Debug` that shows fields marked `#[secret]` (or named like
//! a password, token or key) as `***`.

mod filter;
mod in_process;
pub mod node;

pub use crate::error::VectorStoreError;
pub use filter::{Bind, Condition, Filter, OPERATORS, SqlDialect, SqlFilter};
pub use in_process::InProcessVectorStore;

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};

use crate::document::Document;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::run_log::LogScope;

/// A document and its vector, as [`VectorStore::add`] takes them. The
/// document's `id`, if set, is kept; a store gives one to a document
/// without.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The document.
    pub document: Document,
    /// Its embedding.
    pub vector: Vec<f32>,
}

/// A document a search found, and how close it is to the query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Found {
    /// The document, with its id.
    pub document: Document,
    /// Its score ([`VectorStore::scores`] says which way is closer).
    pub score: f64,
}

/// What a store's scores mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scores {
    /// Higher is closer (cosine similarity, up to 1).
    Similarity,
    /// Lower is closer (a distance, 0 for the same direction).
    Distance,
}

/// Which documents [`VectorStore::delete`] removes.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// The documents with these ids.
    Ids(Vec<String>),
    /// The documents the filter holds for (the empty filter: all).
    Filter(Filter),
}

/// Where documents and their vectors are kept. Object-safe.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared with `#[vector_store]` but does not implement `VectorStore`",
    label = "needs `impl nodekit::vector_store::VectorStore for {Self}`",
    note = "implement `dimensions`, `add`, `search` and `delete`"
)]
pub trait VectorStore: Send + Sync + std::fmt::Debug {
    /// Which way its scores point (default: similarity, higher is closer).
    fn scores(&self) -> Scores {
        Scores::Similarity
    }

    /// The length of the vectors it holds; `None` while it holds none.
    fn dimensions(&self) -> BoxFuture<'_, Result<Option<usize>>>;

    /// Adds documents with their vectors; returns their ids, in order.
    fn add<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, Result<Vec<String>>>;

    /// [`VectorStore::add`] for entries the store may keep as they are: a
    /// store that holds documents in memory overrides it to save a copy.
    /// [`DocumentStore`] adds through it.
    fn add_owned(&self, entries: Vec<Entry>) -> BoxFuture<'_, Result<Vec<String>>> {
        Box::pin(async move { self.add(&entries).await })
    }

    /// The `k` documents nearest `vector` that pass `filter`, nearest
    /// first; an error for a vector whose length is not the store's.
    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Found>>>;

    /// Removes the selected documents; returns how many.
    fn delete<'a>(&'a self, which: &'a Selection) -> BoxFuture<'a, Result<u64>>;

    /// The metadata keys its documents use (from a sample for large
    /// stores), so a filter on a key no document has can be named in an
    /// error; `None` when the store cannot tell.
    fn metadata_keys(&self) -> BoxFuture<'_, Result<Option<Vec<String>>>> {
        Box::pin(async { Ok(None) })
    }
}

/// How many documents [`DocumentStore`] embeds per call, by default (n8n's
/// "Embedding Batch Size").
pub const DEFAULT_EMBEDDING_BATCH: usize = 200;

/// How many documents [`DocumentStore::add_documents`] hands the store per
/// [`VectorStore::add_owned`] (fewer, larger writes: PostgreSQL takes a
/// thousand rows in one statement several times faster than in five).
pub const WRITE_BATCH: usize = 1_000;

/// How `ctx.create_vector_store(..)` makes a [`DocumentStore`] (the AI Node SDK's
/// `createVectorStore` options).
#[derive(Debug, Clone)]
pub struct VectorStoreOptions {
    /// Where the documents are.
    pub store: Arc<dyn VectorStore>,
    /// What turns texts into the store's vectors.
    pub embedder: Arc<dyn Embedder>,
    /// Added to every search (n8n's "Metadata Filter" in the retrieve modes).
    pub filter: Filter,
    /// Documents per embedder call.
    pub embedding_batch: usize,
}

impl VectorStoreOptions {
    /// `store` through `embedder`, no filter, [`DEFAULT_EMBEDDING_BATCH`] documents per call.
    pub fn new(store: Arc<dyn VectorStore>, embedder: Arc<dyn Embedder>) -> VectorStoreOptions {
        VectorStoreOptions {
            store,
            embedder,
            filter: Filter::all(),
            embedding_batch: DEFAULT_EMBEDDING_BATCH,
        }
    }
}

/// A vector store with the embedder that fills it: documents in, similar
/// documents out.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> nodekit::Result<()> {
/// use std::sync::Arc;
/// use nodekit::document::Document;
/// use nodekit::embed::Embedder;
/// use nodekit::model::BoxFuture;
/// use nodekit::vector_store::{DocumentStore, Filter, InProcessVectorStore};
///
/// /// A toy embedder: counts of the letters a, b and c.
/// #[derive(Debug)]
/// struct Letters;
/// impl Embedder for Letters {
///     fn name(&self) -> &str { "letters" }
///     fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
///         let count = |t: &str, c| t.matches(c).count() as f32;
///         Box::pin(async move { Ok(texts.iter().map(|t| vec![count(t, 'a'), count(t, 'b'), count(t, 'c')]).collect()) })
///     }
/// }
///
/// let store = DocumentStore::new(Arc::new(InProcessVectorStore::new()), Arc::new(Letters));
/// store.add_documents(&[Document::new("aaa").with("k", 1), Document::new("bbb").with("k", 2)]).await?;
/// let found = store.search("aab", 1, &Filter::all()).await?;
/// assert_eq!(found[0].document.page_content, "aaa");
/// assert!(store.search("aab", 1, &Filter::all().eq("k", 2)).await?[0].document.page_content == "bbb");
/// # Ok(())
/// # }
/// ```
pub struct DocumentStore {
    store: Arc<dyn VectorStore>,
    embedder: Arc<dyn Embedder>,
    batch: usize,
    filter: Filter,
    log: Option<LogScope>,
}

impl std::fmt::Debug for DocumentStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentStore")
            .field("store", &self.store)
            .field("embedder", &self.embedder.name())
            .field("batch", &self.batch)
            .finish_non_exhaustive()
    }
}

impl DocumentStore {
    /// `store` filled and searched through `embedder`, embedding
    /// [`DEFAULT_EMBEDDING_BATCH`] documents per call. Not logged: nodes
    /// make theirs with `ctx.create_vector_store(..)`.
    pub fn new(store: Arc<dyn VectorStore>, embedder: Arc<dyn Embedder>) -> DocumentStore {
        DocumentStore::from_options(VectorStoreOptions::new(store, embedder))
    }

    /// A store as `options` say (not logged).
    pub fn from_options(options: VectorStoreOptions) -> DocumentStore {
        DocumentStore {
            store: options.store,
            embedder: options.embedder,
            batch: options.embedding_batch.max(1),
            filter: options.filter,
            log: None,
        }
    }

    /// A handle on the same store and embedder whose calls are logged in `scope`.
    pub(crate) fn with_log(&self, scope: LogScope) -> DocumentStore {
        DocumentStore {
            store: self.store.clone(),
            embedder: self.embedder.clone(),
            batch: self.batch,
            filter: self.filter.clone(),
            log: Some(scope),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn VectorStore> {
        &self.store
    }

    /// The embedder.
    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    async fn logged_call<T: Send>(
        &self,
        action: &'static str,
        input: impl FnOnce() -> Value + Send,
        work: impl Future<Output = Result<T>> + Send,
        output: impl FnOnce(&T) -> Value + Send,
    ) -> Result<T> {
        match &self.log {
            Some(scope) => scope.call(action, input, work, output).await,
            None => work.await,
        }
    }

    /// Embeds and adds `documents`, returns their ids, in order. They are
    /// embedded in batches (`embedding_batch` per call) and written
    /// [`WRITE_BATCH`] at a time (or a batch, if larger), each write
    /// running while the documents of the next are embedded. A document
    /// without text, vectors of another length than the store's, or an
    /// embedder that answers with the wrong number of vectors is an error,
    /// and nothing of that write or the ones after it is added.
    pub async fn add_documents(&self, documents: &[Document]) -> Result<Vec<String>> {
        let work = async {
            if let Some(i) = documents
                .iter()
                .position(|d| d.page_content.trim().is_empty())
            {
                return Err(store_error(format!(
                    "document {} of {} has no text: a vector store keeps only documents with text",
                    i + 1,
                    documents.len()
                )));
            }
            let mut ids = Vec::with_capacity(documents.len());
            // The store checks the vectors' length against its own; the
            // embedder's vectors are checked against each other here.
            let mut dims = None;
            let mut writes = documents.chunks(WRITE_BATCH.max(self.batch));
            let Some(first) = writes.next() else {
                return Ok(ids);
            };
            let mut entries = self.embedded(first, &mut dims).await?;
            // Each write runs while the next documents are embedded (both
            // make progress whenever the other waits on its server).
            for next in writes {
                let (added, following) = futures::future::join(
                    self.store.add_owned(std::mem::take(&mut entries)),
                    self.embedded(next, &mut dims),
                )
                .await;
                ids.extend(self.named(added, dims).await?);
                entries = following?;
            }
            ids.extend(
                self.named(self.store.add_owned(entries).await, dims)
                    .await?,
            );
            Ok(ids)
        };
        self.logged_call(
            "addDocuments",
            || json!({"documents": documents.len()}),
            work,
            |ids| json!({"ids": ids}),
        )
        .await
    }

    /// A store's answer, or when it failed on vectors of the wrong length
    /// (`dims` long), the error that names the embedder.
    async fn named<T>(&self, answer: Result<T>, dims: Option<usize>) -> Result<T> {
        let Err(e) = answer else {
            return answer;
        };
        if let (Ok(Some(held)), Some(dims)) = (self.store.dimensions().await, dims) {
            let source = format!(
                "the embedder `{}`",
                crate::error::quoted(self.embedder.name())
            );
            check_dimensions(held, dims, &source)?;
        }
        Err(e)
    }

    /// `documents` with their vectors (embedded a batch per call),
    /// checked against `dims` (set by the first vectors when `None`).
    async fn embedded(
        &self,
        documents: &[Document],
        dims: &mut Option<usize>,
    ) -> Result<Vec<Entry>> {
        let source = format!(
            "the embedder `{}`",
            crate::error::quoted(self.embedder.name())
        );
        let mut entries = Vec::with_capacity(documents.len());
        for batch in documents.chunks(self.batch) {
            let texts: Vec<String> = batch.iter().map(|d| d.page_content.clone()).collect();
            let vectors = self.embedder.embed(&texts).await?;
            if vectors.len() != texts.len() {
                return Err(store_error(format!(
                    "{source} returned {} vectors for {} texts",
                    vectors.len(),
                    texts.len()
                )));
            }
            for v in &vectors {
                let expected = *dims.get_or_insert(v.len());
                check_dimensions(expected, v.len(), &source)?;
            }
            entries.extend(
                batch
                    .iter()
                    .cloned()
                    .zip(vectors)
                    .map(|(document, vector)| Entry { document, vector }),
            );
        }
        Ok(entries)
    }

    /// The `k` documents nearest `query` that pass `filter` (and the
    /// store's own filter), nearest first. When a filter finds nothing
    /// because no document has one of its keys, the error names the key
    /// and the keys there are.
    pub async fn search(&self, query: &str, k: usize, filter: &Filter) -> Result<Vec<Found>> {
        let filter = &self.filter.merged(filter);
        let work = async {
            if query.trim().is_empty() {
                return Err(store_error(
                    "the query is empty: give the text to search for",
                ));
            }
            let vector = self
                .embedder
                .embed(&[query.to_owned()])
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    store_error(format!(
                        "the embedder `{}` returned no vector for the query",
                        crate::error::quoted(self.embedder.name())
                    ))
                })?;
            // A failed search says whether the embedder is the store's
            // (a search that works costs no extra question).
            let found = self
                .named(
                    self.store.search(&vector, k, filter).await,
                    Some(vector.len()),
                )
                .await?;
            if found.is_empty() && !filter.is_empty() {
                self.check_filter_keys(filter).await?;
            }
            Ok(found)
        };
        // Built only when the run log keeps the entry: not on every search.
        let input = || json!({"query": query, "k": k, "filter": filter_json(filter)});
        self.logged_call(
            "similaritySearch",
            input,
            work,
            |found| json!({"response": found}),
        )
        .await
    }

    /// Removes the selected documents; returns how many.
    pub async fn delete(&self, which: &Selection) -> Result<u64> {
        let input = || match which {
            Selection::Ids(ids) => json!({"ids": ids}),
            Selection::Filter(f) => json!({"filter": filter_json(f)}),
        };
        self.logged_call(
            "delete",
            input,
            self.store.delete(which),
            |n| json!({"deleted": n}),
        )
        .await
    }

    async fn check_filter_keys(&self, filter: &Filter) -> Result<()> {
        let Some(keys) = self.store.metadata_keys().await? else {
            return Ok(());
        };
        if keys.is_empty() {
            return Ok(());
        }
        for key in filter.keys() {
            if !keys.iter().any(|k| k == key) {
                let hint = nodekit_rules::closest(
                    key,
                    &keys.iter().map(String::as_str).collect::<Vec<_>>(),
                )
                .map_or(String::new(), |b| format!("; did you mean `{b}`?"));
                return Err(store_error(format!(
                    "the filter names the metadata key `{}`, which no document has{hint} (keys: {})",
                    crate::error::quoted(key),
                    keys.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// The filter as it appears in the run log.
fn filter_json(filter: &Filter) -> Value {
    if filter.is_empty() {
        return Value::Null;
    }
    Value::String(format!("{filter:?}"))
}

/// Documents past which a store held in memory is searched through a
/// graph (with the `ann` feature) rather than by an exact scan.
pub const EXACT_LIMIT: usize = 4_096;

/// A store's refusal of a request, or a failure of its index (a
/// [`VectorStoreError::Refused`]).
pub fn store_error(reason: impl Into<String>) -> Error {
    VectorStoreError::Refused {
        reason: reason.into(),
    }
    .into()
}

/// An error unless a `found`-long vector (from `source`, e.g. "a
/// vector") fits a store of `expected`-long ones.
pub fn check_dimensions(expected: usize, found: usize, source: &str) -> Result<()> {
    if expected == found {
        return Ok(());
    }
    Err(VectorStoreError::Dimensions {
        expected,
        found,
        what: source.to_owned(),
    }
    .into())
}

/// The entries a write stores, with their ids: of entries that share an
/// id only the last, which replaces the others as a later add would
/// (borrowed when every id is distinct, at once when the store made every
/// id itself).
pub fn last_of_each_id<'e, I: Eq + std::hash::Hash + Clone>(
    entries: &'e [Entry],
    ids: &'e [I],
) -> (std::borrow::Cow<'e, [Entry]>, std::borrow::Cow<'e, [I]>) {
    use std::borrow::Cow;
    if entries.iter().all(|e| e.document.id.is_none()) {
        return (Cow::Borrowed(entries), Cow::Borrowed(ids));
    }
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    let mut keep: Vec<bool> = ids.iter().rev().map(|id| seen.insert(id)).collect();
    if keep.iter().all(|k| *k) {
        return (Cow::Borrowed(entries), Cow::Borrowed(ids));
    }
    keep.reverse();
    let (entries, ids) = entries
        .iter()
        .zip(ids)
        .zip(keep)
        .filter(|(_, keep)| *keep)
        .map(|((e, id), _)| (e.clone(), id.clone()))
        .unzip();
    (Cow::Owned(entries), Cow::Owned(ids))
}

/// An error unless `vector` fits a store of `expected`-long vectors and
/// holds finite numbers only (a NaN would rank first in every search).
pub fn check_vector(expected: usize, vector: &[f32]) -> Result<()> {
    check_dimensions(expected, vector.len(), "a vector")?;
    if vector.iter().all(|x| x.is_finite()) {
        return Ok(());
    }
    Err(store_error(
        "a vector holds a number that is not finite (NaN or infinity): \
         check the embedding model's output",
    ))
}

/// A vector-store type declared with `#[vector_store(namespace = [...])]`.
pub trait VectorStoreNamespace {
    /// Where stores of this type are found again.
    const NAMESPACE: &'static [&'static str];
}

/// A registered vector-store type.
#[derive(Debug)]
pub struct VectorStoreRegistration {
    /// Its namespace, e.g. `["my_package", "vectors", "qdrant"]`.
    pub namespace: &'static [&'static str],
    /// The Rust type's name.
    pub type_name: &'static str,
}

inventory::collect!(VectorStoreRegistration);

/// Every vector-store type linked into this program, sorted by namespace.
pub fn vector_store_types() -> Vec<&'static VectorStoreRegistration> {
    let mut all: Vec<_> = inventory::iter::<VectorStoreRegistration>
        .into_iter()
        .collect();
    all.sort_by_key(|r| r.namespace);
    all
}

/// The vector-store type registered under `namespace`, if any.
pub fn find_vector_store_type(namespace: &[&str]) -> Option<&'static VectorStoreRegistration> {
    inventory::iter::<VectorStoreRegistration>
        .into_iter()
        .find(|r| r.namespace == namespace)
}

//! Documents in this process's memory: n8n's Simple Vector Store.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use super::{EXACT_LIMIT, Entry, Filter, Found, Selection, VectorStore, check_vector, store_error};
use crate::error::Result;
use nodekit_vector_index::{Breadth, Index, absorb_later, dot, normalise, normalised};

/// Documents kept in this process's memory, searched by cosine
/// similarity (scores: similarity, highest first, ties in insertion
/// order, as LangChain's `MemoryVectorStore`).
///
/// [`InProcessVectorStore::new`] makes a private store;
/// [`InProcessVectorStore::named`] the store of a key, shared by every
/// caller in the process, as n8n's Simple Vector Store shares its memory
/// keys between workflows. Named stores are bounded as n8n bounds them:
/// past `N8N_VECTOR_STORE_MAX_MEMORY` megabytes (default: no limit) the
/// oldest stores are dropped before a write, and a store not used for
/// `N8N_VECTOR_STORE_TTL_HOURS` hours (default: never) is dropped.
///
/// Searches without a filter go through an index (exact up to 4,096
/// documents, then an HNSW graph with the `ann` feature) whose candidates
/// are scored exactly; filtered searches scan the documents that pass.
#[derive(Debug, Clone, Default)]
pub struct InProcessVectorStore {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    docs: RwLock<Docs>,
    /// Created with the first vectors, at their length.
    index: RwLock<Option<Arc<Index>>>,
    /// One writer at a time (the index takes one batch at a time).
    writing: Mutex<()>,
    used: Mutex<Option<Instant>>,
}

#[derive(Debug, Default)]
struct Docs {
    by_key: BTreeMap<i64, Held>,
    by_id: HashMap<String, i64>,
    next_key: i64,
    dims: Option<usize>,
    bytes: usize,
}

#[derive(Debug)]
struct Held {
    document: crate::document::Document,
    /// Scaled to length 1.
    vector: Vec<f32>,
    /// What it takes, by n8n's estimate.
    bytes: usize,
}

impl Held {
    fn new(document: crate::document::Document, vector: Vec<f32>) -> Held {
        // n8n's estimate: text and metadata as UTF-16, the vector, 200
        // bytes of overhead. The metadata's JSON is counted, not kept.
        let mut json = Counted(0);
        let _ = serde_json::to_writer(&mut json, &document.metadata);
        let bytes = (document.page_content.len() + json.0) * 2 + vector.len() * 4 + 200;
        Held {
            document,
            vector,
            bytes,
        }
    }
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn poisoned(e: impl std::fmt::Display) -> crate::error::Error {
    store_error(format!("an in-process store's lock was poisoned: {e}"))
}

impl InProcessVectorStore {
    /// An empty store of its own.
    pub fn new() -> InProcessVectorStore {
        InProcessVectorStore::default()
    }

    /// The store named `key`, shared by every caller in this process
    /// (created empty on first use). Under n8n's queue mode, the first call
    /// warns that the store is not shared between n8n's processes
    /// ([`crate::process_local`]).
    pub fn named(key: &str) -> InProcessVectorStore {
        crate::process_local::warn_if_not_shared(
            "an in-process vector store (Simple Vector Store)",
        );
        let mut all = registry();
        all.sweep();
        let store = all
            .stores
            .entry(key.to_owned())
            .or_insert_with(|| (InProcessVectorStore::new(), Instant::now()))
            .0
            .clone();
        store.touch();
        store
    }

    /// The keys of the named stores, sorted.
    pub fn keys() -> Vec<String> {
        let mut all = registry();
        all.sweep();
        let mut keys: Vec<String> = all.stores.keys().cloned().collect();
        keys.sort();
        keys
    }

    /// Forgets the named store `key` (its handles keep their documents).
    pub fn drop_named(key: &str) {
        registry().stores.remove(key);
    }

    /// How many documents it holds.
    pub fn len(&self) -> usize {
        self.shared.docs.read().map_or(0, |d| d.by_key.len())
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes its documents take, by n8n's estimate.
    pub fn bytes(&self) -> usize {
        self.shared.docs.read().map_or(0, |d| d.bytes)
    }

    /// Whether documents still wait to go into the search graph (searches
    /// scan them exactly meanwhile; a background thread moves them in).
    pub fn indexing(&self) -> bool {
        self.shared
            .index
            .read()
            .ok()
            .and_then(|i| i.as_ref().map(|i| i.pending() > 0))
            .unwrap_or(false)
    }

    /// Removes every document.
    pub fn clear(&self) {
        let _writing = self.shared.writing.lock();
        if let Ok(mut docs) = self.shared.docs.write() {
            *docs = Docs::default();
        }
        if let Ok(mut index) = self.shared.index.write() {
            *index = None;
        }
    }

    fn touch(&self) {
        if let Ok(mut used) = self.shared.used.lock() {
            *used = Some(Instant::now());
        }
    }

    fn last_used(&self) -> Option<Instant> {
        self.shared.used.lock().ok().and_then(|u| *u)
    }

    /// Adds `entries`, keeping their documents and vectors (scaled to
    /// length 1 in place).
    fn add_now(&self, entries: Vec<Entry>) -> Result<Vec<String>> {
        self.touch();
        let _writing = self.shared.writing.lock().map_err(poisoned)?;
        // Keys follow the last one given (one writer at a time). A given id
        // replaces its document: that one leaves the index first, the maps
        // change under the write lock, and the new vectors join the index
        // last, so a search meanwhile misses them for a moment but does not
        // find a key whose document is gone.
        let (mut expected, first, replaced) = {
            let docs = self.shared.docs.read().map_err(poisoned)?;
            let replaced: Vec<i64> = entries
                .iter()
                .filter_map(|e| docs.by_id.get(e.document.id.as_ref()?).copied())
                .collect();
            (docs.dims, docs.next_key, replaced)
        };
        for e in &entries {
            let d = *expected.get_or_insert(e.vector.len());
            check_vector(d, &e.vector)?;
        }
        let Some(dims) = expected else {
            return Ok(Vec::new());
        };
        // Ids: the document's, else a new one.
        let held: Vec<(String, Held)> = entries
            .into_iter()
            .map(
                |Entry {
                     mut document,
                     mut vector,
                 }| {
                    let id = document
                        .id
                        .get_or_insert_with(|| uuid::Uuid::new_v4().to_string())
                        .clone();
                    normalise(&mut vector);
                    (id, Held::new(document, vector))
                },
            )
            .collect();
        let index = {
            let mut index = self.shared.index.write().map_err(poisoned)?;
            index
                .get_or_insert_with(|| Arc::new(Index::new(dims, Breadth::DOCUMENTS)))
                .clone()
        };
        index.remove(&replaced).map_err(|e| store_error(e.0))?;
        let mut ids = Vec::with_capacity(held.len());
        {
            let mut docs = self.shared.docs.write().map_err(poisoned)?;
            docs.dims = Some(dims);
            for (key, (id, held)) in (first..).zip(held) {
                // The document under its id (one of this batch too) goes.
                if let Some(old) = docs.by_id.remove(&id)
                    && let Some(held) = docs.by_key.remove(&old)
                {
                    docs.bytes = docs.bytes.saturating_sub(held.bytes);
                }
                docs.bytes += held.bytes;
                docs.by_key.insert(key, held);
                docs.by_id.insert(id.clone(), key);
                docs.next_key = key + 1;
                ids.push(id);
            }
        }
        // Read-locked while the index copies the vectors: only writers,
        // one at a time already, wait for that.
        {
            let docs = self.shared.docs.read().map_err(poisoned)?;
            let rows: Vec<(i64, &[f32])> = docs
                .by_key
                .range(first..)
                .map(|(k, h)| (*k, h.vector.as_slice()))
                .collect();
            index
                .add(&rows, EXACT_LIMIT)
                .map_err(|e| store_error(e.0))?;
        }
        absorb_later(&index);
        Ok(ids)
    }

    fn search_now(&self, vector: &[f32], k: usize, filter: &Filter) -> Result<Vec<Found>> {
        self.touch();
        // The index comes with the first vectors, at their length.
        let Some(index) = self.shared.index.read().map_err(poisoned)?.clone() else {
            return Ok(Vec::new());
        };
        check_vector(index.dims(), vector)?;
        if k == 0 {
            return Ok(Vec::new());
        }
        let query = normalised(vector);
        // The index is searched with the documents unlocked: a writer
        // waits only while the few keys found are scored.
        let found = if filter.is_empty() {
            Some(
                index
                    .search(&query, k, None)
                    .map_err(|e| store_error(e.0))?
                    .into_keys(),
            )
        } else {
            None
        };
        let docs = self.shared.docs.read().map_err(poisoned)?;
        let mut scored: Vec<(f32, i64)> = match found {
            Some(keys) => keys
                .into_iter()
                .filter_map(|key| docs.by_key.get(&key).map(|h| (dot(&query, &h.vector), key)))
                .collect(),
            None => docs
                .by_key
                .iter()
                .filter(|(_, h)| filter.matches(&h.document.metadata))
                .map(|(key, h)| (dot(&query, &h.vector), *key))
                .collect(),
        };
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(k);
        Ok(scored
            .into_iter()
            .map(|(score, key)| Found {
                document: docs.by_key[&key].document.clone(),
                score: f64::from(score),
            })
            .collect())
    }

    fn delete_now(&self, which: &Selection) -> Result<u64> {
        self.touch();
        let _writing = self.shared.writing.lock().map_err(poisoned)?;
        let keys: Vec<i64> = {
            let docs = self.shared.docs.read().map_err(poisoned)?;
            match which {
                Selection::Ids(ids) => ids
                    .iter()
                    .filter_map(|id| docs.by_id.get(id).copied())
                    .collect(),
                Selection::Filter(f) => docs
                    .by_key
                    .iter()
                    .filter(|(_, h)| f.matches(&h.document.metadata))
                    .map(|(k, _)| *k)
                    .collect(),
            }
        };
        // Out of the index before the documents go (as in `add_now`).
        if let Some(index) = self.shared.index.read().map_err(poisoned)?.clone() {
            index.remove(&keys).map_err(|e| store_error(e.0))?;
        }
        let mut docs = self.shared.docs.write().map_err(poisoned)?;
        for key in &keys {
            if let Some(held) = docs.by_key.remove(key) {
                docs.bytes = docs.bytes.saturating_sub(held.bytes);
                if let Some(id) = &held.document.id {
                    docs.by_id.remove(id);
                }
            }
        }
        Ok(keys.len() as u64)
    }

    fn keys_now(&self) -> Result<Vec<String>> {
        let docs = self.shared.docs.read().map_err(poisoned)?;
        let mut keys = BTreeSet::new();
        for held in docs.by_key.values().take(10_000) {
            keys.extend(held.document.metadata.keys().cloned());
        }
        Ok(keys.into_iter().collect())
    }
}

impl VectorStore for InProcessVectorStore {
    fn dimensions(&self) -> BoxFuture<'_, Result<Option<usize>>> {
        let dims = self.shared.docs.read().map_err(poisoned).map(|d| d.dims);
        Box::pin(async move { dims })
    }

    fn add<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, Result<Vec<String>>> {
        self.add_owned(entries.to_vec())
    }

    fn add_owned(&self, entries: Vec<Entry>) -> BoxFuture<'_, Result<Vec<String>>> {
        let bytes: usize = entries
            .iter()
            .map(|e| e.document.page_content.len() * 2 + e.vector.len() * 4 + 200)
            .sum();
        make_room(self, bytes);
        Box::pin(async move { self.add_now(entries) })
    }

    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Found>>> {
        Box::pin(async move { self.search_now(vector, k, filter) })
    }

    fn delete<'a>(&'a self, which: &'a Selection) -> BoxFuture<'a, Result<u64>> {
        Box::pin(async move { self.delete_now(which) })
    }

    fn metadata_keys(&self) -> BoxFuture<'_, Result<Option<Vec<String>>>> {
        Box::pin(async move { self.keys_now().map(Some) })
    }
}

/// The named stores of this process, with their creation times.
struct Registry {
    stores: HashMap<String, (InProcessVectorStore, Instant)>,
    swept: Instant,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static ALL: OnceLock<Mutex<Registry>> = OnceLock::new();
    ALL.get_or_init(|| {
        Mutex::new(Registry {
            stores: HashMap::new(),
            swept: Instant::now(),
        })
    })
    .lock()
    .unwrap_or_else(|e| e.into_inner())
}

/// A setting of n8n's (`N8N_VECTOR_STORE_*`): a positive number, else none.
fn limit(name: &str) -> Option<f64> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0)
}

impl Registry {
    /// Drops stores idle past `N8N_VECTOR_STORE_TTL_HOURS`, at most once a minute.
    fn sweep(&mut self) {
        let Some(hours) = limit("N8N_VECTOR_STORE_TTL_HOURS") else {
            return;
        };
        let now = Instant::now();
        if now.duration_since(self.swept) < Duration::from_secs(60) {
            return;
        }
        self.swept = now;
        let ttl = Duration::from_secs_f64(hours * 3600.0);
        self.stores.retain(|key, (store, _)| {
            let keep = store
                .last_used()
                .is_none_or(|used| now.duration_since(used) < ttl);
            if !keep {
                tracing::info!(key = %key, "vector store: dropped a store idle past N8N_VECTOR_STORE_TTL_HOURS");
            }
            keep
        });
    }
}

/// Before `store` takes `bytes` more: drops the oldest named stores (not
/// `store`) while all of them would pass `N8N_VECTOR_STORE_MAX_MEMORY`.
fn make_room(store: &InProcessVectorStore, bytes: usize) {
    let Some(mb) = limit("N8N_VECTOR_STORE_MAX_MEMORY") else {
        return;
    };
    let budget = (mb * 1024.0 * 1024.0) as usize;
    let mut all = registry();
    all.sweep();
    let mut total: usize = all.stores.values().map(|(s, _)| s.bytes()).sum::<usize>() + bytes;
    if total <= budget {
        return;
    }
    let mut by_age: Vec<(Instant, String)> = all
        .stores
        .iter()
        .filter(|(_, (s, _))| !Arc::ptr_eq(&s.shared, &store.shared))
        .map(|(k, (_, created))| (*created, k.clone()))
        .collect();
    by_age.sort();
    for (_, key) in by_age {
        if total <= budget {
            break;
        }
        if let Some((dropped, _)) = all.stores.remove(&key) {
            total = total.saturating_sub(dropped.bytes());
            tracing::info!(key = %key, "vector store: dropped the oldest store to stay under N8N_VECTOR_STORE_MAX_MEMORY");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use serde_json::{Map, Value, json};

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn entry(text: &str, v: Vec<f32>, m: Value) -> Entry {
        Entry {
            document: Document {
                page_content: text.into(),
                metadata: meta(m),
                id: None,
            },
            vector: v,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn finds_by_cosine_with_filters_deletes_and_checks_lengths() {
        let s = InProcessVectorStore::new();
        let ids = s
            .add(&[
                entry("aaa", vec![1.0, 0.0], json!({"k": 1})),
                entry("aab", vec![2.0, 1.0], json!({"k": 2})),
                entry("bbb", vec![0.0, 3.0], json!({"k": 2})),
            ])
            .await
            .unwrap();
        assert_eq!(ids.len(), 3);
        let found = s.search(&[1.0, 0.1], 2, &Filter::all()).await.unwrap();
        let texts: Vec<&str> = found
            .iter()
            .map(|f| f.document.page_content.as_str())
            .collect();
        assert_eq!(texts, ["aaa", "aab"]);
        assert!((found[0].score - 0.995_037).abs() < 1e-5);
        assert_eq!(found[0].document.id.as_deref(), Some(ids[0].as_str()));
        let filtered = s
            .search(&[1.0, 0.1], 5, &Filter::all().eq("k", "2"))
            .await
            .unwrap();
        assert_eq!(filtered.len(), 2);
        assert_eq!(filtered[0].document.page_content, "aab");
        let e = s
            .search(&[1.0, 0.0, 0.0], 1, &Filter::all())
            .await
            .unwrap_err();
        assert!(e.to_string().contains("holds 2-dimension vectors"), "{e}");
        let e = s
            .add(&[entry("c", vec![1.0], json!({}))])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("but a vector has 1:"), "{e}");
        assert_eq!(
            s.delete(&Selection::Ids(vec![ids[0].clone()]))
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            s.delete(&Selection::Filter(Filter::all().eq("k", 2)))
                .await
                .unwrap(),
            2
        );
        assert!(s.is_empty());
        assert_eq!(s.bytes(), 0);
        assert!(
            s.search(&[1.0, 0.0], 3, &Filter::all())
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn named_stores_are_shared_and_an_id_replaces_its_document() {
        let a = InProcessVectorStore::named("in-process-test-key");
        let mut d = entry("one", vec![1.0, 0.0], json!({}));
        d.document.id = Some("x".into());
        a.add(&[d.clone()]).await.unwrap();
        let b = InProcessVectorStore::named("in-process-test-key");
        assert_eq!(b.len(), 1);
        d.document.page_content = "two".into();
        b.add(&[d]).await.unwrap();
        assert_eq!(a.len(), 1);
        let found = a.search(&[1.0, 0.0], 1, &Filter::all()).await.unwrap();
        assert_eq!(found[0].document.page_content, "two");
        // n8n's estimate: text and metadata JSON as UTF-16, 4 bytes a
        // dimension, 200 more: ("two" + "{}") * 2 + 8 + 200.
        assert_eq!(a.bytes(), 218);
        assert!(InProcessVectorStore::keys().contains(&"in-process-test-key".to_owned()));
        InProcessVectorStore::drop_named("in-process-test-key");
    }
}

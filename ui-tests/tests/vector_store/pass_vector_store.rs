//! A custom store: namespace, registration, a Debug that hides secrets, and use through a DocumentStore.
use std::sync::{Arc, Mutex};

use nodekit::document::Document;
use nodekit::embed::Embedder;
use nodekit::model::BoxFuture;
use nodekit::prelude::*;
use nodekit::vector_store::{
    Entry, Found, Selection, VectorStoreNamespace, find_vector_store_type,
};

#[vector_store(namespace = ["example", "vectors", "list"])]
pub struct ListStore {
    api_key: String,
    entries: Mutex<Vec<Entry>>,
}

impl VectorStore for ListStore {
    fn dimensions(&self) -> BoxFuture<'_, nodekit::Result<Option<usize>>> {
        let d = self.entries.lock().unwrap().first().map(|e| e.vector.len());
        Box::pin(async move { Ok(d) })
    }
    fn add<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, nodekit::Result<Vec<String>>> {
        let mut held = self.entries.lock().unwrap();
        let ids = (held.len()..held.len() + entries.len())
            .map(|i| i.to_string())
            .collect();
        held.extend(entries.iter().cloned());
        Box::pin(async move { Ok(ids) })
    }
    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        filter: &'a Filter,
    ) -> BoxFuture<'a, nodekit::Result<Vec<Found>>> {
        let mut found: Vec<Found> = self
            .entries
            .lock()
            .unwrap()
            .iter()
            .filter(|e| filter.matches(&e.document.metadata))
            .map(|e| Found {
                document: e.document.clone(),
                score: f64::from(e.vector.iter().zip(vector).map(|(a, b)| a * b).sum::<f32>()),
            })
            .collect();
        found.sort_by(|a, b| b.score.total_cmp(&a.score));
        found.truncate(k);
        Box::pin(async move { Ok(found) })
    }
    fn delete<'a>(&'a self, _which: &'a Selection) -> BoxFuture<'a, nodekit::Result<u64>> {
        Box::pin(async { Ok(0) })
    }
}

#[derive(Debug)]
struct Ones;
impl Embedder for Ones {
    fn name(&self) -> &str {
        "ones"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
        Box::pin(async move { Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect()) })
    }
}

fn main() {
    assert_eq!(ListStore::NAMESPACE, ["example", "vectors", "list"]);
    assert_eq!(
        find_vector_store_type(&["example", "vectors", "list"])
            .unwrap()
            .type_name,
        "ListStore"
    );
    let s = ListStore {
        api_key: "sk-should-not-show".into(),
        entries: Mutex::new(Vec::new()),
    };
    let shown = format!("{s:?}");
    assert!(!shown.contains("sk-should-not-show"), "{shown}");
    let documents = DocumentStore::new(Arc::new(s), Arc::new(Ones));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        documents
            .add_documents(&[Document::new("short"), Document::new("a longer text")])
            .await
            .unwrap();
        let found = documents.search("x", 1, &Filter::all()).await.unwrap();
        assert_eq!(found[0].document.page_content, "a longer text");
    });
}

//! What the agent-memory and vector-store benchmarks share: the peers'
//! feature-hashing embedder and a PostgreSQL schema of their own.

// Each benchmark uses the part it needs.
#![allow(dead_code)]

use std::str::FromStr;

use nodekit::embed::Embedder;
use nodekit::model::BoxFuture;
use sha1::{Digest, Sha1};
use sqlx::postgres::{PgConnectOptions, PgPool};

/// The embedder's dimensions.
pub const DIMS: usize = 384;

/// The peers' feature-hashing embedder (the Mastra and LangChain harnesses
/// embed the same way): every word adds ±1 to the dimension a SHA-1 of the
/// word picks; L2-normalised.
pub fn hash_embed(text: &str) -> Vec<f32> {
    let mut v = [0f64; DIMS];
    for w in text.to_lowercase().split_whitespace() {
        let h = Sha1::digest(w.as_bytes());
        let idx = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize % DIMS;
        v[idx] += if h[4] & 1 == 1 { 1.0 } else { -1.0 };
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    v.iter().map(|x| (x * scale) as f32).collect()
}

/// [`hash_embed`] as an [`Embedder`], in process.
#[derive(Debug)]
pub struct HashEmbedder;

impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        "feature-hash-384"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
        Box::pin(async move { Ok(texts.iter().map(|t| hash_embed(t)).collect()) })
    }
}

/// A fresh schema `<prefix>_<pid>` on the server at `url` (one left by an
/// earlier run is dropped first): the admin pool, the schema's name, and
/// how to connect with it first on the search path (then `public`, where
/// pgvector's type is).
pub async fn pg_schema(url: &str, prefix: &str) -> (PgPool, String, PgConnectOptions) {
    let admin = PgPool::connect(url).await.unwrap();
    let schema = format!("{prefix}_{}", std::process::id());
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    )))
    .execute(&admin)
    .await
    .unwrap();
    let options = PgConnectOptions::from_str(url)
        .unwrap()
        .options([("search_path", format!("{schema},public"))]);
    (admin, schema, options)
}

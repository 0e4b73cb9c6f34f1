//! Vector stores on every backend: in process, SQLite (a real file) and
//! PostgreSQL with pgvector (`PGVECTOR_DATABASE_URL` from
//! `scripts/services.sh`; outside CI a missing server skips those tests
//! with a reason, under `CI=true` it fails them). Texts are embedded by a
//! bag-of-words model served over real HTTP on 127.0.0.1 in the OpenAI
//! embeddings protocol.

use nodekit::postgres::Postgres;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use nodekit::document::Document;
use nodekit::embed::{Embedder, EmbeddingsConfig, OpenAiEmbedder};
use nodekit::vector_store::pgvector::{PgVectorOptions, PgVectorStore};
use nodekit::vector_store::sqlite::SqliteVectorStore;
use nodekit::vector_store::{
    DocumentStore, Entry, Filter, Found, InProcessVectorStore, Scores, Selection, VectorStore,
};
use nodekit_test_support::embeddings::EmbedServer;
use nodekit_test_support::{Schema, unique};
use serde_json::{Value, json};
use sqlx::postgres::{PgPool, PgPoolOptions};

async fn embedder(server: &EmbedServer) -> Arc<dyn Embedder> {
    let mut c = EmbeddingsConfig::new("sk-test", "bow");
    c.base_url = server.base_url.clone();
    c.max_retries = 0;
    Arc::new(OpenAiEmbedder::new(c).unwrap())
}

fn temp_db() -> std::path::PathBuf {
    nodekit_test_support::scratch_dir().join(format!("{}.db", unique("nodekit_vs")))
}

/// A schema of its own on the pgvector server, dropped by [`Pg::drop`].
struct Pg {
    schema: Schema,
    pool: PgPool,
}

impl Pg {
    async fn new() -> Option<Pg> {
        let schema = Schema::pgvector().await?;
        let pool = nodekit::postgres::pool_options(4)
            .connect_with(PgVectorStore::session_options(schema.options.clone()))
            .await
            .unwrap();
        Some(Pg { schema, pool })
    }

    async fn store(&self, options: PgVectorOptions) -> PgVectorStore {
        PgVectorStore::open(&Postgres::from_pool(self.pool.clone()), options)
            .await
            .unwrap()
    }

    async fn drop(self) {
        self.pool.close().await;
        self.schema.drop().await;
    }
}

fn docs() -> Vec<Document> {
    vec![
        Document::new("zebras have black and white stripes")
            .with("source", "animals.md")
            .with("page", 1),
        Document::new("lions hunt zebras on the savanna")
            .with("source", "animals.md")
            .with("page", 2),
        Document::new("rust is a systems programming language")
            .with("source", "code.md")
            .with("page", 1),
        Document::new("postgres stores rows in tables")
            .with("source", "code.md")
            .with("page", 2),
        Document::new("the weather in berlin is rainy")
            .with("source", "travel.md")
            .with("tags", json!(["city", "germany"])),
    ]
}

/// Adds the documents, then checks searches, filters, deletes and refusals.
async fn behaves(store: Arc<dyn VectorStore>, embedder: Arc<dyn Embedder>) {
    let documents = DocumentStore::new(store.clone(), embedder.clone());
    let ids = documents.add_documents(&docs()).await.unwrap();
    assert_eq!(ids.len(), 5);
    let found = documents
        .search("zebra stripes", 2, &Filter::all())
        .await
        .unwrap();
    let texts: Vec<&str> = found
        .iter()
        .map(|f| f.document.page_content.as_str())
        .collect();
    assert_eq!(texts[0], "zebras have black and white stripes");
    assert_eq!(found[0].document.metadata["source"], "animals.md");
    assert!(ids.contains(found[0].document.id.as_ref().unwrap()));
    match store.scores() {
        Scores::Similarity => {
            assert!(found[0].score > found[1].score && found[0].score <= 1.0 + 1e-6)
        }
        Scores::Distance => assert!(found[0].score < found[1].score && found[0].score >= -1e-6),
    }
    // Filters: LangChain's forms.
    let filtered = documents
        .search("zebra stripes", 5, &Filter::all().eq("source", "code.md"))
        .await
        .unwrap();
    let sources: BTreeSet<&str> = filtered
        .iter()
        .map(|f| f.document.metadata["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, BTreeSet::from(["code.md"]));
    assert_eq!(filtered.len(), 2);
    let f = Filter::from_json(
        &json!({"page": {"gte": 2}, "source": {"in": ["animals.md", "travel.md"]}}),
    )
    .unwrap();
    let found = documents.search("anything", 5, &f).await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].document.page_content,
        "lions hunt zebras on the savanna"
    );
    let f = Filter::from_json(&json!({"tags": {"arrayContains": ["germany"]}})).unwrap();
    assert_eq!(documents.search("weather", 5, &f).await.unwrap().len(), 1);
    // A key no document has is named, with the keys there are.
    let e = documents
        .search("zebra", 3, &Filter::all().eq("sorce", "animals.md"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`sorce`, which no document has; did you mean `source`?"),
        "{e}"
    );
    // Refusals: an empty document, another embedding length.
    let e = documents
        .add_documents(&[Document::new("fine"), Document::new("  ")])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("document 2 of 2 has no text"), "{e}");
    let wrong = store
        .add(&[Entry {
            document: Document::new("three dimensions"),
            vector: vec![1.0, 0.0, 0.0],
        }])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        wrong.contains("holds 256-dimension vectors, but a vector has 3:"),
        "{wrong}"
    );
    let e = store
        .search(&[1.0, 0.0], 2, &Filter::all())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds 256-dimension vectors"), "{e}");
    // Through documents, the errors name the embedder.
    let other = DocumentStore::new(store.clone(), Arc::new(Words));
    let searched = other.search("zebra", 2, &Filter::all()).await;
    let added = other.add_documents(&[Document::new("zebra")]).await;
    for e in [searched.unwrap_err(), added.unwrap_err()] {
        let e = e.to_string();
        assert!(
            e.contains("holds 256-dimension vectors, but the embedder `words` has 16"),
            "{e}"
        );
    }
    // A NaN would rank first in every search: refused.
    let mut nan = vec![0.1f32; 256];
    nan[7] = f32::NAN;
    let e = store
        .add(&[Entry {
            document: Document::new("not a number"),
            vector: nan,
        }])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not finite (NaN or infinity)"), "{e}");
    // Deletes by id and by filter.
    assert_eq!(
        documents
            .delete(&Selection::Ids(vec![ids[0].clone()]))
            .await
            .unwrap(),
        1
    );
    let found = documents
        .search("zebra stripes", 1, &Filter::all())
        .await
        .unwrap();
    assert_ne!(
        found[0].document.page_content,
        "zebras have black and white stripes"
    );
    assert_eq!(
        documents
            .delete(&Selection::Filter(Filter::all().eq("source", "code.md")))
            .await
            .unwrap(),
        2
    );
    let left = documents
        .search("rust postgres zebra berlin", 10, &Filter::all())
        .await
        .unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    // A given id replaces its document.
    let mut again = Document::new("zebras are striped horses").with("source", "animals.md");
    again.id = Some(ids[1].clone());
    assert_eq!(
        documents.add_documents(&[again]).await.unwrap(),
        vec![ids[1].clone()]
    );
    let found = documents
        .search("lions savanna striped horses", 5, &Filter::all())
        .await
        .unwrap();
    assert_eq!(found.len(), 2);
    assert!(
        found
            .iter()
            .any(|f| f.document.page_content == "zebras are striped horses")
    );
    assert!(
        !found
            .iter()
            .any(|f| f.document.page_content.contains("savanna"))
    );
    // One id twice in one add: the last entry replaces the first.
    let same = "5f0c6a56-0000-4000-8000-000000000001";
    let vector = embedder
        .embed(&["one id twice".to_owned()])
        .await
        .unwrap()
        .remove(0);
    let entry = |text: &str| Entry {
        document: Document {
            id: Some(same.into()),
            ..Document::new(text)
        },
        vector: vector.clone(),
    };
    let added = store
        .add(&[entry("the first"), entry("the last")])
        .await
        .unwrap();
    assert_eq!(added, [same, same]);
    let found = store.search(&vector, 10, &Filter::all()).await.unwrap();
    let texts: Vec<&str> = found
        .iter()
        .filter(|f| f.document.id.as_deref() == Some(same))
        .map(|f| f.document.page_content.as_str())
        .collect();
    assert_eq!(texts, ["the last"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_store() {
    let server = EmbedServer::start(256).await;
    behaves(
        Arc::new(InProcessVectorStore::new()),
        embedder(&server).await,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store() {
    let server = EmbedServer::start(256).await;
    let store = SqliteVectorStore::open(temp_db(), "test").await.unwrap();
    behaves(Arc::new(store), embedder(&server).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_store() {
    let Some(pg) = Pg::new().await else { return };
    let server = EmbedServer::start(256).await;
    let store = pg.store(PgVectorOptions::default()).await;
    behaves(Arc::new(store), embedder(&server).await).await;
    pg.drop().await;
}

/// Random metadata, and filters of every operator: every store finds the
/// documents `Filter::matches` says, no more, no fewer.
async fn filters_agree(store: Arc<dyn VectorStore>) {
    let mut seed = 7u64;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut entries = Vec::new();
    for i in 0..60 {
        let mut d = Document::new(format!("document {i}"));
        let values = [
            json!("a"),
            json!("b"),
            json!(2),
            json!(3.5),
            json!(true),
            json!(null),
            json!(["a", "c"]),
        ];
        for key in ["k1", "k2", "k3"] {
            if next(4) > 0 {
                d = d.with(key, values[next(values.len() as u64) as usize].clone());
            }
        }
        let angle = i as f32 * 0.1;
        entries.push(Entry {
            document: d,
            vector: vec![angle.cos(), angle.sin(), 0.5],
        });
    }
    store.add(&entries).await.unwrap();
    let filters = [
        json!({"k1": "a"}),
        json!({"k1": 2}),
        json!({"k2": "true"}),
        json!({"k1": {"in": ["a", "2"]}}),
        json!({"k1": {"notIn": ["a"]}}),
        json!({"k3": {"neq": "b"}}),
        json!({"k2": {"arrayContains": ["c", "zz"]}}),
        json!({"k1": {"gt": 2}}),
        json!({"k3": {"gte": 2, "lt": 3.5}}),
        json!({"k2": {"lte": 3.5}, "k1": {"neq": "a"}}),
    ];
    for f in filters {
        let filter = Filter::from_json(&f).unwrap();
        let expected: BTreeSet<String> = entries
            .iter()
            .filter(|e| filter.matches(&e.document.metadata))
            .map(|e| e.document.page_content.clone())
            .collect();
        let found: BTreeSet<String> = store
            .search(&[1.0, 0.0, 0.5], 100, &filter)
            .await
            .unwrap()
            .into_iter()
            .map(|f| f.document.page_content)
            .collect();
        assert_eq!(found, expected, "filter {f}");
        let deleted = store
            .delete(&Selection::Filter(filter.clone()))
            .await
            .unwrap();
        assert_eq!(deleted as usize, expected.len(), "delete {f}");
        store
            .add(
                &entries
                    .iter()
                    .filter(|e| expected.contains(&e.document.page_content))
                    .cloned()
                    .collect::<Vec<_>>(),
            )
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_agree_in_process() {
    filters_agree(Arc::new(InProcessVectorStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_agree_sqlite() {
    filters_agree(Arc::new(
        SqliteVectorStore::open(temp_db(), "f").await.unwrap(),
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_agree_pgvector() {
    let Some(pg) = Pg::new().await else { return };
    filters_agree(Arc::new(pg.store(PgVectorOptions::default()).await)).await;
    pg.drop().await;
}

/// Gaussian-ish vectors from a seed.
fn random_vectors(n: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut s = seed | 1;
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            (0..dims)
                .map(|_| {
                    let (a, b) = (uniform(), uniform());
                    ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()) as f32
                })
                .collect()
        })
        .collect()
}

/// `vectors` as documents "doc <i>", each with `all: yes`: a filter on
/// it passes every document and makes every store scan exactly.
fn numbered(vectors: &[Vec<f32>]) -> Vec<Entry> {
    vectors
        .iter()
        .enumerate()
        .map(|(i, v)| Entry {
            document: Document::new(format!("doc {i}")).with("all", "yes"),
            vector: v.clone(),
        })
        .collect()
}

/// The share of the exact top 5 (a scan, through a filter every
/// document passes) that the store's unfiltered searches return, over
/// `queries`; `check` sees each pair of answers (unfiltered, exact).
async fn agreement(
    store: &dyn VectorStore,
    queries: &[Vec<f32>],
    check: impl Fn(&[Found], &[Found]),
) -> f64 {
    let (mut same, mut total) = (0, 0);
    let everything = Filter::all().eq("all", "yes");
    for q in queries {
        let found = store.search(q, 5, &Filter::all()).await.unwrap();
        let exact = store.search(q, 5, &everything).await.unwrap();
        check(&found, &exact);
        total += exact.len();
        same += exact
            .iter()
            .filter(|e| found.iter().any(|f| f.document.id == e.document.id))
            .count();
    }
    same as f64 / total.max(1) as f64
}

/// A zero vector has no direction: its score is 0 and it ranks there, in
/// the SQLite scan as in memory (not first, as a NULL distance would).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_vector_ranks_as_no_similarity() {
    let entries: Vec<Entry> = [
        ("zero", [0.0f32, 0.0]),
        ("same", [1.0, 0.0]),
        ("close", [0.8, 0.6]),
        ("opposite", [-1.0, 0.0]),
    ]
    .into_iter()
    .map(|(text, v)| Entry {
        document: Document::new(text).with("all", "yes"),
        vector: v.to_vec(),
    })
    .collect();
    let sqlite = SqliteVectorStore::open(temp_db(), "zero").await.unwrap();
    let memory = InProcessVectorStore::new();
    for store in [&sqlite as &dyn VectorStore, &memory] {
        store.add(&entries).await.unwrap();
        for filter in [Filter::all(), Filter::all().eq("all", "yes")] {
            let found = store.search(&[1.0, 0.0], 4, &filter).await.unwrap();
            let order: Vec<(&str, f64)> = found
                .iter()
                .map(|f| {
                    (
                        f.document.page_content.as_str(),
                        (f.score * 100.0).round() / 100.0,
                    )
                })
                .collect();
            assert_eq!(
                order,
                [
                    ("same", 1.0),
                    ("close", 0.8),
                    ("zero", 0.0),
                    ("opposite", -1.0)
                ]
            );
        }
    }
}

/// A SQLite collection past 4,096 documents is held in memory as a graph
/// once loaded: its answers agree with the exact scan, and rows another
/// connection writes are found a moment later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_collection_in_memory() {
    let path = temp_db();
    let store = SqliteVectorStore::open(&path, "big").await.unwrap();
    let vectors = random_vectors(6_000, 32, 11);
    store.add(&numbered(&vectors)).await.unwrap();
    let queries = random_vectors(40, 32, 99);
    // The first search starts the load; wait for it.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !store.loaded() {
        store.search(&queries[0], 1, &Filter::all()).await.unwrap();
        assert!(
            std::time::Instant::now() < deadline,
            "the collection never loaded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let share = agreement(&store, &queries, |held, exact| {
        // Scores are exact cosine similarities either way.
        assert!(
            (held[0].score - exact[0].score).abs() < 1e-4
                || held[0].document.id != exact[0].document.id
        );
    })
    .await;
    assert!(share >= 0.9, "{share}");
    // Another writer: a row inserted through another connection.
    let other = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let v: Vec<u8> = queries[1].iter().flat_map(|f| f.to_le_bytes()).collect();
    sqlx::query("INSERT INTO nodekit_vs_documents (collection, doc_id, content, metadata, embedding) VALUES ('big', 'outside', 'written elsewhere', '{}', $1)")
        .bind(v)
        .execute(&other)
        .await
        .unwrap();
    let mut seen = false;
    for _ in 0..40 {
        let found = store.search(&queries[1], 1, &Filter::all()).await.unwrap();
        if found[0].document.id.as_deref() == Some("outside") {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen, "a row written by another connection was never found");
    // ... and one it deletes is skipped (and dropped) when a search meets
    // it, the answer still full.
    sqlx::query("DELETE FROM nodekit_vs_documents WHERE doc_id = 'outside'")
        .execute(&other)
        .await
        .unwrap();
    for k in [1, 4] {
        let found = store.search(&queries[1], k, &Filter::all()).await.unwrap();
        assert_eq!(found.len(), k);
        assert!(
            found
                .iter()
                .all(|f| f.document.id.as_deref() != Some("outside"))
        );
    }
}

/// Documents n8n (LangChain's PGVectorStore) wrote are found, and what
/// nodekit writes reads back through LangChain's own query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_shares_n8n_tables() {
    let Some(pg) = Pg::new().await else { return };
    // LangChain's DDL and insert, as n8n runs them.
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS n8n_vectors (
           \"id\" uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
           \"text\" text, \"metadata\" jsonb, \"embedding\" vector);
         INSERT INTO n8n_vectors(\"text\", \"embedding\", \"metadata\")
           VALUES ('from n8n', '[1,0,0]', '{\"source\":\"n8n\"}'), ('other', '[0,1,0]', '{}')",
    )
    .execute(&pg.pool)
    .await
    .unwrap();
    let store = pg.store(PgVectorOptions::default()).await;
    let found = store
        .search(&[0.9, 0.1, 0.0], 1, &Filter::all())
        .await
        .unwrap();
    assert_eq!(found[0].document.page_content, "from n8n");
    assert_eq!(found[0].document.metadata["source"], "n8n");
    // n8n shows the cosine distance.
    let cos = 0.9 / (0.9f64 * 0.9 + 0.1 * 0.1).sqrt();
    assert!(
        (found[0].score - (1.0 - cos)).abs() < 1e-6,
        "{}",
        found[0].score
    );
    let ids = store
        .add(&[Entry {
            document: Document::new("from nodekit").with("lang", "rust"),
            vector: vec![0.0, 0.0, 1.0],
        }])
        .await
        .unwrap();
    let row: (String, String, Value) = sqlx::query_as(
        "SELECT id::text, text, metadata FROM n8n_vectors ORDER BY \"embedding\" <=> '[0,0,1]' LIMIT 1",
    )
    .fetch_one(&pg.pool)
    .await
    .unwrap();
    assert_eq!(
        row,
        (
            ids[0].clone(),
            "from nodekit".to_owned(),
            json!({"lang": "rust"})
        )
    );
    // Collections: a store of one sees only its own.
    let options = |name: &str| PgVectorOptions {
        table: "docs".into(),
        collection: Some((name.into(), "n8n_vector_collections".into())),
        ..PgVectorOptions::default()
    };
    let a = pg.store(options("a")).await;
    let b = pg.store(options("b")).await;
    for (store, text) in [(&a, "in a"), (&b, "in b")] {
        store
            .add(&[Entry {
                document: Document::new(text),
                vector: vec![1.0, 1.0],
            }])
            .await
            .unwrap();
    }
    let found = a.search(&[1.0, 1.0], 5, &Filter::all()).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].document.page_content, "in a");
    // Added again under its id through b, a document moves to b.
    b.add(&[Entry {
        document: Document {
            id: found[0].document.id.clone(),
            ..Document::new("moved to b")
        },
        vector: vec![1.0, 1.0],
    }])
    .await
    .unwrap();
    assert!(
        a.search(&[1.0, 1.0], 5, &Filter::all())
            .await
            .unwrap()
            .is_empty()
    );
    let in_b = b.search(&[1.0, 1.0], 5, &Filter::all()).await.unwrap();
    assert_eq!(in_b.len(), 2, "{in_b:?}");
    assert!(in_b.iter().any(|f| f.document.page_content == "moved to b"));
    let e = a
        .add(&[Entry {
            document: Document {
                id: Some("not-a-uuid".into()),
                ..Document::new("x")
            },
            vector: vec![1.0, 0.0],
        }])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("is not a UUID"), "{e}");
    pg.drop().await;
}

/// New documents go to PostgreSQL as binary `COPY` rows when the table
/// has n8n's column types, and as text otherwise; both read back the same,
/// NULs stripped from the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_writes_any_column_types() {
    let Some(pg) = Pg::new().await else { return };
    sqlx::raw_sql(
        "CREATE TABLE typed (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
           text varchar(100), metadata json, embedding vector(2))",
    )
    .execute(&pg.pool)
    .await
    .unwrap();
    for table in ["n8n_vectors", "typed"] {
        let store = pg
            .store(PgVectorOptions {
                table: table.into(),
                ..PgVectorOptions::default()
            })
            .await;
        let ids = store
            .add(&[
                Entry {
                    document: Document::new("a\0b").with("k", 1).with("s", "é\"x"),
                    vector: vec![1.0, 0.0],
                },
                Entry {
                    document: Document::new("far"),
                    vector: vec![-1.0, 0.5],
                },
            ])
            .await
            .unwrap();
        let found = store.search(&[1.0, 0.1], 2, &Filter::all()).await.unwrap();
        assert_eq!(found.len(), 2, "{table}");
        assert_eq!(found[0].document.id.as_ref(), Some(&ids[0]), "{table}");
        assert_eq!(found[0].document.page_content, "ab", "{table}");
        assert_eq!(
            Value::Object(found[0].document.metadata.clone()),
            json!({"k": 1, "s": "é\"x"}),
            "{table}"
        );
        assert_eq!(found[1].document.page_content, "far", "{table}");
        assert!(found[1].document.metadata.is_empty(), "{table}");
        // The vectors arrived exactly.
        let stored: String = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT embedding::text FROM {table} WHERE id = $1::uuid"
        )))
        .bind(&ids[1])
        .fetch_one(&pg.pool)
        .await
        .unwrap();
        assert_eq!(stored, "[-1,0.5]", "{table}");
        // A vector of another length than the table's is refused.
        let e = store
            .add(&[Entry {
                document: Document::new("three"),
                vector: vec![1.0, 0.0, 0.0],
            }])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("dimension"), "{table}: {e}");
    }
    pg.drop().await;
}

/// Past 1,000 documents an unfiltered PGVector search goes through the
/// HNSW index it creates, and agrees with the exact scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_index() {
    let Some(pg) = Pg::new().await else { return };
    let store = pg.store(PgVectorOptions::default()).await;
    let vectors = random_vectors(2_000, 16, 5);
    store.add(&numbered(&vectors)).await.unwrap();
    let queries = random_vectors(20, 16, 77);
    let share = agreement(&store, &queries, |_, _| {}).await;
    let has_index: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexdef LIKE '%hnsw%')",
    )
    .fetch_one(&pg.pool)
    .await
    .unwrap();
    assert!(has_index);
    assert!(share >= 0.9, "{share}");
    // The session options set the search breadth and keep the schema.
    let (breadth, path): (String, String) =
        sqlx::query_as("SELECT current_setting('hnsw.ef_search'), current_setting('search_path')")
            .fetch_one(&pg.pool)
            .await
            .unwrap();
    assert_eq!(breadth, "200");
    assert!(path.starts_with(&pg.schema.name), "{path}");
    // The index returns at most its search breadth of rows: a larger k
    // is answered by the scan.
    let many = store
        .search(&queries[0], 300, &Filter::all())
        .await
        .unwrap();
    assert_eq!(many.len(), 300);
    // A pool made without the session options searches as widely: the
    // store sets the breadth for each search (pgvector's default, 40,
    // would cap this answer at 40).
    let plain = PgPoolOptions::new()
        .max_connections(2)
        .connect_with(pg.schema.options.clone())
        .await
        .unwrap();
    let breadth: Option<String> =
        sqlx::query_scalar("SELECT current_setting('hnsw.ef_search', true)")
            .fetch_one(&plain)
            .await
            .unwrap();
    assert_ne!(breadth.as_deref(), Some("200"));
    let store = PgVectorStore::open(
        &Postgres::from_pool(plain.clone()),
        PgVectorOptions::default(),
    )
    .await
    .unwrap();
    let wide = store
        .search(&queries[0], 150, &Filter::all())
        .await
        .unwrap();
    assert_eq!(wide.len(), 150);
    plain.close().await;
    pg.drop().await;
}

/// Searches and waits until the store's in-process graph is loaded and
/// has every vector in it.
async fn settled(store: &PgVectorStore, probe: &[f32]) {
    store.search(probe, 1, &Filter::all()).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while store.indexing() {
        assert!(
            std::time::Instant::now() < deadline,
            "the graph never settled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The text of the nearest document.
async fn nearest(store: &PgVectorStore, query: &[f32]) -> Option<String> {
    let found = store.search(query, 1, &Filter::all()).await.unwrap();
    found.first().map(|f| f.document.page_content.clone())
}

/// With the in-process index, unfiltered searches go through a graph of
/// the table held in this process: it agrees with the exact scan, sees
/// what other writers (plain SQL, as n8n writes) insert, update, delete
/// and truncate, takes this process's writes at once (and drops those that
/// do not commit), is shared by the
/// stores opened on the table, and survives its trigger being dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgvector_in_process_index() {
    let Some(pg) = Pg::new().await else { return };
    let options = PgVectorOptions {
        in_process_index: true,
        ..PgVectorOptions::default()
    };
    let store = pg.store(options.clone()).await;
    let vectors = random_vectors(5_000, 16, 11);
    store.add(&numbered(&vectors)).await.unwrap();
    let probes = random_vectors(8, 16, 99);
    settled(&store, &probes[0]).await;
    let queries = random_vectors(20, 16, 77);
    let share = agreement(&store, &queries, |graph, _| {
        // PostgreSQL's distances, nearest first.
        assert!(graph.windows(2).all(|w| w[0].score <= w[1].score));
    })
    .await;
    assert!(share >= 0.9, "{share}");

    // The graph answers: a row written where triggers do not fire (as a
    // replication subscriber writes) is not in it, though pgvector would
    // find it first.
    let write = async |sql: &str| {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&pg.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    };
    let insert = |text: &str, v: &[f32]| {
        format!(
            "INSERT INTO n8n_vectors (text, metadata, embedding) VALUES ('{text}', '{{\"all\":\"yes\"}}', '{}')",
            pg_text(v)
        )
    };
    write(&format!(
        "SET session_replication_role = replica; {}; RESET session_replication_role",
        insert("unseen", &probes[1])
    ))
    .await;
    assert_ne!(nearest(&store, &probes[1]).await.as_deref(), Some("unseen"));
    let exact = store
        .search(&probes[1], 1, &Filter::all().eq("all", "yes"))
        .await
        .unwrap();
    assert_eq!(exact[0].document.page_content, "unseen");

    // Another writer's insert is found by the next search, and by the
    // graph once it caught up, with every row it did not hold.
    write(&insert("foreign", &probes[2])).await;
    assert_eq!(
        nearest(&store, &probes[2]).await.as_deref(),
        Some("foreign")
    );
    settled(&store, &probes[0]).await;
    assert_eq!(
        nearest(&store, &probes[2]).await.as_deref(),
        Some("foreign")
    );
    assert_eq!(nearest(&store, &probes[1]).await.as_deref(), Some("unseen"));
    // An update moves it; a delete removes it.
    write(&format!(
        "UPDATE n8n_vectors SET embedding = '{}' WHERE text = 'foreign'",
        pg_text(&probes[3])
    ))
    .await;
    for _ in 0..2 {
        assert_eq!(
            nearest(&store, &probes[3]).await.as_deref(),
            Some("foreign")
        );
        assert_ne!(
            nearest(&store, &probes[2]).await.as_deref(),
            Some("foreign")
        );
        settled(&store, &probes[0]).await;
    }
    write("DELETE FROM n8n_vectors WHERE text = 'foreign'").await;
    for _ in 0..2 {
        assert_ne!(
            nearest(&store, &probes[3]).await.as_deref(),
            Some("foreign")
        );
        settled(&store, &probes[0]).await;
    }

    // This process's writes go in at once.
    let ids = store
        .add(&[Entry {
            document: Document::new("own"),
            vector: probes[4].clone(),
        }])
        .await
        .unwrap();
    assert_eq!(nearest(&store, &probes[4]).await.as_deref(), Some("own"));
    settled(&store, &probes[0]).await;
    assert_eq!(store.delete(&Selection::Ids(ids.clone())).await.unwrap(), 1);
    assert_ne!(nearest(&store, &probes[4]).await.as_deref(), Some("own"));
    settled(&store, &probes[0]).await;
    // One that does not commit (a check at commit refuses it) leaves
    // nothing in the graph: its vector, put there before the commit, would
    // be the graph's nearest, with no row behind it.
    write(
        "CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN IF NEW.text = 'doomed' THEN RAISE EXCEPTION 'doomed'; END IF; RETURN NULL; END $$;
         CREATE CONSTRAINT TRIGGER refuse_doomed AFTER INSERT ON n8n_vectors
           DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_doomed()",
    )
    .await;
    let doomed = Entry {
        document: Document::new("doomed"),
        vector: probes[6].clone(),
    };
    assert!(store.add(&[doomed]).await.is_err());
    assert!(!store.indexing());
    let found = nearest(&store, &probes[6]).await;
    assert!(
        found.is_some() && found.as_deref() != Some("doomed"),
        "{found:?}"
    );
    write("DROP TRIGGER refuse_doomed ON n8n_vectors").await;
    // While a write lands (its row in the graph, its commit held up by a
    // check), a search still gets `k` rows, none of them the uncommitted
    // one; once it commits, the row is found.
    write(
        "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
         CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON n8n_vectors
           DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()",
    )
    .await;
    let landing = [Entry {
        document: Document::new("landing"),
        vector: probes[7].clone(),
    }];
    let during = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        store.search(&probes[7], 4, &Filter::all()).await.unwrap()
    };
    let (added, during) = tokio::join!(store.add(&landing), during);
    added.unwrap();
    let texts: Vec<&str> = during
        .iter()
        .map(|f| f.document.page_content.as_str())
        .collect();
    assert!(texts.len() == 4 && !texts.contains(&"landing"), "{texts:?}");
    assert_eq!(
        nearest(&store, &probes[7]).await.as_deref(),
        Some("landing")
    );
    write("DROP TRIGGER slow_commit ON n8n_vectors").await;

    // A second store on the table shares the loaded graph (once the
    // landed row is in it, which the background may take a moment for).
    settled(&store, &probes[7]).await;
    let other = pg.store(options.clone()).await;
    assert_eq!(nearest(&other, &probes[1]).await.as_deref(), Some("unseen"));
    assert!(!other.indexing());

    // A dropped trigger: searches stay right, and it comes back.
    write("DROP TRIGGER nodekit_vector_version ON n8n_vectors").await;
    write(&insert("untracked", &probes[5])).await;
    assert_eq!(
        nearest(&store, &probes[5]).await.as_deref(),
        Some("untracked")
    );
    settled(&store, &probes[0]).await;
    assert_eq!(
        nearest(&store, &probes[5]).await.as_deref(),
        Some("untracked")
    );
    let back: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'nodekit_vector_version')",
    )
    .fetch_one(&pg.pool)
    .await
    .unwrap();
    assert!(back);

    // A truncate empties it.
    write("TRUNCATE n8n_vectors").await;
    assert_eq!(nearest(&store, &probes[5]).await, None);
    settled(&store, &probes[0]).await;
    assert_eq!(nearest(&store, &probes[5]).await, None);

    // The graph measures cosine distance only.
    let e = PgVectorStore::open(
        &Postgres::from_pool(pg.pool.clone()),
        PgVectorOptions {
            distance: nodekit::vector_store::pgvector::Distance::Euclidean,
            ..options
        },
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("cosine distance"), "{e}");
    pg.drop().await;
}

/// A vector as pgvector's text.
fn pg_text(v: &[f32]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(","))
}

/// An embedder in process that refuses the text "fail".
#[derive(Debug)]
struct Words;

impl Embedder for Words {
    fn name(&self) -> &str {
        "words"
    }
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> nodekit::model::BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
        Box::pin(async move {
            if texts.iter().any(|t| t == "fail") {
                return Err(nodekit::Error::NodeFailed {
                    node: "words".into(),
                    message: "the embedder refused".into(),
                });
            }
            Ok(texts
                .iter()
                .map(|t| nodekit_test_support::embeddings::bag_of_words(t, 16))
                .collect())
        })
    }
}

/// `add_documents` hands the store a thousand documents at a time and
/// embeds the next thousand meanwhile: every document arrives once, ids in
/// order; when embedding the second thousand fails, the first thousand is
/// kept and nothing after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_documents_writes_a_thousand_at_a_time() {
    let mut documents: Vec<Document> = (0..2500)
        .map(|i| Document::new(format!("document number {i}")).with("i", i))
        .collect();
    let store = Arc::new(InProcessVectorStore::new());
    let ids = DocumentStore::new(store.clone(), Arc::new(Words))
        .add_documents(&documents)
        .await
        .unwrap();
    assert_eq!(ids.len(), 2500);
    let all = store
        .search(&[1.0; 16], 5000, &Filter::all())
        .await
        .unwrap();
    assert_eq!(all.len(), 2500);
    for found in &all {
        let i = found.document.metadata["i"].as_u64().unwrap() as usize;
        assert_eq!(found.document.id.as_ref(), Some(&ids[i]));
    }

    documents[1500] = Document::new("fail");
    let store = Arc::new(InProcessVectorStore::new());
    let e = DocumentStore::new(store.clone(), Arc::new(Words))
        .add_documents(&documents)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("the embedder refused"), "{e}");
    let kept = store
        .search(&[1.0; 16], 5000, &Filter::all())
        .await
        .unwrap();
    assert_eq!(kept.len(), 1000);
    assert!(
        kept.iter()
            .all(|f| f.document.metadata["i"].as_u64().unwrap() < 1000)
    );
}

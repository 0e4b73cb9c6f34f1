//! Retrieval: a handbook split into chunks, embedded, and kept in a SQLite
//! vector store; a question finds the chunks closest to it in meaning,
//! optionally only those of one section.
//!
//! ```text
//! cargo run -p retrieval -- handbook.db "How long does a refund take?"
//! cargo run -p retrieval -- handbook.db "How long?" shipping
//! ```
//!
//! The embedder here is a stand-in (words hashed into a vector), so the
//! example runs without a key; a store of one's own takes any
//! [`Embedder`], for example `nodekit::embed::OpenAiEmbedder`.

use std::process::ExitCode;
use std::sync::Arc;

use nodekit::document::Document;
use nodekit::embed::Embedder;
use nodekit::model::BoxFuture;
use nodekit::text_splitter::{RecursiveCharacterTextSplitter, split_documents};
use nodekit::vector_store::sqlite::SqliteVectorStore;
use nodekit::vector_store::{DocumentStore, Filter, Found};

/// The handbook's sections, each a document with its name as metadata.
const HANDBOOK: [(&str, &str); 3] = [
    (
        "refunds",
        "Refunds are paid to the card used for the order.\n\n\
         A refund takes five to ten working days to reach the card once the \
         returned parcel is received.",
    ),
    (
        "shipping",
        "Orders ship from the warehouse within two working days.\n\n\
         Delivery takes three days in the country and up to ten days abroad; \
         every parcel has a tracking number.",
    ),
    (
        "returns",
        "Anything can be returned within thirty days, unused and in its box.\n\n\
         Print the return label from the order page and drop the parcel at \
         any post office.",
    ),
];

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (database, question, section) = match args.as_slice() {
        [database, question] => (database, question, None),
        [database, question, section] => (database, question, Some(section.as_str())),
        _ => {
            eprintln!("usage: retrieval DATABASE QUESTION [SECTION]");
            return ExitCode::FAILURE;
        }
    };
    match answer(database, question, section).await {
        Ok(found) => {
            for hit in found {
                let section = hit.document.metadata["section"]
                    .as_str()
                    .unwrap_or_default();
                println!("{:.3} [{section}] {}", hit.score, hit.document.page_content);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("retrieval: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The two chunks closest to `question`, from `section` if given; the
/// handbook is indexed in the SQLite file `database` on the first run.
async fn answer(
    database: &str,
    question: &str,
    section: Option<&str>,
) -> nodekit::Result<Vec<Found>> {
    let store = Arc::new(SqliteVectorStore::open(database, "handbook").await?);
    let handbook = DocumentStore::new(store, Arc::new(HashedWords));
    // An empty collection has no vectors yet, so no length.
    if handbook.store().dimensions().await?.is_none() {
        let documents: Vec<Document> = HANDBOOK
            .iter()
            .map(|(name, text)| Document::new(*text).with("section", *name))
            .collect();
        // Chunks of at most 120 characters, as n8n's Default Data Loader splits.
        let splitter = RecursiveCharacterTextSplitter::new(120, 0)?;
        handbook
            .add_documents(&split_documents(&splitter, &documents))
            .await?;
    }
    let filter = match section {
        Some(section) => Filter::all().eq("section", section),
        None => Filter::all(),
    };
    handbook.search(question, 2, &filter).await
}

/// A stand-in embedder: each word (lowercased, with a crude English stem)
/// adds to one of 256 dimensions, so texts sharing words are close.
#[derive(Debug)]
struct HashedWords;

impl Embedder for HashedWords {
    fn name(&self) -> &str {
        "hashed-words"
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, nodekit::Result<Vec<Vec<f32>>>> {
        Box::pin(async move { Ok(texts.iter().map(|text| hashed(text)).collect()) })
    }
}

fn hashed(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0; 256];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
    {
        let word = word.to_lowercase();
        let stem = word.trim_end_matches('s');
        // FNV-1a: a fixed hash, the same in every run.
        let hash = stem.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        vector[(hash % 256) as usize] += 1.0;
    }
    vector
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(found: &[Found]) -> Vec<&str> {
        found
            .iter()
            .map(|hit| hit.document.metadata["section"].as_str().unwrap())
            .collect()
    }

    #[tokio::test]
    async fn a_question_finds_its_chunk_and_a_filter_keeps_to_a_section() {
        let dir = std::env::temp_dir().join(format!("retrieval-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let database = dir.join("handbook.db");
        let database = database.to_str().unwrap();

        let found = answer(
            database,
            "How long does a refund take to reach my card?",
            None,
        )
        .await
        .unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(sections(&found)[0], "refunds", "{found:?}");
        assert!(
            found[0]
                .document
                .page_content
                .contains("five to ten working days"),
            "{found:?}"
        );
        // Each chunk knows the lines of its section it came from.
        assert!(
            found[0].document.metadata["loc"]["lines"]["from"].is_u64(),
            "{found:?}"
        );

        // The second run finds the index the first one made.
        let found = answer(database, "How long does delivery take?", Some("shipping"))
            .await
            .unwrap();
        assert_eq!(sections(&found), ["shipping", "shipping"], "{found:?}");
        assert!(
            found[0].document.page_content.contains("Delivery"),
            "{found:?}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}

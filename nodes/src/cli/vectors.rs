//! `nodekit index` and `nodekit query`: a folder of text and Markdown
//! files into a vector store, and searches of it.

use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nodekit::document::Document;
use nodekit::embed::{EmbeddingsConfig, OpenAiEmbedder};
use nodekit::error::{QUOTE_MAX, shorten};
use nodekit::node::Credentials;
use nodekit::text_splitter::{RecursiveCharacterTextSplitter, split_documents};
#[cfg(feature = "vector-store-postgres")]
use nodekit::vector_store::pgvector::{PgVectorOptions, PgVectorStore};
#[cfg(feature = "vector-store-sqlite")]
use nodekit::vector_store::sqlite::SqliteVectorStore;
use nodekit::vector_store::{DocumentStore, Filter, Selection, VectorStore, VectorStoreOptions};
use serde_json::{Value, json};

use super::{CliError, shown, write_stdout};

/// Where `index` and `query` keep documents.
#[derive(clap::Args, Debug)]
pub struct StoreArgs {
    /// The store: `sqlite:FILE` (created when missing), or `pgvector` (the
    /// `postgres` credential; n8n's `n8n_vectors` table) or `pgvector:TABLE`.
    #[arg(long, value_name = "STORE")]
    store: String,
    /// The collection (SQLite) or collection name (PGVector; none by default).
    #[arg(long, value_name = "NAME")]
    collection: Option<String>,
    /// The embeddings model, served at the `openAiApi` credential's URL.
    #[arg(long, value_name = "MODEL", default_value = "text-embedding-3-small")]
    model: String,
}

/// How `index` splits files.
#[derive(clap::Args, Debug)]
pub struct SplitArgs {
    /// The most characters a chunk holds (UTF-16 code units, as n8n counts).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    chunk_size: usize,
    /// How many characters a chunk repeats of the one before, at most.
    #[arg(long, value_name = "N", default_value_t = 200)]
    chunk_overlap: usize,
    /// Texts per call of the embeddings model.
    #[arg(long, value_name = "N", default_value_t = 200)]
    batch: usize,
}

/// Files larger than this are read in windows of about this size, cut at
/// a paragraph or line break: memory stays bounded, and chunks near a cut
/// may differ from those of the whole file split at once.
const WINDOW: usize = 4 << 20;

/// The extensions `index` reads.
const EXTENSIONS: [&str; 4] = ["txt", "md", "markdown", "text"];

/// The store `args` name, through the `openAiApi` credential's embeddings
/// model, embedding `batch` texts per call.
async fn open(
    args: &StoreArgs,
    credentials: &Credentials,
    batch: usize,
) -> Result<DocumentStore, String> {
    let store: Arc<dyn VectorStore> = match args.store.split_once(':') {
        #[cfg(feature = "vector-store-sqlite")]
        Some(("sqlite", path)) if !path.is_empty() => Arc::new(
            SqliteVectorStore::open(path, args.collection.as_deref().unwrap_or("documents"))
                .await
                .map_err(|e| e.to_string())?,
        ),
        #[cfg(feature = "vector-store-postgres")]
        None if args.store == "pgvector" => pgvector(args, credentials, None).await?,
        #[cfg(feature = "vector-store-postgres")]
        Some(("pgvector", table)) if !table.is_empty() => {
            pgvector(args, credentials, Some(table)).await?
        }
        #[cfg(not(feature = "vector-store-sqlite"))]
        Some(("sqlite", _)) => return Err(not_built("SQLite", "vector-store-sqlite")),
        #[cfg(not(feature = "vector-store-postgres"))]
        _ if args.store.split(':').next() == Some("pgvector") => {
            return Err(not_built("PGVector", "vector-store-postgres"));
        }
        _ => {
            return Err(format!(
                "unknown store {:?}: use `sqlite:FILE`, `pgvector` or `pgvector:TABLE`",
                shorten(&args.store, QUOTE_MAX)
            ));
        }
    };
    let api = credentials
        .get("openAiApi")
        .ok_or("no `openAiApi` credential: the embeddings model's URL and key come from it")?;
    let api = crate::credentials::openai(api, &args.model).map_err(|e| e.to_string())?;
    let embedder = OpenAiEmbedder::new(EmbeddingsConfig {
        base_url: api.base_url,
        azure_api_version: api.azure_api_version,
        ..EmbeddingsConfig::new(api.api_key, args.model.clone())
    })
    .map_err(|e| e.to_string())?;
    Ok(DocumentStore::from_options(VectorStoreOptions {
        embedding_batch: batch,
        ..VectorStoreOptions::new(store, Arc::new(embedder))
    }))
}

/// A store this program was built without.
#[cfg(not(all(feature = "vector-store-sqlite", feature = "vector-store-postgres")))]
fn not_built(store: &str, feature: &str) -> String {
    format!("this program was built without the {store} store (nodekit-nodes' feature `{feature}`)")
}

#[cfg(feature = "vector-store-postgres")]
async fn pgvector(
    args: &StoreArgs,
    credentials: &Credentials,
    table: Option<&str>,
) -> Result<Arc<dyn VectorStore>, String> {
    let config = credentials
        .get("postgres")
        .ok_or("no `postgres` credential: the database comes from it")?;
    let config = crate::credentials::postgres(config).map_err(|e| e.to_string())?;
    let mut options = PgVectorOptions::default();
    if let Some(t) = table {
        options.table = t.to_owned();
    }
    options.collection = args
        .collection
        .clone()
        .map(|c| (c, "n8n_vector_collections".to_owned()));
    let pg = PgVectorStore::postgres(&config).map_err(|e| e.to_string())?;
    Ok(Arc::new(
        PgVectorStore::open(&pg, options)
            .await
            .map_err(|e| e.to_string())?,
    ))
}

/// The text and Markdown files under `dir`, sorted.
fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", shown(&d)))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot read {}: {e}", shown(&d)))?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads `path` in windows of about [`WINDOW`] bytes cut after a paragraph
/// (or line) break, giving each window's text and the number of its first
/// line. A file that is not UTF-8 is an error naming where.
fn windows(
    path: &Path,
    mut each: impl FnMut(&str, usize) -> Result<(), String>,
) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", shown(path)))?;
    let mut reader = BufReader::new(file);
    let mut pending: Vec<u8> = Vec::new();
    let mut line = 1;
    let mut offset = 0usize;
    loop {
        let mut chunk = Vec::with_capacity(WINDOW);
        let read = (&mut reader)
            .take(WINDOW as u64)
            .read_to_end(&mut chunk)
            .map_err(|e| format!("{}: {e}", shown(path)))?;
        pending.extend_from_slice(&chunk);
        let done = read == 0 || reader.fill_buf().map(|b| b.is_empty()).unwrap_or(true);
        if pending.is_empty() {
            return Ok(());
        }
        let cut = if done {
            pending.len()
        } else {
            find_last(&pending, b"\n\n")
                .map(|i| i + 2)
                .or_else(|| pending.iter().rposition(|&b| b == b'\n').map(|i| i + 1))
                .unwrap_or(pending.len())
        };
        let window: Vec<u8> = pending.drain(..cut).collect();
        // A cut inside a character moves the character's start to the next window.
        let valid = match std::str::from_utf8(&window) {
            Ok(text) => text.len(),
            Err(e) if e.error_len().is_none() && !done => e.valid_up_to(),
            Err(e) => {
                return Err(format!(
                    "{} is not UTF-8 text (byte {}): convert it to UTF-8, or leave it out",
                    shown(path),
                    offset + e.valid_up_to()
                ));
            }
        };
        let text = std::str::from_utf8(&window[..valid]).expect("checked above");
        let rest = window[valid..].to_vec();
        each(text, line)?;
        line += text.bytes().filter(|&b| b == b'\n').count();
        offset += valid;
        let mut next = rest;
        next.extend_from_slice(&pending);
        pending = next;
        if done && pending.is_empty() {
            return Ok(());
        }
    }
}

fn find_last(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// About how many chunks a text of `len` characters gives: where it has
/// no separator, each chunk starts `size - overlap` characters after the
/// one before (`size` is more than `overlap`; the splitter checked).
fn estimated_chunks(len: u64, size: usize, overlap: usize) -> u64 {
    let (size, overlap) = (size as u64, overlap as u64);
    match len {
        0 => 0,
        len if len <= size => 1,
        len => (len - overlap).div_ceil(size - overlap),
    }
}

/// Indexes the text and Markdown files under `dir`; a file that cannot be
/// read is reported and skipped, and the command then fails after the rest.
pub async fn index(
    dir: &Path,
    store: &StoreArgs,
    split: &SplitArgs,
    credentials: &Credentials,
) -> Result<Option<String>, CliError> {
    let documents = open(store, credentials, split.batch).await?;
    let splitter = RecursiveCharacterTextSplitter::new(split.chunk_size, split.chunk_overlap)
        .map_err(|e| e.to_string())?;
    let files = files(dir)?;
    // From file sizes (bytes, at least the characters): cheap, and
    // replaced by each file's count once it is split.
    let estimates: Vec<u64> = files
        .iter()
        .map(|p| {
            let len = std::fs::metadata(p).map_or(0, |m| m.len());
            estimated_chunks(len, split.chunk_size, split.chunk_overlap)
        })
        .collect();
    let estimate: u64 = estimates.iter().sum();
    // LangChain does the same, but a user who set these rarely expects it.
    if split.chunk_overlap > split.chunk_size / 2 {
        say!(
            "warning: --chunk-overlap {} is more than half of --chunk-size {}: \
             where a text has no separator, each chunk starts only {} character(s) after \
             the one before, so these files may give about {estimate} chunks (an estimate) \
             to embed; keep --chunk-overlap at most {} to avoid it",
            split.chunk_overlap,
            split.chunk_size,
            split.chunk_size - split.chunk_overlap,
            split.chunk_size / 2
        );
    }
    let bar = progress(estimate);
    let mut total = estimate;
    let (mut indexed, mut chunks, mut failed, mut empty) = (0, 0usize, Vec::new(), 0);
    for (i, path) in files.iter().enumerate() {
        let source = path
            .strip_prefix(dir)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        bar.set_message(source.clone());
        // Chunks from an earlier run of this file go first.
        documents
            .delete(&Selection::Filter(
                Filter::all().eq("source", source.as_str()),
            ))
            .await
            .map_err(|e| e.to_string())?;
        let mut batch: Vec<Document> = Vec::new();
        let mut file_chunks = 0;
        let result = windows(path, |text, first_line| {
            let document = Document::new(text).with("source", source.as_str());
            for mut chunk in split_documents(&splitter, &[document]) {
                shift_lines(&mut chunk, first_line - 1);
                batch.push(chunk);
            }
            Ok(())
        });
        // The file's estimate gives way to its count; after the last file the total is exact.
        let found = if result.is_ok() {
            batch.len() as u64
        } else {
            0
        };
        total = total - estimates[i] + found;
        bar.set_length(total);
        if i + 1 == files.len() {
            bar.set_prefix("");
        }
        // Windows are split first, then added: a huge file's chunks go in batches.
        if let Err(e) = result {
            bar.suspend(|| say!("{e}"));
            failed.push(source);
            continue;
        }
        for part in batch.chunks(split.batch.max(1) * 8) {
            documents
                .add_documents(part)
                .await
                .map_err(|e| format!("{source}: {e}"))?;
            file_chunks += part.len();
            bar.inc(part.len() as u64);
        }
        if file_chunks == 0 {
            empty += 1;
        } else {
            indexed += 1;
            chunks += file_chunks;
        }
    }
    bar.finish_and_clear();
    let summary = json!({
        "files": files.len(),
        "indexed": indexed,
        "chunks": chunks,
        "empty": empty,
        "failed": failed,
    });
    if failed.is_empty() {
        Ok(Some(crate::cli::pretty(&summary)))
    } else {
        write_stdout(&format!("{}\n", crate::cli::pretty(&summary))).map_err(CliError::Output)?;
        Err(format!(
            "{} file(s) could not be read; the others were indexed",
            failed.len()
        )
        .into())
    }
}

/// Moves a chunk's `loc.lines` down by `by` lines (its window started there).
fn shift_lines(chunk: &mut Document, by: usize) {
    if by == 0 {
        return;
    }
    if let Some(lines) = chunk
        .metadata
        .get_mut("loc")
        .and_then(|l| l.get_mut("lines"))
        .and_then(Value::as_object_mut)
    {
        for key in ["from", "to"] {
            if let Some(n) = lines.get(key).and_then(Value::as_i64) {
                lines.insert(key.into(), json!(n + by as i64));
            }
        }
    }
}

/// A progress bar of chunks stored, on standard error when it is a
/// terminal (hidden otherwise); `~` marks a total still estimated.
fn progress(estimated_chunks: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(estimated_chunks);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{prefix}{len} chunks {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix("~");
    bar
}

/// Searches the store; prints the documents found with their scores.
pub async fn query(
    text: &str,
    k: usize,
    filter: Option<Value>,
    store: &StoreArgs,
    credentials: &Credentials,
) -> Result<Option<String>, String> {
    let documents = open(
        store,
        credentials,
        nodekit::vector_store::DEFAULT_EMBEDDING_BATCH,
    )
    .await?;
    let filter = match filter {
        Some(f) => Filter::from_json(&f).map_err(|e| e.to_string())?,
        None => Filter::all(),
    };
    let found = documents
        .search(text, k, &filter)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(crate::cli::pretty(&json!(found))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cut_at_breaks_and_keep_characters_whole() {
        let dir = std::env::temp_dir().join(format!("nodekit-windows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.md");
        let para = "é".repeat(1000) + "\n\n";
        let text = para.repeat(WINDOW / para.len() * 3);
        std::fs::write(&path, &text).unwrap();
        let mut seen = String::new();
        let mut windows_seen = 0;
        windows(&path, |t, line| {
            assert!(t.len() <= 2 * WINDOW, "{}", t.len());
            // Each window starts on the line after the text before it.
            assert_eq!(line, 1 + seen.matches('\n').count());
            seen.push_str(t);
            windows_seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, text);
        assert!(windows_seen >= 3, "{windows_seen} windows");
        std::fs::write(&path, b"ok\n\xff\xfe").unwrap();
        let e = windows(&path, |_, _| Ok(())).unwrap_err();
        assert!(e.contains("is not UTF-8 text (byte 3)"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

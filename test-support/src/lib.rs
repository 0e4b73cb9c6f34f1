//! Test helpers shared by nodekit's crates (a dev-dependency only).
//!
//! - [`server`]: the address of a server a test needs (PostgreSQL, Redis,
//!   ...), from the variable `scripts/services.sh` prints. Outside CI a
//!   missing variable skips the test with a printed reason; under `CI=true`
//!   it fails the test, so CI never passes by skipping.
//! - [`unique`]: names that runs and tests do not share.
//! - [`scratch_dir`]: a folder for a test process's files, which the next
//!   test process removes once this one has ended.
//! - [`openai`]: a scripted OpenAI-compatible HTTP server on 127.0.0.1, so
//!   the client code under test is the code users run.
//! - [`embeddings`]: an OpenAI-compatible embeddings server on 127.0.0.1
//!   whose vectors are bags of words.
//! - [`Schema`]: a fresh PostgreSQL schema (with pgvector, on its server).

pub mod embeddings;
pub mod openai;
mod pg;

pub use pg::Schema;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether this run is CI's (`CI=true`), where a missing server is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// The value of `var` (a server's URL), or `None` after printing why the
/// test is skipped. Under `CI=true` a missing variable panics instead.
pub fn server(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if in_ci() => {
            panic!("{var} is not set: CI needs this server (scripts/services.sh starts it)")
        }
        _ => {
            eprintln!("skipping: {var} is not set (run `eval \"$(scripts/services.sh)\"`)");
            None
        }
    }
}

/// n8n's `postgres` credential fields for a server URL as
/// `scripts/services.sh` prints it (`postgres://user@host:port/db`, no
/// password, no TLS).
pub fn postgres_credential(url: &str) -> serde_json::Value {
    let rest = url.trim_start_matches("postgres://");
    let (user, rest) = rest.split_once('@').expect("postgres://user@host:port/db");
    let (host_port, database) = rest.split_once('/').expect("postgres://user@host:port/db");
    let (host, port) = host_port
        .split_once(':')
        .expect("postgres://user@host:port/db");
    serde_json::json!({
        "host": host, "port": port.parse::<u16>().expect("a port number"), "database": database,
        "user": user, "password": "", "ssl": "disable",
    })
}

/// A name unique to this process and call, e.g. for a table, schema or file.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{prefix}_{}_{nanos}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A folder for this test process's files (SQLite databases, packages):
/// `<temp>/nodekit-tests/<pid>`. The first call also removes the folders
/// of test processes that have ended, so runs do not pile files up in the
/// temporary folder (on Linux, where `/proc` says which processes live).
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = std::env::temp_dir().join("nodekit-tests");
        if Path::new("/proc/self").exists()
            && let Ok(entries) = std::fs::read_dir(&root)
        {
            for entry in entries.flatten() {
                let ended = entry
                    .file_name()
                    .to_str()
                    .and_then(|name| name.parse::<u32>().ok())
                    .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
                if ended {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = root.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).expect("the temporary folder is writable");
        dir
    })
}

//! A chat-history store written the way an outside author writes one: one
//! JSON line per message in a file per session. `#[chat_history]` gives it a
//! namespace, a registration and a `Debug` that hides secrets.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use nodekit::message::Message;
use nodekit::model::BoxFuture;
use nodekit::prelude::*;

/// Messages of one session in `DIR/SESSION.jsonl`.
#[chat_history(namespace = ["n8n_nodes_weather", "memory", "jsonl"])]
pub struct JsonlHistory {
    path: PathBuf,
    /// Writes go one at a time, so lines never interleave.
    lock: Mutex<()>,
}

impl JsonlHistory {
    /// The history of `session` in folder `dir` (created if missing).
    pub fn new(dir: impl Into<PathBuf>, session: &str) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        // Only a safe file name: anything else in the session id becomes `_`.
        let file: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Ok(JsonlHistory {
            path: dir.join(format!("{file}.jsonl")),
            lock: Mutex::new(()),
        })
    }

    fn failed(e: impl std::fmt::Display) -> nodekit::Error {
        nodekit::Error::Store {
            store: "JSONL file",
            message: e.to_string(),
        }
    }
}

impl ChatHistory for JsonlHistory {
    fn messages(&self) -> BoxFuture<'_, nodekit::Result<Vec<Message>>> {
        Box::pin(async move {
            let file = match std::fs::File::open(&self.path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(Self::failed(e)),
            };
            let mut out = Vec::new();
            for line in std::io::BufReader::new(file).lines() {
                let line = line.map_err(Self::failed)?;
                // A line that is not a message is skipped, like nodekit's own stores do.
                if let Ok(value) = nodekit::serde_json::from_str(&line)
                    && let Ok(m) = Message::from_json(&value)
                {
                    out.push(m);
                }
            }
            Ok(out)
        })
    }

    fn add_message<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, nodekit::Result<()>> {
        self.add_messages(std::slice::from_ref(message))
    }

    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, nodekit::Result<()>> {
        Box::pin(async move {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            let mut text = String::new();
            for m in messages {
                text.push_str(&m.to_stored().to_string());
                text.push('\n');
            }
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(Self::failed)?;
            file.write_all(text.as_bytes()).map_err(Self::failed)
        })
    }

    fn clear(&self) -> BoxFuture<'_, nodekit::Result<()>> {
        Box::pin(async move {
            match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Self::failed(e)),
                _ => Ok(()),
            }
        })
    }
}

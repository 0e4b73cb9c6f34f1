//! Agent-memory settings: n8n's `N8N_INSTANCE_AI_*` environment variables
//! with their defaults, and a builder for the same settings.
//!
//! | variable | default | setting |
//! | --- | --- | --- |
//! | `N8N_INSTANCE_AI_LAST_MESSAGES` | 20 | [`MemoryConfig::last_messages`] |
//! | `N8N_INSTANCE_AI_EMBEDDER_MODEL` | empty (semantic recall off) | [`MemoryConfig::embedder_model`] |
//! | `N8N_INSTANCE_AI_SEMANTIC_RECALL_TOP_K` | 5 | [`MemoryConfig::semantic_recall_top_k`] |
//! | `N8N_INSTANCE_AI_OBSERVER_MODEL` | `google/gemini-2.5-flash` | [`MemoryConfig::observer_model`] |
//! | `N8N_INSTANCE_AI_OBSERVER_MESSAGE_TOKENS` | 30000 | [`MemoryConfig::observer_message_tokens`] |
//! | `N8N_INSTANCE_AI_REFLECTOR_OBSERVATION_TOKENS` | 40000 | [`MemoryConfig::reflector_observation_tokens`] |
//!
//! Storage follows n8n's own database settings: with
//! `DB_TYPE=postgresdb` the memory lives in that PostgreSQL database
//! (`DB_POSTGRESDB_HOST`, `_PORT`, `_DATABASE`, `_USER`, `_PASSWORD`,
//! `_SCHEMA`); otherwise in the SQLite file `instance-ai-memory.db`.

use super::store::DEFAULT_SQLITE_PATH;
use nodekit_core::error::{Error, Result};

/// The default working-memory template.
pub const DEFAULT_TEMPLATE: &str = "# User Context
- **Name**:
- **Role**:
- **Organization**:

# Workflow Preferences
- **Preferred trigger types**:
- **Common integrations used**:
- **Workflow naming conventions**:
- **Error handling patterns**:

# Current Goals
- **Active project/task**:
- **Known issues being debugged**:
- **Pending workflow changes**:

# Instance Knowledge
- **Frequently used credentials**:
- **Key workflow IDs and names**:
- **Custom node types available**:
";

/// Where agent memory is stored.
#[derive(Clone, PartialEq, Eq)]
pub enum Storage {
    /// A SQLite file (the default).
    Sqlite {
        /// The file's path.
        path: String,
    },
    /// A PostgreSQL database.
    Postgres {
        /// `postgres://user:password@host:port/database`.
        url: String,
        /// The schema holding the memory tables (`public` when empty).
        schema: String,
    },
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Storage::Sqlite { path } => f.debug_struct("Sqlite").field("path", path).finish(),
            // The URL may hold a password.
            Storage::Postgres { schema, .. } => f
                .debug_struct("Postgres")
                .field("url", &"***")
                .field("schema", schema)
                .finish(),
        }
    }
}

/// Every agent-memory setting.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryConfig {
    /// Messages in the recent window.
    pub last_messages: usize,
    /// The embedder for semantic recall; `None` turns recall off.
    pub embedder_model: Option<String>,
    /// Similar past messages recalled per request.
    pub semantic_recall_top_k: usize,
    /// The model of the observer and the reflector.
    pub observer_model: String,
    /// Unobserved message tokens that start the observer.
    pub observer_message_tokens: usize,
    /// Observation tokens that start the reflector.
    pub reflector_observation_tokens: usize,
    /// Whether working memory is on (sub-agents run with it off).
    pub working_memory: bool,
    /// The working-memory template.
    pub template: String,
    /// Where memory is stored.
    pub storage: Storage,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            last_messages: 20,
            embedder_model: None,
            semantic_recall_top_k: 5,
            observer_model: "google/gemini-2.5-flash".into(),
            observer_message_tokens: 30_000,
            reflector_observation_tokens: 40_000,
            working_memory: true,
            template: DEFAULT_TEMPLATE.into(),
            storage: Storage::Sqlite {
                path: DEFAULT_SQLITE_PATH.into(),
            },
        }
    }
}

impl MemoryConfig {
    /// The settings from the process environment.
    pub fn from_env() -> Result<MemoryConfig> {
        MemoryConfig::from_vars(|name| std::env::var(name).ok())
    }

    /// The settings from `var` (a variable's value by name), defaults for the rest.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<MemoryConfig> {
        let mut c = MemoryConfig::default();
        let number = |name: &str, min: usize, max: usize, default: usize| -> Result<usize> {
            match var(name).map(|v| v.trim().to_owned()) {
                None => Ok(default),
                Some(v) if v.is_empty() => Ok(default),
                Some(v) => v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .ok_or_else(|| {
                        invalid(name, &v, &format!("a whole number from {min} to {max}"))
                    }),
            }
        };
        c.last_messages = number("N8N_INSTANCE_AI_LAST_MESSAGES", 1, 10_000, c.last_messages)?;
        c.semantic_recall_top_k = number(
            "N8N_INSTANCE_AI_SEMANTIC_RECALL_TOP_K",
            1,
            100,
            c.semantic_recall_top_k,
        )?;
        c.observer_message_tokens = number(
            "N8N_INSTANCE_AI_OBSERVER_MESSAGE_TOKENS",
            100,
            10_000_000,
            c.observer_message_tokens,
        )?;
        c.reflector_observation_tokens = number(
            "N8N_INSTANCE_AI_REFLECTOR_OBSERVATION_TOKENS",
            100,
            10_000_000,
            c.reflector_observation_tokens,
        )?;
        c.embedder_model = var("N8N_INSTANCE_AI_EMBEDDER_MODEL")
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        if let Some(model) = var("N8N_INSTANCE_AI_OBSERVER_MODEL")
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
        {
            c.observer_model = model;
        }
        if var("DB_TYPE").as_deref().map(str::trim) == Some("postgresdb") {
            c.storage = postgres_from_vars(&var)?;
        }
        Ok(c)
    }

    /// Sets the recent-message window.
    pub fn last_messages(mut self, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(invalid("last_messages", "0", "at least 1"));
        }
        self.last_messages = n;
        Ok(self)
    }

    /// Turns semantic recall on with this embedder model.
    pub fn embedder_model(mut self, model: impl Into<String>) -> Self {
        let model = model.into();
        self.embedder_model = (!model.trim().is_empty()).then_some(model);
        self
    }

    /// Sets how many similar messages recall returns.
    pub fn semantic_recall_top_k(mut self, k: usize) -> Result<Self> {
        if k == 0 {
            return Err(invalid("semantic_recall_top_k", "0", "at least 1"));
        }
        self.semantic_recall_top_k = k;
        Ok(self)
    }

    /// Sets the observer's and reflector's model.
    pub fn observer_model(mut self, model: impl Into<String>) -> Self {
        self.observer_model = model.into();
        self
    }

    /// Sets the observer and reflector thresholds, in tokens.
    pub fn thresholds(mut self, observer: usize, reflector: usize) -> Result<Self> {
        if observer < 100 || reflector < 100 {
            let value = format!("{observer}, {reflector}");
            return Err(invalid("thresholds", &value, "at least 100 tokens each"));
        }
        self.observer_message_tokens = observer;
        self.reflector_observation_tokens = reflector;
        Ok(self)
    }

    /// Turns working memory off, as for a stateless sub-agent.
    pub fn without_working_memory(mut self) -> Self {
        self.working_memory = false;
        self
    }

    /// Uses a custom working-memory template (checked by
    /// [`super::working_memory::check_template`]).
    pub fn template(mut self, template: impl Into<String>) -> Result<Self> {
        let template = template.into();
        super::working_memory::check_template(&template)?;
        self.template = template;
        Ok(self)
    }

    /// Stores memory in this SQLite file.
    pub fn sqlite(mut self, path: impl Into<String>) -> Self {
        self.storage = Storage::Sqlite { path: path.into() };
        self
    }

    /// Stores memory in this PostgreSQL database.
    pub fn postgres(mut self, url: impl Into<String>, schema: impl Into<String>) -> Self {
        self.storage = Storage::Postgres {
            url: url.into(),
            schema: schema.into(),
        };
        self
    }
}

fn invalid(name: &str, value: &str, expected: &str) -> Error {
    Error::InvalidSetting {
        name: name.to_owned(),
        value: nodekit_core::error::shorten(value, 60),
        expected: expected.to_owned(),
    }
}

/// n8n's PostgreSQL settings as a connection URL.
fn postgres_from_vars(var: &impl Fn(&str) -> Option<String>) -> Result<Storage> {
    let get = |name: &str, default: &str| {
        var(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let port = get("DB_POSTGRESDB_PORT", "5432");
    if port.parse::<u16>().is_err() {
        return Err(invalid("DB_POSTGRESDB_PORT", &port, "a port number"));
    }
    let enc = |s: String| nodekit_db::encode_userinfo(&s);
    let url = format!(
        "postgres://{}:{}@{}:{port}/{}",
        enc(get("DB_POSTGRESDB_USER", "postgres")),
        enc(var("DB_POSTGRESDB_PASSWORD").unwrap_or_default()),
        get("DB_POSTGRESDB_HOST", "localhost"),
        enc(get("DB_POSTGRESDB_DATABASE", "n8n")),
    );
    Ok(Storage::Postgres {
        url,
        schema: get("DB_POSTGRESDB_SCHEMA", "public"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn defaults_are_the_seeds() {
        let c = MemoryConfig::from_vars(vars(&[])).unwrap();
        assert_eq!(c, MemoryConfig::default());
        assert_eq!(c.last_messages, 20);
        assert_eq!(c.semantic_recall_top_k, 5);
        assert_eq!(c.embedder_model, None);
        assert_eq!(c.observer_model, "google/gemini-2.5-flash");
        assert_eq!(
            (c.observer_message_tokens, c.reflector_observation_tokens),
            (30_000, 40_000)
        );
        assert_eq!(
            c.storage,
            Storage::Sqlite {
                path: "instance-ai-memory.db".into()
            }
        );
    }

    #[test]
    fn variables_are_read_and_bad_values_name_the_variable() {
        let c = MemoryConfig::from_vars(vars(&[
            ("N8N_INSTANCE_AI_LAST_MESSAGES", "40"),
            ("N8N_INSTANCE_AI_EMBEDDER_MODEL", "text-embedding-3-small"),
            ("N8N_INSTANCE_AI_SEMANTIC_RECALL_TOP_K", " 3 "),
            ("N8N_INSTANCE_AI_OBSERVER_MODEL", "gpt-4o-mini"),
            ("N8N_INSTANCE_AI_OBSERVER_MESSAGE_TOKENS", "1000"),
            ("N8N_INSTANCE_AI_REFLECTOR_OBSERVATION_TOKENS", "2000"),
        ]))
        .unwrap();
        assert_eq!(c.last_messages, 40);
        assert_eq!(c.embedder_model.as_deref(), Some("text-embedding-3-small"));
        assert_eq!(c.semantic_recall_top_k, 3);
        assert_eq!(c.observer_model, "gpt-4o-mini");
        assert_eq!(c.observer_message_tokens, 1000);
        for (name, value) in [
            ("N8N_INSTANCE_AI_LAST_MESSAGES", "twenty"),
            ("N8N_INSTANCE_AI_LAST_MESSAGES", "0"),
            ("N8N_INSTANCE_AI_SEMANTIC_RECALL_TOP_K", "-1"),
            ("N8N_INSTANCE_AI_OBSERVER_MESSAGE_TOKENS", "1e9"),
        ] {
            let e = MemoryConfig::from_vars(vars(&[(name, value)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(name) && e.contains(value), "{e}");
        }
    }

    #[test]
    fn n8n_postgres_settings_choose_postgres() {
        let c = MemoryConfig::from_vars(vars(&[
            ("DB_TYPE", "postgresdb"),
            ("DB_POSTGRESDB_HOST", "db.internal"),
            ("DB_POSTGRESDB_USER", "n8n"),
            ("DB_POSTGRESDB_PASSWORD", "p@ss:word"),
            ("DB_POSTGRESDB_SCHEMA", "memory"),
        ]))
        .unwrap();
        assert_eq!(
            c.storage,
            Storage::Postgres {
                url: "postgres://n8n:p%40ss%3Aword@db.internal:5432/n8n".into(),
                schema: "memory".into()
            }
        );
        assert!(!format!("{c:?}").contains("word"), "Debug hides the URL");
        let e = MemoryConfig::from_vars(vars(&[
            ("DB_TYPE", "postgresdb"),
            ("DB_POSTGRESDB_PORT", "x"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("DB_POSTGRESDB_PORT"));
    }
}

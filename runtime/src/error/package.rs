//! Why the n8n community package cannot be written: [`PackageError`].

/// The n8n community package cannot be written: what is wrong and what to
/// do, and the file system's error when one caused it.
#[derive(Debug, thiserror::Error)]
#[error("n8n package: {what}")]
pub struct PackageError {
    what: String,
    #[source]
    source: Option<std::io::Error>,
}

impl PackageError {
    /// A refusal that says `what` is wrong.
    pub fn new(what: impl Into<String>) -> PackageError {
        PackageError {
            what: what.into(),
            source: None,
        }
    }

    /// `what` failed with the file system's error `source`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> PackageError {
        PackageError {
            what: what.into(),
            source: Some(source),
        }
    }

    /// What is wrong, and what to do.
    pub fn what(&self) -> &str {
        &self.what
    }
}

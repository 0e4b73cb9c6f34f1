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

impl From<PackageError> for nodekit_core::Error {
    fn from(e: PackageError) -> Self {
        nodekit_core::Error::other(e)
    }
}

#[cfg(test)]
mod tests {
    use super::PackageError;

    #[test]
    fn a_package_error_keeps_the_file_systems_error() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = nodekit_core::Error::from(PackageError::io("cannot write `out`: denied", io));
        assert_eq!(e.to_string(), "n8n package: cannot write `out`: denied");
        assert!(e.downcast_ref::<PackageError>().is_some());
        let source = std::error::Error::source(&e).expect("the I/O error");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an I/O error");
        assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
    }
}

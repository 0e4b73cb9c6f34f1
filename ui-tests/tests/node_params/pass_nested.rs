//! A collection inside a collection, with defaults applied at every level.
use nodekit::prelude::*;
use serde_json::json;

/// Inner.
#[derive(Debug, NodeParams)]
pub struct Inner {
    /// Depth.
    #[param(default = 1)]
    depth: u32,
}

/// Outer.
#[derive(Debug, NodeParams)]
pub struct Outer {
    /// Inner settings.
    #[param(collection)]
    inner: Inner,
    /// Optional inner settings.
    #[param(collection)]
    maybe: Option<Inner>,
}

fn main() {
    let o = Outer::from_params(&json!({}), "test").unwrap();
    assert_eq!(o.inner.depth, 1);
    assert!(o.maybe.is_none());
    let e = Outer::from_params(&json!({"inner": {"depth": "deep"}}), "test").unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `test`: parameter `inner.depth` must be an integer (u32, at least 0), but it is a string (\"deep\")"
    );
    assert_eq!(Outer::properties()[0].options.as_ref().unwrap().len(), 1);
}

use nodekit::prelude::*;

/// Declared, but the trait is never implemented.
#[vector_store(namespace = ["example", "vectors", "nothing"])]
pub struct Forgotten {
    url: String,
}

fn main() {}

use nodekit::prelude::*;

#[vector_store]
pub struct NoNamespace;

#[vector_store(namespace = ["ok", "not ok"], namspace = ["x"])]
pub struct BadPart;

fn main() {}

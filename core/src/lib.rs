//! The contract of nodekit: what a node is, what it declares and what it
//! is handed. Providers, stores and hosts are crates built on it; users
//! depend on [`nodekit`](https://docs.rs/nodekit), which re-exports it
//! under the same paths.
//!
//! - the node traits and both contexts ([`node`]), their descriptions
//!   ([`description`]), parameters ([`params`]) and `$fromAI` arguments
//!   ([`from_ai`]), the `$json` expressions in them ([`expression`]), and
//!   the catalog ([`registry`]);
//! - messages ([`message`]) and the traits of what sub-nodes supply:
//!   [`model::ChatModel`], [`embed::Embedder`], [`memory::Memory`],
//!   [`history::ChatHistory`], [`tool::Tool`],
//!   [`vector_store::VectorStore`], [`text_splitter::TextSplitter`] and
//!   [`document::DocumentLoader`];
//! - the run log ([`run_log`]) and the errors ([`error`]).
//!
//! It names no database, HTTP or protocol driver.

// Lets the crate use its own macros, whose expansions name `::nodekit`.
extern crate self as nodekit;

pub mod credential;
pub mod description;
pub mod document;
pub mod embed;
pub mod error;
pub mod event;
pub mod expression;
pub mod from_ai;
pub mod history;
pub mod host;
pub mod memory;
pub mod message;
pub mod model;
pub mod node;
pub mod params;
pub mod process_local;
pub mod registry;
pub mod run_log;
pub mod run_scope;
pub mod text_splitter;
pub mod tool;
pub mod vector_store;

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;

pub use error::{Error, Result};
pub use node::Node;
pub use nodekit_macros::NodeParams;
pub use params::Params;
pub use registry::Catalog;
pub use schemars;
pub use serde;
pub use serde_json;

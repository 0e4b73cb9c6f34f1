//! nodekit nodes inside a real n8n.
//!
//! [`package`] writes an n8n community node package for the nodes of a
//! [`Catalog`](nodekit_core::Catalog): one JavaScript shim per node, with the
//! catalog's description, and the program itself as the shims' back end.
//! The shims talk to that program through [`bridge`]: a long-lived sidecar
//! process (`nodekit bridge`) that reads one JSON request per line on
//! standard input and answers one JSON line each on standard output.
//!
//! Why a sidecar and not a native addon: a panic, abort or endless loop in
//! a Rust node stays in the sidecar, which n8n's side times out, kills and
//! restarts, so a faulty node becomes a node error and never takes n8n down;
//! the package needs no Node headers, no compiler and no ABI match with
//! n8n's Node.js; and one program serves both `nodekit` commands and n8n.
//! The cost is one JSON round trip over a pipe per call (see BENCHMARKS.md).

pub mod bridge;
mod error;
pub use error::PackageError;
pub mod package;
pub mod platform;

//! nodekit's built-in nodes. Linking this crate registers them in the
//! program's [`nodekit::Catalog`].

#[cfg(feature = "cli")]
pub mod cli;
pub mod credentials;
pub mod nodes;

/// Forces the linker to keep this crate's node registrations; call it (or
/// name any item of this crate) from a binary that should list them.
pub fn link() {}

/// The README's Rust blocks, compiled and run as doc tests of this crate
/// (which has every feature), so they cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

// The guides' Rust blocks (`runtime/docs/`), compiled and run here for the
// same reason: they use the built-in nodes and every feature.
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/authoring.md")]
pub struct AuthoringGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/models.md")]
pub struct ModelsGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/memory.md")]
pub struct MemoryGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/sql_tools.md")]
pub struct SqlToolsGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/agent_memory.md")]
pub struct AgentMemoryGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/vector_stores.md")]
pub struct VectorStoresGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/n8n.md")]
pub struct N8nGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/mcp.md")]
pub struct McpGuide;
#[cfg(doctest)]
#[doc = include_str!("../../runtime/docs/serve.md")]
pub struct ServeGuide;

//! nodekit's integration tests, in one test program: each module below was
//! a program of its own, and one link instead of eleven saves most of a
//! gigabyte of debug binaries. Modules of optional parts build when their
//! features are on. The catalog's tests (`tests/catalog.rs`) stay a program
//! of their own: they see every node registered in their process.

mod in_process_history;
mod message;
mod params;
mod tool;

#[cfg(all(feature = "agent", feature = "openai"))]
mod agent;
#[cfg(feature = "agent-memory")]
mod agent_memory;
#[cfg(all(feature = "agent-memory", feature = "openai"))]
mod agent_memory_observe;
#[cfg(all(feature = "agent-memory", feature = "openai"))]
mod agent_memory_recall;
#[cfg(all(feature = "sqlite", feature = "postgres", feature = "redis"))]
mod history;
#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "agent-memory")]
mod stores;
#[cfg(all(feature = "vector-store", feature = "openai"))]
mod vector_store;

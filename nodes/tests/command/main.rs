//! The `nodekit` program and the built-in nodes end to end, in one test
//! program: each module below was a test program of its own, and one link
//! instead of nine saves about a gigabyte of debug binaries.

mod agent_memory_run;
mod cli;
mod mcp;
mod memory_cli;
mod new;
#[cfg(all(feature = "anthropic", feature = "gemini", feature = "ollama"))]
mod providers;
mod run;
mod serve;
mod sql_example;
mod sql_tools;
mod vector_stores;

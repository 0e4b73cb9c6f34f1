//! The built-in node types, one module each; a crate feature adds each
//! that needs more than authoring (see the crate's Cargo.toml).

#[cfg(feature = "agent")]
pub mod agent;
pub mod document_default_data_loader;
#[cfg(feature = "openai")]
pub mod embeddings_openai_compatible;
#[cfg(feature = "anthropic")]
pub mod lm_chat_anthropic;
#[cfg(feature = "gemini")]
pub mod lm_chat_google_gemini;
#[cfg(feature = "openai")]
pub mod lm_chat_openai_compatible;
#[cfg(feature = "mcp-client")]
pub mod mcp_client_tool;
#[cfg(feature = "_agent-memory")]
pub mod memory_agent;
pub mod memory_buffer_window;
#[cfg(feature = "postgres")]
pub mod memory_postgres_chat;
#[cfg(feature = "redis")]
pub mod memory_redis_chat;
#[cfg(feature = "sqlite")]
pub mod memory_sqlite_chat;
#[cfg(feature = "_sql-tools")]
pub mod sql_tools;
pub mod text_splitters;
#[cfg(feature = "http-request")]
pub mod tool_http_request;
pub mod tool_think;
pub mod vector_store_in_memory;
#[cfg(feature = "vector-store-postgres")]
pub mod vector_store_pgvector;
#[cfg(feature = "vector-store-sqlite")]
pub mod vector_store_sqlite;

//! The built-in node types, one module each.

pub mod agent;
pub mod document_default_data_loader;
pub mod embeddings_openai_compatible;
pub mod lm_chat_openai_compatible;
pub mod mcp_client_tool;
pub mod memory_agent;
pub mod memory_buffer_window;
pub mod memory_postgres_chat;
pub mod memory_redis_chat;
pub mod memory_sqlite_chat;
pub mod sql_tools;
pub mod text_splitters;
pub mod tool_http_request;
pub mod tool_think;
pub mod vector_store_in_memory;
pub mod vector_store_pgvector;
pub mod vector_store_sqlite;

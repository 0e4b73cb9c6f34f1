//! Procedural macros of nodekit. Use them through the `nodekit` crate, which
//! re-exports them; generated code names only `::nodekit` paths.
//!
//! The entry points here are thin shims; the work happens on
//! `proc_macro2` token streams in three stages, so it can be unit-tested
//! without a compiler session: `ast` and `attr` read the item and its
//! attributes (every key from the tables in `symbol`), `valid` checks them,
//! and `expand` writes the code. Errors are collected in a `ctxt::Ctxt` and
//! reported together, each spanned at the user's token.

mod ast;
mod attr;
mod case;
mod ctxt;
#[cfg(feature = "db-tool")]
mod db_tool;
mod expand;
#[cfg(feature = "db-tool")]
mod sql_template;
mod store_type;
mod symbol;
mod valid;

use proc_macro::TokenStream;

/// Declares an n8n-style node; see the `nodekit` crate documentation for every option.
#[proc_macro_attribute]
pub fn ai_node(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::ai_node(args.into(), item.into()).into()
}

/// Declares a SQL tool node (a fixed template or one operation); see `nodekit::sql`
/// and the `nodekit` crate documentation for every option.
#[cfg(feature = "db-tool")]
#[proc_macro_attribute]
pub fn db_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    db_tool::db_tool(args.into(), item.into()).into()
}

/// Declares a chat-history store; see `nodekit::history` for what it generates.
#[proc_macro_attribute]
pub fn chat_history(args: TokenStream, item: TokenStream) -> TokenStream {
    store_type::store_type(&store_type::CHAT_HISTORY, args.into(), item.into()).into()
}

/// Declares a vector store; see `nodekit::vector_store` for what it generates.
#[proc_macro_attribute]
pub fn vector_store(args: TokenStream, item: TokenStream) -> TokenStream {
    store_type::store_type(&store_type::VECTOR_STORE, args.into(), item.into()).into()
}

/// Derives `nodekit::Params` for a struct used as a collection parameter.
#[proc_macro_derive(NodeParams, attributes(param, from_ai))]
pub fn node_params(item: TokenStream) -> TokenStream {
    expand::node_params(item.into()).into()
}

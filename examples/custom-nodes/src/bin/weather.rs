//! The whole `nodekit` command line for this crate's nodes (and nodekit's
//! built-in ones, such as the agent and the chat model): `tool-call`,
//! `run`, `chat`, `catalog`, `package`, ...
//!
//! ```sh
//! cargo run -p custom-nodes --features cli --bin weather -- tool-call weatherForecastTool --args '{"city": "Berlin"}'
//! ```

fn main() -> std::process::ExitCode {
    // This crate's nodes are in the catalog only if the binary links it.
    custom_nodes::link();
    nodekit_nodes::cli::main()
}

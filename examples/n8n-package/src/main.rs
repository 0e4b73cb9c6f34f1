//! This crate's nodes (and nodekit's built-in ones) behind the `nodekit`
//! command line. Package them for n8n:
//!
//! ```text
//! cargo run -p n8n-package -- package --out /tmp/n8n-nodes-text --name n8n-nodes-text \
//!     --node textStatsTool --node faultTool
//! ```
//!
//! and point n8n's `N8N_CUSTOM_EXTENSIONS` at the folder (see the guide
//! `runtime/docs/n8n.md`).

fn main() -> std::process::ExitCode {
    n8n_package::link();
    nodekit_nodes::cli::main()
}

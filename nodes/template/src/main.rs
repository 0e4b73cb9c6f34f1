//! `{{name}}`: nodekit's command line with {{name}}'s nodes
//! (`{{name}} catalog`, `{{name}} tool-call wordCountTool --args '{"text": "a b a"}'`,
//! `{{name}} mcp serve WORKFLOW`).

fn main() -> std::process::ExitCode {
    {{crate}}::link();
    nodekit_nodes::link();
    nodekit_nodes::cli::main()
}

//! The `nodekit` command (see [`nodekit_nodes::cli`]).

fn main() -> std::process::ExitCode {
    nodekit_nodes::cli::main()
}

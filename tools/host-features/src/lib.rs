//! No macros: this crate only names the features of syn 2 and syn 3 that
//! the workspace's proc macros use (see its Cargo.toml), so that a check
//! of nodekit with one feature beside it compiles the proc macros once.

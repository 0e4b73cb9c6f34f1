//! What nodekit's macros accept, and the exact errors for what they refuse.
//! Refresh the `.stderr` files with `TRYBUILD=overwrite cargo test -p nodekit-ui-tests`.
//!
//! One `TestCases` for every macro: trybuild then builds all the cases in
//! one cargo run, on both cores, instead of one run per macro.

#[test]
fn macros() {
    let t = trybuild::TestCases::new();
    for dir in [
        "ai_node",
        "node_params",
        "chat_history",
        "vector_store",
        "db_tool",
    ] {
        t.pass(format!("tests/{dir}/pass_*.rs"));
        t.compile_fail(format!("tests/{dir}/fail_*.rs"));
    }
}

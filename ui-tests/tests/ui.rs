//! The exact errors for what nodekit's macros refuse. What they accept is
//! in the `pass_*.rs` files, which are this crate's test programs (see its
//! Cargo.toml). Refresh the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p nodekit-ui-tests`.
//!
//! One `TestCases` for every macro: trybuild then checks all the cases in
//! one cargo run, and with no case to run, in check mode only.

/// `scripts/test.sh` runs this test beside the others and skips it by this
/// name in their run.
#[test]
fn compile_fail_cases() {
    let t = trybuild::TestCases::new();
    for dir in [
        "ai_node",
        "node_params",
        "chat_history",
        "vector_store",
        "db_tool",
    ] {
        t.compile_fail(format!("tests/{dir}/fail_*.rs"));
    }
}

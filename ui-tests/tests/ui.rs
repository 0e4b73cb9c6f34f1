//! What nodekit's macros accept, and the exact errors for what they refuse.
//! Refresh the `.stderr` files with `TRYBUILD=overwrite cargo test -p nodekit-ui-tests`.

#[test]
fn ai_node() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ai_node/pass_*.rs");
    t.compile_fail("tests/ai_node/fail_*.rs");
}

#[test]
fn node_params() {
    let t = trybuild::TestCases::new();
    t.pass("tests/node_params/pass_*.rs");
    t.compile_fail("tests/node_params/fail_*.rs");
}

#[test]
fn chat_history() {
    let t = trybuild::TestCases::new();
    t.pass("tests/chat_history/pass_*.rs");
    t.compile_fail("tests/chat_history/fail_*.rs");
}

#[test]
fn vector_store() {
    let t = trybuild::TestCases::new();
    t.pass("tests/vector_store/pass_*.rs");
    t.compile_fail("tests/vector_store/fail_*.rs");
}

#[test]
fn db_tool() {
    let t = trybuild::TestCases::new();
    t.pass("tests/db_tool/pass_*.rs");
    t.compile_fail("tests/db_tool/fail_*.rs");
}

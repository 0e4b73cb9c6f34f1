//! `nodekit new`: the crate it makes builds, and its test passes.

use std::path::Path;
use std::process::Command;

use super::cli::{nodekit, stderr};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_new_crate_builds_and_its_node_answers() {
    let dir = nodekit_test_support::scratch_dir().join(nodekit_test_support::unique("new"));
    let crate_dir = dir.join("word-count");
    let out = nodekit(&["new", "word-count", "--path", crate_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text(&out.stdout).contains("cargo test"),
        "{}",
        text(&out.stdout)
    );
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap();
    assert!(
        manifest.contains(&format!("path = \"{}\"", root.join("runtime").display())),
        "{manifest}"
    );
    assert!(crate_dir.join("Cargo.lock").is_file());

    // Its own test, and its program, built as a user builds them (in this
    // workspace's target folder, so that what the tests built is reused).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let test = Command::new(&cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        test.status.success(),
        "{}\n{}",
        text(&test.stdout),
        text(&test.stderr)
    );
    assert!(
        text(&test.stdout).contains("2 passed"),
        "{}",
        text(&test.stdout)
    );
    let call = Command::new(target.join("debug/word-count"))
        .args([
            "tool-call",
            "word-count.wordCountTool",
            "--args",
            r#"{"text": "b a b"}"#,
        ])
        .output()
        .expect("the new program runs");
    assert!(call.status.success(), "{}", stderr(&call));
    let answer: serde_json::Value = serde_json::from_slice(&call.stdout).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"words": 3, "top": [["b", 2], ["a", 1]]})
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn new_refuses_a_bad_name_and_a_folder_in_use() {
    let out = nodekit(&["new", "Word Count"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not a crate name"),
        "{}",
        stderr(&out)
    );

    let dir = nodekit_test_support::scratch_dir().join(nodekit_test_support::unique("used"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "mine").unwrap();
    let out = nodekit(&["new", "demo", "--path", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not empty"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
        "mine"
    );
}

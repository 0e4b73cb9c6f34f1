//! The author's own store works as nodekit memory, and its Debug hides nothing it should not show.

use std::sync::Arc;

use custom_nodes::jsonl_history::JsonlHistory;
use nodekit::history::{ChatHistory, HistoryNamespace, find_history_type};
use nodekit::memory::{ConversationMemory, Memory, MemoryOptions};

#[tokio::test]
async fn jsonl_history_is_memory() {
    let dir =
        nodekit_test_support::scratch_dir().join(format!("jsonl-history-{}", std::process::id()));
    let history = Arc::new(JsonlHistory::new(&dir, "user/1").unwrap());
    let memory = ConversationMemory::new(MemoryOptions::buffer_window(history.clone(), 1));
    memory.save("hi", "hello").await.unwrap();
    memory.save("how are you?", "fine").await.unwrap();
    let window: Vec<String> = memory
        .load()
        .await
        .unwrap()
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(window, ["how are you?", "fine"]);
    assert_eq!(history.messages().await.unwrap().len(), 4);
    assert!(dir.join("user_1.jsonl").exists());
    assert_eq!(
        JsonlHistory::NAMESPACE,
        ["n8n_nodes_weather", "memory", "jsonl"]
    );
    assert!(find_history_type(&["n8n_nodes_weather", "memory", "jsonl"]).is_some());
    assert!(
        format!("{history:?}").starts_with(
            "JsonlHistory { namespace: [\"n8n_nodes_weather\", \"memory\", \"jsonl\"]"
        )
    );
    history.clear().await.unwrap();
    assert!(history.messages().await.unwrap().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

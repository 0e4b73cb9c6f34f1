//! A custom store: namespace, registration, a Debug that hides secrets, and use as memory.
use std::sync::{Arc, Mutex};

use nodekit::history::{ChatHistory, HistoryNamespace, find_history_type};
use nodekit::memory::{ConversationMemory, Memory, MemoryOptions};
use nodekit::message::Message;
use nodekit::model::BoxFuture;
use nodekit::prelude::*;

/// Not `Debug`: shown by its type name.
pub struct Client;

#[chat_history(namespace = ["example", "memory", "vec"])]
pub struct VecHistory {
    session_id: String,
    api_key: String,
    #[secret]
    connection_string: String,
    client: Client,
    messages: Mutex<Vec<Message>>,
}

impl ChatHistory for VecHistory {
    fn messages(&self) -> BoxFuture<'_, nodekit::Result<Vec<Message>>> {
        let m = self.messages.lock().unwrap().clone();
        Box::pin(async move { Ok(m) })
    }
    fn add_message<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, nodekit::Result<()>> {
        self.messages.lock().unwrap().push(message.clone());
        Box::pin(async { Ok(()) })
    }
    fn clear(&self) -> BoxFuture<'_, nodekit::Result<()>> {
        self.messages.lock().unwrap().clear();
        Box::pin(async { Ok(()) })
    }
}

fn main() {
    assert_eq!(VecHistory::NAMESPACE, ["example", "memory", "vec"]);
    assert_eq!(
        find_history_type(&["example", "memory", "vec"])
            .unwrap()
            .type_name,
        "VecHistory"
    );
    let h = VecHistory {
        session_id: "s1".into(),
        api_key: "sk-should-not-show".into(),
        connection_string: "postgres://u:pw@h/db".into(),
        client: Client,
        messages: Mutex::new(Vec::new()),
    };
    let shown = format!("{h:?}");
    assert!(
        shown.contains("\"s1\"") && shown.contains("Client>"),
        "{shown}"
    );
    assert!(
        !shown.contains("sk-should-not-show") && !shown.contains("pw@"),
        "{shown}"
    );
    let memory = ConversationMemory::new(MemoryOptions::buffer_window(Arc::new(h), 1));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        memory.save("hi", "hello").await.unwrap();
        memory.save("again", "yes").await.unwrap();
        let loaded = memory.load().await.unwrap();
        assert_eq!(
            loaded.iter().map(Message::text).collect::<Vec<_>>(),
            ["again", "yes"]
        );
    });
}

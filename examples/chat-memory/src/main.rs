//! Conversation memory: an agent whose conversation is kept in a SQLite
//! chat history (the table n8n's SQLite memory uses, each message in
//! LangChain's stored form), so that each run of the program continues the
//! one before.
//!
//! ```text
//! cargo run -p chat-memory -- chat.db alice "Hi, I am Alice."
//! cargo run -p chat-memory -- chat.db alice "What did I say first?"
//! ```
//!
//! The model here is a stand-in that answers from what the memory shows
//! it, so the example runs without a key; an agent of one's own takes any
//! [`ChatModel`], for example `nodekit::model::openai::OpenAiChatModel`.

use std::process::ExitCode;
use std::sync::Arc;

use nodekit::agent::{Agent, AgentOptions};
use nodekit::history::sqlite::SqliteChatHistory;
use nodekit::memory::{ConversationMemory, MemoryOptions};
use nodekit::message::{Message, Role};
use nodekit::model::ChatModel;
use nodekit::model::custom::CustomChatModel;

/// How many earlier turns (a question and its answer) the model is shown.
const WINDOW: usize = 5;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [database, session, message] = args.as_slice() else {
        eprintln!("usage: chat-memory DATABASE SESSION MESSAGE");
        return ExitCode::FAILURE;
    };
    match chat(database, session, message).await {
        Ok(answer) => {
            println!("{answer}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("chat-memory: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One turn of `session`'s conversation, kept in the SQLite file `database`.
async fn chat(database: &str, session: &str, message: &str) -> nodekit::Result<String> {
    let history = SqliteChatHistory::open(database, "chat_histories", session).await?;
    let memory = ConversationMemory::new(MemoryOptions::buffer_window(Arc::new(history), WINDOW));
    let agent = Agent::new(recalling_model(), Vec::new(), AgentOptions::default())?
        .with_memory(Arc::new(memory));
    let answer = agent.run(message, None).await?;
    Ok(answer.output.as_str().unwrap_or_default().to_owned())
}

/// A model that says what the conversation shows it: how many of the
/// person's messages, and the first of them.
fn recalling_model() -> Arc<dyn ChatModel> {
    Arc::new(CustomChatModel::new("recall", |messages, _| async move {
        let said: Vec<String> = messages
            .iter()
            .filter(|m| m.role == Role::Human)
            .map(Message::text)
            .collect();
        Ok(Message::ai(match said.as_slice() {
            [] | [_] => "Nice to meet you.".to_owned(),
            [first, ..] => format!("You have said {} things; first: \"{first}\"", said.len()),
        }))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nodekit::history::ChatHistory;

    #[tokio::test]
    async fn each_run_continues_the_conversation_before_it() {
        let dir = std::env::temp_dir().join(format!("chat-memory-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let database = dir.join("chat.db");
        let database = database.to_str().unwrap();

        assert_eq!(
            chat(database, "alice", "Hi, I am Alice.").await.unwrap(),
            "Nice to meet you."
        );
        let answer = chat(database, "alice", "What did I say first?")
            .await
            .unwrap();
        assert_eq!(answer, "You have said 2 things; first: \"Hi, I am Alice.\"");
        // Another session starts afresh.
        assert_eq!(
            chat(database, "bob", "Hello.").await.unwrap(),
            "Nice to meet you."
        );

        // The stored conversation is LangChain's, as n8n reads it.
        let stored = SqliteChatHistory::open(database, "chat_histories", "alice")
            .await
            .unwrap();
        let messages = stored.messages().await.unwrap();
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[3].text(), answer);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

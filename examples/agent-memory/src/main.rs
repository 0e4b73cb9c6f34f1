//! Agent memory: what an agent learns about a user (its working memory, a
//! Markdown document it rewrites with the `updateWorkingMemory` tool)
//! reaches every later conversation of that user, while each
//! conversation's messages stay in their own thread.
//!
//! ```text
//! cargo run -p agent-memory -- memory.db ada monday "My name is Ada."
//! cargo run -p agent-memory -- memory.db ada tuesday "Who am I?"
//! ```
//!
//! The model here is a stand-in that calls the tool and reads the memory
//! as a model would, so the example runs without a key; an agent of one's
//! own takes any [`ChatModel`].

use std::process::ExitCode;
use std::sync::Arc;

use nodekit::agent::{Agent, AgentOptions};
use nodekit::agent_memory::{MemoryConfig, Store, ThreadMemory};
use nodekit::message::{Message, Role, ToolCall};
use nodekit::model::ChatModel;
use nodekit::model::custom::CustomChatModel;
use nodekit::serde_json::json;

/// What the agent keeps about each user.
const TEMPLATE: &str = "# User\n- **Name**:\n";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [database, user, thread, message] = args.as_slice() else {
        eprintln!("usage: agent-memory DATABASE USER THREAD MESSAGE");
        return ExitCode::FAILURE;
    };
    match chat(database, user, thread, message).await {
        Ok(answer) => {
            println!("{answer}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-memory: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One turn of `user`'s conversation `thread`, kept in the SQLite file `database`.
async fn chat(database: &str, user: &str, thread: &str, message: &str) -> nodekit::Result<String> {
    let store = Store::open_sqlite(database).await?;
    let config = MemoryConfig::default().template(TEMPLATE)?;
    let memory = ThreadMemory::new(store, config, user, thread).await?;
    // The memory brings its tools (`updateWorkingMemory`, `updatePlan`).
    let agent = Agent::new(stand_in_model(), Vec::new(), AgentOptions::default())?
        .with_memory(Arc::new(memory));
    let answer = agent.run(message, None).await?;
    Ok(answer.output.as_str().unwrap_or_default().to_owned())
}

/// A model that remembers a name it is told with the tool, and answers
/// "Who am I?" from the working memory in its instructions.
fn stand_in_model() -> Arc<dyn ChatModel> {
    Arc::new(CustomChatModel::new("stand-in", |messages, _| async move {
        let last = messages.last().expect("the agent sends the input");
        if last.role == Role::Tool {
            return Ok(Message::ai("I will remember that."));
        }
        let input = last.text();
        if let Some(name) = input.strip_prefix("My name is ") {
            let memory = TEMPLATE.replace(
                "**Name**:",
                &format!("**Name**: {}", name.trim_end_matches('.')),
            );
            let mut call = Message::ai("");
            call.tool_calls.push(ToolCall {
                id: "call-1".into(),
                name: "updateWorkingMemory".into(),
                args: json!({ "memory": memory }),
            });
            return Ok(call);
        }
        let instructions: String = messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(Message::text)
            .collect();
        let name = instructions
            .lines()
            .find_map(|line| line.strip_prefix("- **Name**: "))
            .map(str::trim);
        Ok(Message::ai(match name {
            Some(name) => format!("You are {name}."),
            None => "I don't know you yet.".to_owned(),
        }))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_the_agent_learns_reaches_the_users_next_conversation() {
        let dir = std::env::temp_dir().join(format!("agent-memory-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let database = dir.join("memory.db");
        let database = database.to_str().unwrap();

        assert_eq!(
            chat(database, "ada", "monday", "Who am I?").await.unwrap(),
            "I don't know you yet."
        );
        assert_eq!(
            chat(database, "ada", "monday", "My name is Ada.")
                .await
                .unwrap(),
            "I will remember that."
        );
        // Another conversation of the same user knows; another user does not.
        assert_eq!(
            chat(database, "ada", "tuesday", "Who am I?").await.unwrap(),
            "You are Ada."
        );
        assert_eq!(
            chat(database, "grace", "wednesday", "Who am I?")
                .await
                .unwrap(),
            "I don't know you yet."
        );

        // The thread kept the whole turn: the input, the tool call, its result and the answer.
        let store = Store::open_sqlite(database).await.unwrap();
        assert_eq!(store.message_count("ada", "monday").await.unwrap(), 2 + 4);
        let saved = store.working_memory("ada").await.unwrap().unwrap();
        assert!(saved.content.contains("**Name**: Ada"), "{}", saved.content);
        store.close().await;
        std::fs::remove_dir_all(dir).unwrap();
    }
}

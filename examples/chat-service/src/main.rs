//! A chat service: an n8n workflow (Chat Trigger, AI Agent, a chat model
//! and Simple Memory) served over HTTP by a program of one's own, as
//! `nodekit serve workflow.json` serves it. The chat model is a node of
//! this crate, so the example runs without a key.
//!
//! ```text
//! cargo run -p chat-service -- 127.0.0.1:8080
//! curl -s http://127.0.0.1:8080/webhook/7d3c2b1a-0000-4000-8000-00000000c4a7/chat \
//!   -H 'content-type: application/json' \
//!   -d '{"action": "sendMessage", "sessionId": "s1", "chatInput": "Hello"}'
//! ```
//!
//! The same agent answers OpenAI clients at `/v1/chat/completions`.

use std::process::ExitCode;
use std::sync::Arc;

use nodekit::Catalog;
use nodekit::message::{Message, Role};
use nodekit::model::custom::CustomChatModel;
use nodekit::node::Credentials;
use nodekit::prelude::*;
use nodekit::serve::{ChatServer, ServeOptions};
use nodekit::workflow::Workflow;

/// The workflow, as n8n exports it.
const WORKFLOW: &str = include_str!("../workflow.json");

/// A chat model that repeats the person's message and counts the
/// conversation's messages it was shown (memory included).
#[ai_node(name = "lmChatParrot", display_name = "Parrot Chat Model", output = chat_model)]
pub struct LmChatParrot {
    /// What each answer starts with.
    #[param(default = "You said")]
    prefix: String,
}

impl SupplyData for LmChatParrot {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let model = CustomChatModel::new("parrot", move |messages, _| {
            let prefix = self.prefix.clone();
            async move {
                let said: Vec<String> = messages
                    .iter()
                    .filter(|m| m.role == Role::Human)
                    .map(Message::text)
                    .collect();
                let last = said.last().cloned().unwrap_or_default();
                Ok(Message::ai(format!(
                    "{prefix}: {last} (message {} of this chat)",
                    said.len()
                )))
            }
        });
        Ok(ctx.create_chat_model(model)?.into())
    }
}

/// The server for the workflow; its nodes come from the global catalog.
fn server() -> nodekit::Result<ChatServer> {
    nodekit_nodes::link();
    let workflow = Workflow::from_json(WORKFLOW)?;
    ChatServer::new(
        workflow,
        Catalog::global(),
        Arc::new(Credentials::new()),
        ServeOptions::default(),
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let served = async {
        let server = server()?;
        let listener = nodekit::serve::bind(&addr).await?;
        let path = server.chat_trigger().map(|t| t.path()).unwrap_or_default();
        eprintln!("chat-service: chat at http://{addr}{path}");
        server
            .serve(listener, async {
                tokio::signal::ctrl_c().await.ok();
            })
            .await
    };
    match served.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chat-service: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nodekit::serde_json::{Value, json};

    #[tokio::test]
    async fn the_agent_answers_in_n8ns_chat_protocol_and_remembers_the_session() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = server().unwrap();
        let chat = format!("{base}{}", server.chat_trigger().unwrap().path());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve(listener, async {
            stopped.await.ok();
        }));

        let client = nodekit_http::http_client().build().unwrap();
        let send = |session: &'static str, text: &'static str| {
            let request = client
                .post(&chat)
                .json(&json!({"action": "sendMessage", "sessionId": session, "chatInput": text}));
            async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
        };
        assert_eq!(
            send("ada", "Hello").await,
            json!({"output": "You said: Hello (message 1 of this chat)"})
        );
        assert_eq!(
            send("ada", "Again").await,
            json!({"output": "You said: Again (message 2 of this chat)"})
        );
        // Another session has a memory of its own.
        assert_eq!(
            send("grace", "Hi").await,
            json!({"output": "You said: Hi (message 1 of this chat)"})
        );

        // The same agent, as an OpenAI client calls it.
        let completion: Value = client
            .post(format!("{base}/v1/chat/completions"))
            .json(&json!({"model": "parrot", "messages": [{"role": "user", "content": "Hey"}]}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let content = &completion["choices"][0]["message"]["content"];
        assert_eq!(
            content, "You said: Hey (message 1 of this chat)",
            "{completion}"
        );

        stop.send(()).unwrap();
        serving.await.unwrap().unwrap();
    }
}

//! The in-process sessions are bounded: by count (least recently used
//! first) and by idle time. Its own test binary: the limits are global.

use std::time::Duration;

use nodekit::history::{ChatHistory, InProcessHistory};
use nodekit::message::Message;

async fn texts(h: &InProcessHistory) -> Vec<String> {
    h.messages()
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect()
}

#[tokio::test]
async fn sessions_are_forgotten_past_the_limits() {
    InProcessHistory::set_limits(2, Duration::from_secs(3600));
    for id in ["a", "b"] {
        InProcessHistory::session(id)
            .add_message(&Message::human(id))
            .await
            .unwrap();
    }
    // `a` is used again, so `b` is the least recently used when `c` comes.
    assert_eq!(texts(&InProcessHistory::session("a")).await, ["a"]);
    let c = InProcessHistory::session("c");
    c.add_message(&Message::human("c")).await.unwrap();
    assert_eq!(InProcessHistory::sessions_held(), 2);
    assert_eq!(texts(&InProcessHistory::session("a")).await, ["a"]);
    assert!(texts(&InProcessHistory::session("b")).await.is_empty());
    // A handle keeps its messages after its session is forgotten.
    assert_eq!(texts(&c).await, ["c"]);

    // Idle sessions go, as n8n's Simple Memory forgets them after an hour.
    InProcessHistory::set_limits(100, Duration::from_millis(50));
    InProcessHistory::session("d")
        .add_message(&Message::human("d"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    InProcessHistory::set_limits(100, Duration::from_millis(50));
    assert_eq!(InProcessHistory::sessions_held(), 0);
    assert!(texts(&InProcessHistory::session("d")).await.is_empty());

    // Every kind of block comes back as it went.
    InProcessHistory::set_limits(100, Duration::from_secs(3600));
    let h = InProcessHistory::session("blocks");
    let blocks = crate::message::with_every_block();
    h.add_messages(&blocks).await.unwrap();
    assert_eq!(h.messages().await.unwrap(), blocks);
}

//! An OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 whose vectors
//! are bags of words, so texts sharing words are near and the client code
//! under test is the code users run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A bag-of-words vector: each word hashed (FNV-1a) into one of `dims`
/// slots, then normalised. Texts sharing no word are orthogonal.
pub fn bag_of_words(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0f32; dims];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in word.to_lowercase().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
        v[(h % dims as u64) as usize] += 1.0;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// An OpenAI-compatible `/v1/embeddings` server; answers 500 while `fail`,
/// and waits `delay_ms` before each answer.
pub struct EmbedServer {
    /// The API root, `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// While set, every request gets a 500.
    pub fail: Arc<AtomicBool>,
    /// Milliseconds to wait before each answer.
    pub delay_ms: Arc<AtomicU64>,
}

impl EmbedServer {
    /// Starts a server of `dims`-long vectors on a free port.
    pub async fn start(dims: usize) -> EmbedServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let fail = Arc::new(AtomicBool::new(false));
        let delay_ms = Arc::new(AtomicU64::new(0));
        let (fail2, delay2) = (fail.clone(), delay_ms.clone());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let fail = fail2.clone();
                let delay = delay2.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    loop {
                        // One request: headers, then Content-Length bytes.
                        let head_end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break i + 4;
                            }
                            let mut tmp = [0u8; 8192];
                            match socket.read(&mut tmp).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&tmp[..n]),
                            }
                        };
                        let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        while buf.len() < head_end + len {
                            let mut tmp = [0u8; 8192];
                            match socket.read(&mut tmp).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&tmp[..n]),
                            }
                        }
                        let body: Value =
                            serde_json::from_slice(&buf[head_end..head_end + len]).unwrap();
                        buf.drain(..head_end + len);
                        let wait = delay.load(Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                        let (status, reply) = if fail.load(Ordering::SeqCst) {
                            (500, json!({"error": {"message": "embedder down"}}))
                        } else {
                            let data: Vec<Value> = body["input"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .enumerate()
                                .map(|(i, t)| {
                                    json!({"object": "embedding", "index": i,
                                           "embedding": bag_of_words(t.as_str().unwrap(), dims)})
                                })
                                .collect();
                            (200, json!({"object": "list", "data": data, "model": "bow"}))
                        };
                        let bytes = serde_json::to_vec(&reply).unwrap();
                        let head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                            bytes.len()
                        );
                        if socket.write_all(head.as_bytes()).await.is_err()
                            || socket.write_all(&bytes).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        EmbedServer {
            base_url: format!("http://{addr}/v1"),
            fail,
            delay_ms,
        }
    }
}

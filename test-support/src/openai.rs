//! A scripted OpenAI-compatible server on 127.0.0.1 for tests: a real HTTP/1.1
//! server whose replies are written piece by piece, with pauses, and may
//! break off, so the client code under test is the code users run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One step of a reply.
#[derive(Clone, Debug)]
pub enum Step {
    /// Write these bytes.
    Send(Vec<u8>),
    /// Wait.
    Sleep(Duration),
    /// Close the connection now (mid-body if the body is unfinished).
    Close,
}

/// A scripted reply.
#[derive(Clone, Debug)]
pub struct Reply(pub Vec<Step>);

impl Reply {
    /// A complete response with a JSON body.
    pub fn json(status: u16, body: &Value) -> Reply {
        Reply::raw(status, "application/json", body.to_string().as_bytes())
    }

    /// A complete response with any body.
    pub fn raw(status: u16, content_type: &str, body: &[u8]) -> Reply {
        Reply::with_headers(status, &[("content-type", content_type)], body)
    }

    /// A complete response with extra headers.
    pub fn with_headers(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        ));
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        Reply(vec![Step::Send(bytes)])
    }

    /// An event stream sent in `pieces` (chunked encoding, one chunk a piece),
    /// properly ended unless `finish` is false (then the connection drops).
    pub fn sse_pieces(pieces: &[&[u8]], finish: bool) -> Reply {
        Reply::stream_pieces("text/event-stream", pieces, finish)
    }

    /// A stream of newline-delimited JSON (as Ollama streams), one value a
    /// line and a chunk, properly ended unless `finish` is false.
    pub fn json_lines(values: &[Value], finish: bool) -> Reply {
        let lines: Vec<String> = values.iter().map(|v| format!("{v}\n")).collect();
        let pieces: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        Reply::stream_pieces("application/x-ndjson", &pieces, finish)
    }

    /// A `content_type` body sent in `pieces` (chunked encoding), properly
    /// ended unless `finish` is false.
    pub fn stream_pieces(content_type: &str, pieces: &[&[u8]], finish: bool) -> Reply {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        let mut steps = vec![Step::Send(head.into_bytes())];
        for p in pieces {
            let mut frame = format!("{:x}\r\n", p.len()).into_bytes();
            frame.extend_from_slice(p);
            frame.extend_from_slice(b"\r\n");
            steps.push(Step::Send(frame));
        }
        if finish {
            steps.push(Step::Send(b"0\r\n\r\n".to_vec()));
        } else {
            steps.push(Step::Close);
        }
        Reply(steps)
    }

    /// An event stream of `data:` events, each in its own chunk, ended by `[DONE]`.
    pub fn sse(events: &[Value]) -> Reply {
        let mut text: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        text.push("data: [DONE]\n\n".into());
        let pieces: Vec<&[u8]> = text.iter().map(|s| s.as_bytes()).collect();
        Reply::sse_pieces(&pieces, true)
    }

    /// Inserts a pause before the reply.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.0.insert(0, Step::Sleep(delay));
        self
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`null` when it is not JSON).
    pub body: Value,
}

impl Seen {
    /// The tool results the request carried to the model (`role: tool`
    /// messages), each read as JSON (as a string when it is not JSON).
    pub fn tool_results(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                let text = m["content"].as_str().unwrap_or_default();
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
            })
            .collect()
    }

    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The server: replies are used in order; the last one repeats.
pub struct Server {
    /// The API root to configure clients with, `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Starts a server on a free port of 127.0.0.1.
    pub async fn start(replies: Vec<Reply>) -> Server {
        Server::start_with(|_| replies).await
    }

    /// Starts a server whose replies may mention its own base URL.
    pub async fn start_with(replies: impl FnOnce(&str) -> Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Server::serve(listener, replies)
    }

    /// Starts a server on `port` of 127.0.0.1 (0: any free port).
    pub async fn start_on(port: u16, replies: Vec<Reply>) -> std::io::Result<Server> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        Ok(Server::serve(listener, |_| replies))
    }

    fn serve(listener: TcpListener, replies: impl FnOnce(&str) -> Vec<Reply>) -> Server {
        let addr = listener.local_addr().unwrap();
        let replies = replies(&format!("http://{addr}/v1"));
        Server::answering(listener, move |n, _| {
            replies[n.min(replies.len() - 1)].clone()
        })
    }

    /// Starts a server that answers request `n` (from 0) with `reply(n, request)`.
    pub async fn start_answering(
        reply: impl Fn(usize, &Seen) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Server::answering(listener, reply)
    }

    fn answering(
        listener: TcpListener,
        reply: impl Fn(usize, &Seen) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let addr = listener.local_addr().unwrap();
        let reply = Arc::new(reply);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        tokio::spawn(async move {
            let mut n = 0usize;
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let (reply, index) = (reply.clone(), n);
                n += 1;
                let seen = seen2.clone();
                tokio::spawn(async move {
                    let request = read_request(&mut socket).await;
                    let steps = match &request {
                        Some(request) => reply(index, request).0,
                        None => reply(index, &Seen::default()).0,
                    };
                    if let Some(request) = request {
                        seen.lock().unwrap().push(request);
                    }
                    for step in steps {
                        match step {
                            Step::Send(bytes) => {
                                if socket.write_all(&bytes).await.is_err() {
                                    return;
                                }
                                let _ = socket.flush().await;
                            }
                            Step::Sleep(d) => tokio::time::sleep(d).await,
                            Step::Close => return,
                        }
                    }
                    let _ = socket.shutdown().await;
                });
            }
        });
        Server {
            base_url: format!("http://{addr}/v1"),
            seen,
        }
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    Some(Seen {
        path,
        headers,
        body,
    })
}

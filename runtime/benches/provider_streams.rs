//! How fast each native client reads a streamed answer: a 10 MB stream of
//! text deltas in the provider's wire format (Anthropic's typed events,
//! Gemini's `alt=sse` candidates, OpenAI's chat chunks), served over
//! loopback HTTP by a scripted server, read through `ChatModel::stream`
//! to the last chunk. The floor is bare reqwest reading the same bytes
//! from the same server.
//!
//! `cargo bench -p nodekit --features openai,anthropic,gemini --bench provider_streams`

use divan::counter::BytesCount;
use futures::StreamExt;
use nodekit::message::Message;
use nodekit::model::anthropic::{AnthropicChatModel, AnthropicConfig};
use nodekit::model::gemini::{GeminiChatModel, GeminiConfig};
use nodekit::model::openai::{OpenAiChatModel, OpenAiConfig};
use nodekit::model::{CallOptions, ChatModel};
use nodekit_test_support::openai::{Reply, Server};
use serde_json::json;

fn main() {
    divan::main();
}

const SIZE: usize = 10 << 20;

/// `event` lines (Anthropic's typed events) or bare `data` lines, until
/// about 10 MB, around `delta(i)`.
fn stream(first: &str, delta: impl Fn(u64) -> String, last: &str) -> Vec<u8> {
    let mut out = String::with_capacity(SIZE + 4096);
    out.push_str(first);
    let mut i = 0;
    while out.len() < SIZE {
        i += 1;
        out.push_str(&delta(i));
    }
    out.push_str(last);
    out.into_bytes()
}

fn anthropic_stream() -> Vec<u8> {
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}});
    let block = json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}});
    stream(
        &format!(
            "event: message_start\ndata: {start}\n\nevent: content_block_start\ndata: {block}\n\n"
        ),
        |i| {
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\" token{i} ü\"}}}}\n\n"
            )
        },
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
         event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":99999}}\n\n\
         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    )
}

fn gemini_stream() -> Vec<u8> {
    stream(
        "",
        |i| {
            format!(
                "data: {{\"candidates\":[{{\"content\":{{\"role\":\"model\",\"parts\":[{{\"text\":\" token{i} ü\"}}]}},\"index\":0}}],\"modelVersion\":\"gemini-2.5-flash\"}}\r\n\r\n"
            )
        },
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\".\"}]},\"finishReason\":\"STOP\",\"index\":0}],\
         \"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":99999,\"totalTokenCount\":100009}}\r\n\r\n",
    )
}

fn openai_stream() -> Vec<u8> {
    stream(
        "",
        |i| {
            format!(
                "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" token{i} ü\"}},\"finish_reason\":null}}]}}\n\n"
            )
        },
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    )
}

/// A server that answers every request with `body` as an event stream.
fn serve(runtime: &tokio::runtime::Runtime, body: Vec<u8>) -> Server {
    runtime.block_on(Server::start_answering(move |_, _| {
        Reply::stream_pieces("text/event-stream", &[&body], true)
    }))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Reads one streamed answer of `model` to its last chunk; the chunks.
fn read(runtime: &tokio::runtime::Runtime, model: &dyn ChatModel) -> usize {
    runtime.block_on(async {
        let messages = [Message::human("hi")];
        let mut stream = model
            .stream(&messages, &CallOptions::default())
            .await
            .unwrap();
        let mut chunks = 0;
        while let Some(chunk) = stream.next().await {
            chunk.unwrap();
            chunks += 1;
        }
        chunks
    })
}

#[divan::bench]
fn anthropic(bencher: divan::Bencher) {
    let rt = runtime();
    let body = anthropic_stream();
    let bytes = body.len();
    let server = serve(&rt, body);
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let model =
        AnthropicChatModel::new(AnthropicConfig::new("k", "claude-sonnet-4-5").base_url(root))
            .unwrap();
    bencher
        .counter(BytesCount::new(bytes))
        .bench_local(|| read(&rt, &model));
}

#[divan::bench]
fn gemini(bencher: divan::Bencher) {
    let rt = runtime();
    let body = gemini_stream();
    let bytes = body.len();
    let server = serve(&rt, body);
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let model =
        GeminiChatModel::new(GeminiConfig::new("k", "gemini-2.5-flash").base_url(root)).unwrap();
    bencher
        .counter(BytesCount::new(bytes))
        .bench_local(|| read(&rt, &model));
}

#[divan::bench]
fn openai(bencher: divan::Bencher) {
    let rt = runtime();
    let body = openai_stream();
    let bytes = body.len();
    let server = serve(&rt, body);
    let model = OpenAiChatModel::new(
        OpenAiConfig::new("k", "gpt-4o-mini").base_url(server.base_url.clone()),
    )
    .unwrap();
    bencher
        .counter(BytesCount::new(bytes))
        .bench_local(|| read(&rt, &model));
}

/// The floor: reqwest reading the same Anthropic body from the same server.
#[divan::bench]
fn bare_reqwest(bencher: divan::Bencher) {
    let rt = runtime();
    let body = anthropic_stream();
    let bytes = body.len();
    let server = serve(&rt, body);
    let client = reqwest::Client::new();
    let url = format!("{}/messages", server.base_url);
    bencher.counter(BytesCount::new(bytes)).bench_local(|| {
        rt.block_on(async {
            let response = client.post(&url).body("{}").send().await.unwrap();
            let mut stream = response.bytes_stream();
            let mut read = 0;
            while let Some(piece) = stream.next().await {
                read += piece.unwrap().len();
            }
            read
        })
    });
}

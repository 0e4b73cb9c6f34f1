//! SSE parsing throughput on a 10 MB streamed answer, fed in 16 KiB network
//! chunks: nodekit's parser alone, and `eventsource-stream` on the same bytes.
//!
//! `cargo bench -p nodekit --bench sse`

use divan::counter::BytesCount;
use futures::StreamExt;
use nodekit::__bench::SseParser;

fn main() {
    divan::main();
}

/// An OpenAI-style stream: mostly one-token content deltas, some tool-call
/// fragments, keep-alive comments, a usage chunk and `[DONE]`; about 10 MB.
fn recorded_stream() -> Vec<u8> {
    let mut out = String::with_capacity(10 << 20);
    let mut i = 0u64;
    while out.len() < 10 << 20 {
        i += 1;
        if i.is_multiple_of(97) {
            out.push_str(": keep-alive\n\n");
        }
        if i.is_multiple_of(13) {
            out.push_str(&format!(
                "data: {{\"id\":\"chatcmpl-{i}\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"\\\"k{i}\\\": \"}}}}]}},\"finish_reason\":null}}]}}\n\n"
            ));
        } else {
            out.push_str(&format!(
                "data: {{\"id\":\"chatcmpl-{i}\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" token{i} ü\"}},\"finish_reason\":null}}]}}\n\n"
            ));
        }
    }
    out.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":99999,\"total_tokens\":100009}}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

const NETWORK_CHUNK: usize = 16 * 1024;

#[divan::bench]
fn nodekit_parser(bencher: divan::Bencher) {
    let data = recorded_stream();
    bencher.counter(BytesCount::new(data.len())).bench(|| {
        let mut parser = SseParser::default();
        let mut events = Vec::with_capacity(64);
        let mut count = 0usize;
        for piece in data.chunks(NETWORK_CHUNK) {
            parser.feed(piece, &mut events).unwrap();
            count += events.len();
            events.clear();
        }
        parser.finish(&mut events).unwrap();
        count + events.len()
    });
}

#[divan::bench]
fn eventsource_stream_crate(bencher: divan::Bencher) {
    use eventsource_stream::Eventsource;
    let data = recorded_stream();
    bencher.counter(BytesCount::new(data.len())).bench(|| {
        let pieces: Vec<Result<bytes::Bytes, std::convert::Infallible>> = data
            .chunks(NETWORK_CHUNK)
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        futures::executor::block_on(futures::stream::iter(pieces).eventsource().count())
    });
}

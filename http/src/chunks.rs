//! A streamed answer read into nodekit's chunks: the event loop every
//! provider shares ([`Transport::chunk_stream`]), with the provider's own
//! reading of each event ([`StreamParser`]).

use std::collections::VecDeque;

use futures::FutureExt;
use nodekit_core::error::Result;
use nodekit_core::message::Message;
use nodekit_core::model::{CancelToken, ChunkStream, ModelError, StreamChunk, message_stream};
use serde_json::Value;

use crate::Transport;
use crate::sse::SseEvent;
use crate::transport::EventReader;

/// How a provider reads the events of its streamed answer.
pub trait StreamParser: Send + 'static {
    /// Reads one event, adding the chunks it holds to `out`. `Ok(true)`
    /// says the answer is complete, its `Finish` chunk in `out`: nothing
    /// more is read.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamChunk>) -> Result<bool, ModelError>;

    /// The server closed the stream before the answer said it was
    /// complete: its `Finish` chunk, or the error of an answer cut off.
    fn closed(&mut self) -> Result<StreamChunk, ModelError>;
}

impl Transport {
    /// Whether `response` is a stream of server-sent events (a server may
    /// answer a stream request with one JSON body instead).
    pub fn is_event_stream(response: &reqwest::Response) -> bool {
        response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.contains("text/event-stream"))
    }

    /// Whether `response` is newline-delimited JSON (`application/x-ndjson`,
    /// `application/jsonl`), which [`events`](Self::events) reads one line
    /// an event.
    pub fn is_json_lines(response: &reqwest::Response) -> bool {
        response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.contains("ndjson") || ct.contains("jsonl"))
    }

    /// The chunks of the answer to a stream request: `parser`'s reading of
    /// its events (server-sent events or newline-delimited JSON), or, when
    /// the server (a proxy, a local model server) answered with one JSON
    /// body instead, that body read by `whole` and streamed as its chunks.
    pub async fn answer_stream<P: StreamParser>(
        &self,
        response: reqwest::Response,
        cancel: Option<CancelToken>,
        parser: P,
        whole: impl FnOnce(&Value) -> std::result::Result<Message, ModelError>,
    ) -> std::result::Result<ChunkStream, ModelError> {
        if Transport::is_event_stream(&response) || Transport::is_json_lines(&response) {
            return Ok(self.chunk_stream(response, cancel, parser));
        }
        let body = self.read_json(response, cancel.as_ref()).await?;
        Ok(message_stream(whole(&body)?))
    }

    /// The chunks of a streamed answer, read by `parser` from the events of
    /// `response` ([`events`](Self::events)). It ends after the `Finish`
    /// chunk or after an error, whose secrets are hidden.
    pub fn chunk_stream<P: StreamParser>(
        &self,
        response: reqwest::Response,
        cancel: Option<CancelToken>,
        parser: P,
    ) -> ChunkStream {
        let state = Chunks {
            transport: self.clone(),
            events: self.event_reader(response, cancel),
            parser,
            out: Vec::new(),
            pending: VecDeque::new(),
            done: false,
        };
        Box::pin(futures::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        }))
    }
}

struct Chunks<P> {
    transport: Transport,
    events: EventReader,
    parser: P,
    /// The chunks of the event being read.
    out: Vec<StreamChunk>,
    /// Chunks (or the final error) read but not yet handed out.
    pending: VecDeque<Result<StreamChunk>>,
    /// Nothing more will be read.
    done: bool,
}

/// Most events read into one batch of chunks ([`Chunks::next`]).
const MAX_BATCH: usize = 256;

impl<P: StreamParser> Chunks<P> {
    /// The next chunk. Events are read one, waiting for it, then as many
    /// as were already received (up to [`MAX_BATCH`]), without waiting:
    /// their text deltas, reasoning deltas and argument fragments come out
    /// joined ([`merge`]), so a fast stream costs one chunk a network read
    /// rather than one an event, and a slow one is not held back.
    async fn next(&mut self) -> Option<Result<StreamChunk>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(item);
            }
            if self.done {
                return None;
            }
            let mut next = self.events.next().await;
            for _ in 0..MAX_BATCH {
                let read = match next {
                    Some(Ok(event)) => {
                        let read = self.parser.event(&event, &mut self.out);
                        for chunk in self.out.drain(..) {
                            merge(&mut self.pending, chunk);
                        }
                        read
                    }
                    Some(Err(e)) => Err(e),
                    None => self.parser.closed().map(|finish| {
                        self.pending.push_back(Ok(finish));
                        true
                    }),
                };
                match read {
                    Ok(complete) => self.done = complete,
                    Err(e) => {
                        self.done = true;
                        self.pending.push_back(Err(self.transport.scrub(e).into()));
                    }
                }
                if self.done {
                    break;
                }
                match self.events.next().now_or_never() {
                    Some(item) => next = item,
                    None => break,
                }
            }
        }
    }
}

/// Adds `chunk` to `pending`, joined to the last chunk when both are text
/// deltas, reasoning deltas, or fragments of one tool call's arguments.
fn merge(pending: &mut VecDeque<Result<StreamChunk>>, chunk: StreamChunk) {
    match (pending.back_mut(), chunk) {
        (Some(Ok(StreamChunk::TextDelta { text })), StreamChunk::TextDelta { text: more })
        | (
            Some(Ok(StreamChunk::ReasoningDelta { text })),
            StreamChunk::ReasoningDelta { text: more },
        ) => text.push_str(&more),
        (
            Some(Ok(StreamChunk::ToolCallDelta {
                index, arguments, ..
            })),
            StreamChunk::ToolCallDelta {
                index: of,
                id: None,
                name: None,
                arguments: more,
            },
        ) if *index == of => arguments.push_str(&more),
        (_, chunk) => pending.push_back(Ok(chunk)),
    }
}

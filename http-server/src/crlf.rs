//! Request heads must end their lines with CRLF.
//!
//! RFC 9112 lets a server take a lone LF for CRLF, and httparse (so hyper)
//! does, with no setting to refuse it. A proxy in front that splits the
//! same bytes differently sees other requests in them, the ground of
//! request smuggling, so nodekit's servers refuse them: [`CrlfHeads`] reads
//! each request head before hyper does and turns a lone LF into a byte no
//! head may hold, which hyper answers with 400 before it closes the
//! connection.
//!
//! To know where each head starts, the wrapper follows the bodies: after a
//! head it gives hyper nothing more until the service has been called with
//! that request and has said how its body is framed ([`Framing::set`]): a
//! length, or chunks, which it follows too. Anything it cannot follow
//! (a malformed chunk line) ends the checks on that connection, and hyper
//! alone decides, so a body's bytes are never changed.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The longest chunk-size line followed; a longer one ends the checks.
const MAX_CHUNK_LINE: usize = 1024;

/// How the body of the request hyper has just read is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    /// This many bytes (none for a request without a body).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

impl BodyFraming {
    /// The framing hyper found for `body`: an exact size is a length (none
    /// for no body); a request body without one is chunked.
    pub(crate) fn of(body: &impl hyper::body::Body) -> BodyFraming {
        body.size_hint()
            .exact()
            .map_or(BodyFraming::Chunked, BodyFraming::Length)
    }
}

/// Where the service tells a connection's [`CrlfHeads`] how each request's
/// body is framed.
#[derive(Default)]
pub(crate) struct Framing(Mutex<(Option<BodyFraming>, Option<Waker>)>);

impl Framing {
    /// The framing of the request the service was just called with.
    pub(crate) fn set(&self, framing: BodyFraming) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        slot.0 = Some(framing);
        if let Some(waker) = slot.1.take() {
            waker.wake();
        }
    }

    fn take(&self, waker: &Waker) -> Option<BodyFraming> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let framing = slot.0.take();
        if framing.is_none() {
            slot.1 = Some(waker.clone());
        }
        framing
    }
}

/// Where in the connection's bytes the wrapper is.
#[derive(Debug)]
enum At {
    /// In a request head, or before one: the length of the current line
    /// (without its CR), whether a CR was the last byte, and whether the
    /// request line has begun (empty lines before it are skipped).
    Head { line: usize, cr: bool, begun: bool },
    /// After a head, before the service said how its body is framed.
    Framing,
    /// This many bytes of a body are still to come.
    Body(u64),
    /// A chunk-size line so far.
    ChunkLine(Vec<u8>),
    /// This many bytes of a chunk's data are still to come.
    ChunkData(u64),
    /// The line end after a chunk's data; whether its CR came.
    ChunkEnd { cr: bool },
    /// The trailer section: the current line's length.
    Trailers { line: usize },
    /// Not followed any more: hyper decides alone.
    Unchecked,
}

const HEAD: At = At::Head {
    line: 0,
    cr: false,
    begun: false,
};

impl At {
    /// Where a body framed by `framing` begins.
    fn body(framing: BodyFraming) -> At {
        match framing {
            BodyFraming::Length(0) => HEAD,
            BodyFraming::Length(n) => At::Body(n),
            BodyFraming::Chunked => At::ChunkLine(Vec::new()),
        }
    }
}

/// A connection whose request heads are checked for lone LFs before hyper
/// reads them (see the [module](self)).
pub(crate) struct CrlfHeads<S> {
    inner: S,
    /// Bytes read past a head's end, held until its body's framing is known.
    held: BytesMut,
    at: At,
    framing: Arc<Framing>,
}

impl<S> CrlfHeads<S> {
    /// Wraps `inner`; the service reports each request's framing to
    /// `framing`.
    pub(crate) fn new(inner: S, framing: Arc<Framing>) -> CrlfHeads<S> {
        CrlfHeads {
            inner,
            held: BytesMut::new(),
            at: HEAD,
            framing,
        }
    }

    /// Follows `bytes`, changing a lone LF in a head; returns how many of
    /// them hyper may read now: all, or those up to the end of a head.
    fn scan(&mut self, bytes: &mut [u8]) -> usize {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match &mut self.at {
                At::Head { line, cr, begun } => match b {
                    b'\n' if !*cr => {
                        // No head holds a NUL: hyper answers 400.
                        bytes[i] = 0;
                        self.at = At::Unchecked;
                    }
                    b'\n' => {
                        if *line == 0 && *begun {
                            self.at = At::Framing;
                            return i + 1;
                        }
                        (*line, *cr) = (0, false);
                    }
                    b'\r' => *cr = true,
                    _ => (*line, *cr, *begun) = (*line + 1, false, true),
                },
                At::Body(left) | At::ChunkData(left) => {
                    let n = (bytes.len() - i).min(usize::try_from(*left).unwrap_or(usize::MAX));
                    *left -= n as u64;
                    i += n;
                    if *left == 0 {
                        self.at = match self.at {
                            At::Body(_) => HEAD,
                            _ => At::ChunkEnd { cr: false },
                        };
                    }
                    continue;
                }
                At::ChunkLine(line) => {
                    line.push(b);
                    if b == b'\n' {
                        self.at = match httparse::parse_chunk_size(line) {
                            Ok(httparse::Status::Complete((_, 0))) => At::Trailers { line: 0 },
                            Ok(httparse::Status::Complete((_, size))) => At::ChunkData(size),
                            _ => At::Unchecked,
                        };
                    } else if line.len() > MAX_CHUNK_LINE {
                        self.at = At::Unchecked;
                    }
                }
                At::ChunkEnd { cr } => match b {
                    b'\r' if !*cr => *cr = true,
                    b'\n' => self.at = At::ChunkLine(Vec::new()),
                    _ => self.at = At::Unchecked,
                },
                At::Trailers { line } => match b {
                    b'\n' if *line == 0 => self.at = HEAD,
                    b'\n' => *line = 0,
                    b'\r' => {}
                    _ => *line += 1,
                },
                At::Framing => return i,
                At::Unchecked => return bytes.len(),
            }
            i += 1;
        }
        bytes.len()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for CrlfHeads<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if matches!(this.at, At::Framing) {
            match this.framing.take(cx.waker()) {
                None => return Poll::Pending,
                Some(framing) => this.at = At::body(framing),
            }
        }
        if !this.held.is_empty() {
            let mut held = std::mem::take(&mut this.held);
            let n = held.len().min(buf.remaining());
            let ready = this.scan(&mut held[..n]);
            buf.put_slice(&held.split_to(ready));
            this.held = held;
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let read = &mut buf.filled_mut()[before..];
        let ready = this.scan(read);
        if ready < read.len() {
            this.held.extend_from_slice(&read[ready..]);
            buf.set_filled(before + ready);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for CrlfHeads<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scans `input` in pieces of `step` bytes as requests framed by
    /// `framings` (one per head, in order); gives what hyper would read.
    fn follow(input: &[u8], step: usize, framings: &[BodyFraming]) -> Vec<u8> {
        let mut heads = CrlfHeads::new((), Arc::default());
        let mut framings = framings.iter();
        let mut out = Vec::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut rest = input;
        while !rest.is_empty() || !pending.is_empty() {
            if matches!(heads.at, At::Framing) {
                heads.at = At::body(*framings.next().expect("a framing per head"));
            }
            if pending.is_empty() {
                let n = step.min(rest.len());
                pending.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
            }
            let ready = heads.scan(&mut pending);
            out.extend(pending.drain(..ready));
        }
        out
    }

    #[test]
    fn lone_lfs_in_heads_are_changed_and_bodies_never() {
        let body = "a\nb\n\nc";
        let chunked = "3\r\na\nb\r\n2;x=1\r\n\n\n\r\n0\r\nT: v\r\n\r\n";
        let input = format!(
            "\r\nPOST / HTTP/1.1\r\nContent-Length: 6\r\n\r\n{body}\
             POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{chunked}\
             GET / HTTP/1.1\r\n\r\n\
             GET / HTTP/1.1\nHost: x\n\n"
        );
        let framings = [
            BodyFraming::Length(6),
            BodyFraming::Chunked,
            BodyFraming::Length(0),
            BodyFraming::Length(0),
        ];
        for step in [1, 2, 7, 4096] {
            let out = String::from_utf8(follow(input.as_bytes(), step, &framings)).unwrap();
            // Only the last head's first lone LF changes; then nothing is followed.
            let at = input.rfind("HTTP/1.1\n").unwrap() + "HTTP/1.1".len();
            let mut expected = input.clone().into_bytes();
            expected[at] = 0;
            assert_eq!(out.as_bytes(), expected, "in pieces of {step}");
        }
    }

    #[test]
    fn a_chunk_line_it_cannot_read_ends_the_checks() {
        let input = b"POST / HTTP/1.1\r\n\r\nzz\r\nGET / HTTP/1.1\n\n";
        let out = follow(input, 4096, &[BodyFraming::Chunked]);
        assert_eq!(out, input);
    }
}

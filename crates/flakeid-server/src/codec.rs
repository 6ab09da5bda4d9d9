//! The gRPC stubs' codec (generated/flakeid.v1.rs, tests/grpc-stubs): prost's
//! protobuf encoding with buffers sized to this API's messages.
//!
//! tonic's default codec grows an answer's buffer by doubling from 8 KiB: a `Batch`
//! of 100,000 IDs (800 KB encoded) asked for 2.1 MB in seven allocations, up to
//! 1 MiB, and `MemoryReturned`'s attack peaked about 10 MiB higher
//! (docs/service.md, "Memory budget"). Here an answer reserves its encoded length
//! once. A call's request buffer starts at [`REQUEST_BUFFER`] bytes instead
//! of tonic's 8 KiB (grown as a larger message comes): this API's requests are a
//! few bytes but for `Unseal`'s IDs.

use std::marker::PhantomData;
use tonic::Status;
use tonic::codec::{BufferSettings, EncodeBuf, Encoder};
use tonic_prost::ProstDecoder;

/// The bytes a call's request buffer starts with: a request of this API but
/// `Unseal` (a varint or two, and the 5-byte gRPC header) fits.
const REQUEST_BUFFER: usize = 64;

/// tonic's: a stream's chunks are sent together up to this many bytes.
const YIELD_THRESHOLD: usize = 32 << 10;

/// prost's codec with buffers sized to the messages (the module's doc).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Codec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec(PhantomData)
    }
}

impl<T, U> tonic::codec::Codec for Codec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = SizedEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> SizedEncoder<T> {
        SizedEncoder(PhantomData)
    }

    fn decoder(&mut self) -> ProstDecoder<U> {
        ProstDecoder::new(settings())
    }
}

fn settings() -> BufferSettings {
    BufferSettings::new(REQUEST_BUFFER, YIELD_THRESHOLD)
}

/// prost's encoder, which first reserves the message's encoded length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SizedEncoder<T>(PhantomData<T>);

impl<T: prost::Message> Encoder for SizedEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.reserve(item.encoded_len());
        item.encode(buf)
            .map_err(|e| Status::internal(format!("encoding the answer: {e}")))
    }

    fn buffer_settings(&self) -> BufferSettings {
        settings()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::proto::{BatchRequest, BatchResponse};
    use axum::body::HttpBody;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;
    use tonic::codec::{Codec as _, EncodeBody};

    /// The system allocator, counting the bytes this thread asks for while
    /// [`COUNTING`] is set (a thread's own count: the other tests' threads run beside).
    struct Counted;

    thread_local! {
        static COUNTING: Cell<bool> = const { Cell::new(false) };
        static ASKED: Cell<usize> = const { Cell::new(0) };
    }

    fn count(size: usize) {
        if COUNTING.with(Cell::get) {
            ASKED.with(|a| a.set(a.get() + size));
        }
    }

    // SAFETY: System's own calls, unchanged; the count touches two const-initialised
    // thread-locals, which allocate nothing.
    unsafe impl GlobalAlloc for Counted {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            count(layout.size());
            // SAFETY: the caller's contract, passed on.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: the caller's contract, passed on.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            count(new_size);
            // SAFETY: the caller's contract, passed on.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static COUNTED: Counted = Counted;

    /// The bytes asked for while a server's body encodes `msg` whole, and the bytes
    /// it sent.
    async fn encode<E>(encoder: E, msg: BatchResponse) -> (usize, usize)
    where
        E: Encoder<Item = BatchResponse, Error = Status>,
    {
        let source = tokio_stream::once(Ok(msg));
        let mut body = std::pin::pin!(EncodeBody::new_server(encoder, source, None, Default::default(), None));
        COUNTING.with(|c| c.set(true));
        ASKED.with(|a| a.set(0));
        let mut sent = 0;
        while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
            if let Ok(data) = frame.unwrap().into_data() {
                sent += data.len();
            }
        }
        COUNTING.with(|c| c.set(false));
        (ASKED.with(Cell::get), sent)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_answer_takes_one_buffer_of_its_length() {
        let msg = BatchResponse {
            ids: (0..100_000u64).map(|i| (1 << 62) + i).collect(),
        };
        let len = prost::Message::encoded_len(&msg);
        let (asked, sent) = encode(Codec::<BatchResponse, BatchRequest>::default().encoder(), msg.clone()).await;
        assert_eq!(sent, 5 + len, "the gRPC header and the message");
        assert!(asked < len + len / 8, "{asked} bytes asked for to encode {len}");
        // prost's own codec grows its buffer by doubling from tonic's 8 KiB: about
        // twice the message in all, which is what this codec is for.
        let (asked, _) = encode(
            tonic_prost::ProstCodec::<BatchResponse, BatchRequest>::default().encoder(),
            msg,
        )
        .await;
        assert!(
            asked > len + len / 2,
            "prost's codec asked for {asked} bytes to encode {len}"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_request_takes_a_buffer_of_its_size() {
        let msg = prost::Message::encode_to_vec(&BatchRequest { n: 100_000 });
        let mut framed = vec![0u8];
        framed.extend_from_slice(&u32::try_from(msg.len()).unwrap().to_be_bytes());
        framed.extend_from_slice(&msg);
        let decoder = Codec::<BatchResponse, BatchRequest>::default().decoder();
        COUNTING.with(|c| c.set(true));
        ASKED.with(|a| a.set(0));
        let mut stream = tonic::codec::Streaming::new_request(decoder, axum::body::Body::from(framed), None, None);
        let got = stream.message().await.unwrap().unwrap();
        drop(stream);
        COUNTING.with(|c| c.set(false));
        assert_eq!(got.n, 100_000);
        // tonic's own codec takes 8 KiB a call for its request, however small.
        let asked = ASKED.with(Cell::get);
        assert!(
            asked < 4096,
            "{asked} bytes asked for to read a request of {} bytes",
            msg.len()
        );
    }
}

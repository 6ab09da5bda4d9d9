//! Layout construction from arbitrary numbers: a layout or a `Config` error naming
//! a field; every layout that builds ends by 9999-12-31 and composes/decomposes
//! its own parts exactly.
#![no_main]
use flakeid_core::{Error, Layout, Order};
use libfuzzer_sys::fuzz_target;

const MAX_TIMESTAMP_MS: u64 = 253_402_300_799_999;

fuzz_target!(|data: &[u8]| {
    let Some(d) = data.get(..48) else { return };
    let u = |i: usize| u64::from_le_bytes(d[i..i + 8].try_into().expect("8 bytes"));
    let small = |i: usize| u32::from(d[i] % 72);
    let mut b = Layout::builder()
        .time_bits(small(0))
        .sequence_bits(small(1))
        .tick_ms(if d[2] & 1 == 0 { u(8) % 200_000_000 } else { u(8) })
        .epoch_ms(if d[2] & 2 == 0 {
            u(16) % 1_800_000_000_000
        } else {
            u(16)
        })
        .order(if d[2] & 4 == 0 {
            Order::TimeNodeSeq
        } else {
            Order::TimeSeqNode
        });
    b = if d[3] & 1 == 1 {
        b.node_bits(small(4))
    } else {
        b.datacenter_bits(small(4)).worker_bits(small(5))
    };
    if d[3] & 2 == 2 {
        b = b.worker_bits(small(6)); // may conflict with node_bits
    }
    match b.build_at(1_800_000_000_000) {
        Ok(l) => {
            assert!(l.last_timestamp_ms() <= MAX_TIMESTAMP_MS, "{l:?}");
            let ticks = u(24) % (l.max_ticks() + 1);
            let ts = l.timestamp_of_ticks(ticks);
            let (node, seq) = (u(32) % (l.max_node() + 1), u(40) % (l.max_sequence() + 1));
            let id = l.compose(ts, node, seq).expect("in-range parts compose");
            let p = l.try_decompose(id).expect("its own ID decomposes");
            assert_eq!((p.timestamp_ms, p.node, p.sequence), (ts, node, seq));
            assert_eq!(l.compose(p.timestamp_ms, p.node, p.sequence), Ok(id));
        }
        Err(Error::Config { field, message }) => {
            assert!(
                !field.is_empty() && message.contains(field) || message.contains("give either"),
                "{field}: {message}"
            );
        }
        Err(other) => panic!("a layout error that is not a config error: {other:?}"),
    }
});

//! `flakeid` — generate, decode and describe Snowflake-family IDs from a shell.

use flakeid_core::{
    ClockBackwards, Encoding, Error, Generator, Layout, NodeSource, Overflow, Parts, decode, encode, to_bytes,
};
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

mod args;
mod serve;
mod time;

use args::Args;

const HELP: &str = "\
flakeid — k-ordered, collision-free, decodable 64-bit IDs (Snowflake family)

USAGE:
    flakeid generate [-n N] [--layout L] [--node N | --datacenter D --worker W]
                     [--format int|hex|base32|base62|bytes|json]
                     [--overflow wait|borrow] [--clock-backwards error|wait|monotonic]
                     [--lease URL [--lease-ttl-ms M]]
    flakeid decode ID... [--layout L] [--from int|hex|base32|base62] [--json]
    flakeid layouts [--json]
    flakeid serve [--listen ADDR:PORT] [--max-batch N] [generate's node-id and
                  generator options, without -n and --format]
    flakeid --help | --version

GENERATE
    -n, --count N          how many IDs (default 1)
    -l, --layout L         snowflake (default), flake, discord, sonyflake, baidu, instagram
        --node N           the whole node id; also env:VAR, hostname (web-3 -> 3), mac, ipv4
        --datacenter D     datacenter id (layouts with a datacenter field)
        --worker W         worker id
    -f, --format F         int (default), hex, base32, base62, bytes (8 raw bytes each,
                           big-endian), json (an array of decimal strings)
        --overflow P       wait (default) or borrow (run ahead of the clock, bounded)
        --max-borrow-ms M  how far borrowing may run ahead (default 2000)
        --clock-backwards P  error (default), wait or monotonic
        --max-wait-ms M    how long the wait policy waits (default 1000)
        --lease URL        lease the node id: file:///dir, redis://host:port/db,
                           postgres://user:pass@host:port/db (?namespace=NAME)
        --lease-ttl-ms M   the lease's time-to-live (default 10000)

SERVE
        --listen ADDR:PORT where to listen (default 127.0.0.1:7676; env FLAKEID_LISTEN)
        --max-batch N      the largest n of GET /v1/ids?n=N (default 100000)
    HTTP/1.1 and h2c: GET /v1/id, /v1/ids?n=N, /v1/decode/ID, /v1/layout, /healthz,
    /readyz, /metrics. SIGTERM/SIGINT drains, releases the lease and exits 0.
    Env fallbacks: FLAKEID_NODE for --node, FLAKEID_LEASE for --lease.

DECODE
    ID is decimal, hex (16 digits or 0x...), base32 (13 chars) or base62 (11 chars);
    '-' reads IDs from standard input, one per line. --json prints one object per ID.

Errors go to standard error with a non-zero exit status (2 for usage errors).
";

/// Writes an error to standard error; a closed or full stderr is ignored (the exit
/// status still tells), where `eprintln!` would panic and exit 101.
fn report(text: std::fmt::Arguments) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match run(argv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            report(format_args!("flakeid: {msg}\nTry 'flakeid --help'."));
            ExitCode::from(2)
        }
        Err(Failure::Flake(e)) => {
            report(format_args!("flakeid: {e}"));
            ExitCode::from(1)
        }
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => {
            report(format_args!("flakeid: {e}"));
            ExitCode::from(1)
        }
    }
}

#[derive(Debug)]
enum Failure {
    Usage(String),
    Flake(Error),
    Io(io::Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Flake(e)
    }
}
impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

fn run(argv: Vec<String>) -> Result<(), Failure> {
    let mut args = Args::new(argv);
    let Some(cmd) = args.next_positional() else {
        return Err(Failure::Usage("missing command (generate, decode or layouts)".into()));
    };
    match cmd.as_str() {
        "-h" | "--help" | "help" => {
            print!("{HELP}");
            Ok(())
        }
        "-V" | "--version" | "version" => {
            println!("flakeid {}", flakeid_core::VERSION);
            Ok(())
        }
        "generate" | "gen" => generate(args),
        "decode" => decode_cmd(args),
        "layouts" => layouts(args),
        "serve" => serve::serve(args),
        other => Err(Failure::Usage(format!("unknown command {other:?}"))),
    }
}

fn layout_arg(args: &mut Args) -> Result<Layout, Failure> {
    match args.value(&["-l", "--layout"])? {
        Some(name) => Ok(Layout::preset(&name)?),
        None => Ok(Layout::SNOWFLAKE),
    }
}

/// The node-id and generator options shared by `generate` and `serve`.
fn generator_options(args: &mut Args, layout: Layout) -> Result<flakeid_core::GeneratorBuilder, Failure> {
    let mut b = Generator::builder(layout);
    if let Some(node) = args.value(&["--node"])? {
        if node.starts_with('+') {
            return Err(Failure::Usage(format!(
                "--node expects a node id, env:VAR, hostname, mac or ipv4, got {node:?}"
            )));
        }
        b = b.node_source(NodeSource::parse(&node)?);
    }
    if let Some(d) = args.parsed(&["--datacenter"])? {
        b = b.datacenter(d);
    }
    if let Some(w) = args.parsed(&["--worker"])? {
        b = b.worker(w);
    }
    if let Some(p) = args.value(&["--overflow"])? {
        b = b.overflow(Overflow::parse(&p)?);
    }
    if let Some(ms) = args.parsed(&["--max-borrow-ms"])? {
        b = b.max_borrow_ms(ms);
    }
    if let Some(p) = args.value(&["--clock-backwards"])? {
        b = b.clock_backwards(ClockBackwards::parse(&p)?);
    }
    if let Some(ms) = args.parsed(&["--max-wait-ms"])? {
        b = b.max_wait_ms(ms);
    }
    let lease = args.value(&["--lease"])?;
    let ttl: Option<u64> = args.parsed(&["--lease-ttl-ms"])?;
    if let Some(url) = &lease {
        b = b.lease_url(url);
    }
    match (lease.is_some(), ttl) {
        (true, Some(ms)) => b = b.lease_ttl_ms(ms),
        (false, Some(_)) => return Err(Failure::Usage("--lease-ttl-ms needs --lease URL".into())),
        _ => {}
    }
    Ok(b)
}

fn generate(mut args: Args) -> Result<(), Failure> {
    let count: u64 = args.parsed(&["-n", "--count"])?.unwrap_or(1);
    let layout = layout_arg(&mut args)?;
    let format = args.value(&["-f", "--format"])?.unwrap_or_else(|| "int".into());
    let b = generator_options(&mut args, layout)?;
    args.finish()?;
    let encoding = match format.as_str() {
        "int" | "decimal" | "json" | "bytes" => Encoding::Decimal,
        other => Encoding::parse(other).map_err(|_| {
            Failure::Usage(format!(
                "--format must be int, hex, base32, base62, bytes or json, got {other:?}"
            ))
        })?,
    };
    let generator = b.build()?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut buf = vec![0u64; count.min(65_536) as usize];
    let mut left = count;
    let mut first = true;
    if format == "json" {
        out.write_all(b"[")?;
    }
    while left > 0 {
        let chunk = &mut buf[..left.min(65_536) as usize];
        generator.fill(chunk)?;
        for &id in chunk.iter() {
            match format.as_str() {
                "bytes" => out.write_all(&to_bytes(id))?,
                "json" => {
                    write!(out, "{}\"{id}\"", if first { "" } else { "," })?;
                    first = false;
                }
                _ => {
                    let mut text = [0u8; flakeid_core::MAX_ENCODED_LEN];
                    let len = flakeid_core::encode_into(id, encoding, &mut text);
                    out.write_all(&text[..len])?;
                    out.write_all(b"\n")?;
                }
            }
        }
        left -= chunk.len() as u64;
    }
    if format == "json" {
        out.write_all(b"]\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Reads an ID in any of its text forms.
fn parse_any(text: &str, from: Option<Encoding>) -> Result<u64, Error> {
    let t = text.trim();
    if let Some(enc) = from {
        return decode(t, enc);
    }
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).map_err(|_| {
            decode(hex, Encoding::Hex).err().unwrap_or(Error::Parse {
                position: 0,
                message: format!("{t:?} is not a hex ID"),
            })
        });
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return decode(t, Encoding::Decimal);
    }
    match t.len() {
        16 => decode(t, Encoding::Hex),
        13 => decode(t, Encoding::Base32),
        11 => decode(t, Encoding::Base62),
        _ => Err(Error::Parse {
            position: 0,
            message: format!(
                "{t:?} is not an ID: expected decimal digits, 16 hex digits, 13 base32 or 11 base62 characters"
            ),
        }),
    }
}

fn decode_cmd(mut args: Args) -> Result<(), Failure> {
    let layout = layout_arg(&mut args)?;
    let json = args.flag(&["--json"]);
    let from = match args.value(&["--from"])? {
        Some(f) if f == "int" => Some(Encoding::Decimal),
        Some(f) => Some(Encoding::parse(&f)?),
        None => None,
    };
    let mut texts = args.rest()?;
    if texts.is_empty() {
        return Err(Failure::Usage(
            "decode needs at least one ID (or - to read standard input)".into(),
        ));
    }
    if texts == ["-"] {
        texts = io::stdin().lines().collect::<Result<Vec<_>, _>>()?;
        texts.retain(|l| !l.trim().is_empty());
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for (i, text) in texts.iter().enumerate() {
        let id = parse_any(text, from)?;
        let p = layout.try_decompose(id)?;
        if json {
            writeln!(out, "{}", json_parts(&layout, id, &p))?;
        } else {
            if i > 0 {
                writeln!(out)?;
            }
            write_parts(&mut out, &layout, id, &p)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn layout_name(layout: &Layout) -> String {
    layout.name().map_or_else(|| "custom".into(), String::from)
}

fn write_parts(out: &mut impl Write, layout: &Layout, id: u64, p: &Parts) -> io::Result<()> {
    writeln!(out, "id          {id}")?;
    writeln!(out, "layout      {}", layout_name(layout))?;
    writeln!(out, "time        {}", time::iso8601(p.timestamp_ms))?;
    writeln!(out, "timestamp   {} ms", p.timestamp_ms)?;
    if !layout.single_node_field() {
        writeln!(out, "datacenter  {}", p.datacenter)?;
        writeln!(out, "worker      {}", p.worker)?;
    }
    writeln!(out, "node        {}", p.node)?;
    writeln!(out, "sequence    {}", p.sequence)?;
    writeln!(out, "hex         {}", encode(id, Encoding::Hex))?;
    writeln!(out, "base32      {}", encode(id, Encoding::Base32))?;
    writeln!(out, "base62      {}", encode(id, Encoding::Base62))
}

fn json_parts(layout: &Layout, id: u64, p: &Parts) -> String {
    format!(
        "{{\"id\":\"{id}\",\"layout\":\"{}\",\"time\":\"{}\",\"timestamp_ms\":{},\"datacenter\":{},\"worker\":{},\"node\":{},\"sequence\":{},\"hex\":\"{}\",\"base32\":\"{}\",\"base62\":\"{}\"}}",
        layout_name(layout),
        time::iso8601(p.timestamp_ms),
        p.timestamp_ms,
        p.datacenter,
        p.worker,
        p.node,
        p.sequence,
        encode(id, Encoding::Hex),
        encode(id, Encoding::Base32),
        encode(id, Encoding::Base62),
    )
}

fn layouts(mut args: Args) -> Result<(), Failure> {
    let json = args.flag(&["--json"]);
    args.finish()?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if json {
        let rows: Vec<String> = Layout::PRESETS
            .iter()
            .map(|l| {
                format!(
                    "{{\"name\":\"{}\",\"time_bits\":{},\"datacenter_bits\":{},\"worker_bits\":{},\"sequence_bits\":{},\"tick_ms\":{},\"epoch_ms\":{},\"order\":\"{}\",\"epoch\":\"{}\",\"last_time\":\"{}\",\"last_timestamp_ms\":{},\"signed_until\":\"{}\"}}",
                    layout_name(l),
                    l.time_bits(),
                    l.datacenter_bits(),
                    l.worker_bits(),
                    l.sequence_bits(),
                    l.tick_ms(),
                    l.epoch_ms(),
                    l.order().as_str(),
                    time::iso8601(l.epoch_ms()),
                    time::iso8601(l.last_timestamp_ms()),
                    l.last_timestamp_ms(),
                    time::iso8601(l.signed_until_ms()),
                )
            })
            .collect();
        writeln!(out, "[{}]", rows.join(","))?;
    } else {
        let now = flakeid_core::precise_now_ms();
        writeln!(
            out,
            "{:<10} {:>4} {:>11} {:>4} {:>7}  {:<13} {:<10} {:<10} {:<10}",
            "layout", "time", "node", "seq", "tick", "order", "epoch", "last time", "signed to"
        )?;
        for l in Layout::PRESETS {
            let node = if l.single_node_field() {
                l.worker_bits().to_string()
            } else {
                format!("{}+{}", l.datacenter_bits(), l.worker_bits())
            };
            let last = &time::iso8601(l.last_timestamp_ms())[..10];
            writeln!(
                out,
                "{:<10} {:>4} {:>11} {:>4} {:>7}  {:<13} {:<10} {:<10} {:<10}{}",
                layout_name(&l),
                l.time_bits(),
                node,
                l.sequence_bits(),
                format!("{} ms", l.tick_ms()),
                l.order().as_str(),
                &time::iso8601(l.epoch_ms())[..10],
                last,
                &time::iso8601(l.signed_until_ms())[..10],
                if l.last_timestamp_ms() < now {
                    "  (ended: choose a later epoch)"
                } else {
                    ""
                },
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_text_form() {
        let id = 910499571847892992u64;
        for text in [
            "910499571847892992".to_string(),
            format!("0x{id:x}"),
            encode(id, Encoding::Hex),
            encode(id, Encoding::Base32),
            encode(id, Encoding::Base62),
        ] {
            assert_eq!(parse_any(&text, None).unwrap(), id, "{text}");
        }
        assert!(parse_any("hello", None).is_err());
        assert!(parse_any("0xzz", None).is_err());
    }
}

//! `flakeid` — generate, decode and describe Snowflake-family IDs from a shell.

use flakeid_core::{
    Encoding, Error, Generator, Layout, Parts, UUID_GENERATOR_OPTIONS, UuidGenerator, Wide, WideForm, decode,
    decode_auto, encode, to_bytes,
};
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

mod args;
#[cfg(test)]
mod cli_docs;
mod seal;
#[cfg(feature = "serve")]
mod serve;

use flakeid_core::text::{iso8601, layout_json, parts_json};

use args::{Cli, Command, DecodeArgs, GenerateArgs, GeneratorArgs};
use clap::{CommandFactory, Parser};

/// Writes an error to standard error; a closed or full stderr is ignored (the exit
/// status still tells), where `eprintln!` would panic and exit 101.
fn report(text: std::fmt::Arguments) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

/// The environment variables clap reads for options; the generator's (`FLAKEID_NODE`,
/// ...) are the core's list (`flakeid_core::options_from_env`), which skips empty ones.
const OPTION_ENV: [&str; 2] = ["FLAKEID_LISTEN", seal::KEY_ENV];

fn main() -> ExitCode {
    // redis://, postgres://, etcd:// lease URLs (the `net-leases` feature, on by default).
    #[cfg(feature = "net-leases")]
    flakeid_lease_net::install();

    // An empty variable (`FLAKEID_LEASE=` in a unit file or a manifest) is unset, as
    // most tools read it, not an empty value: clap would pass it on as "".
    for var in OPTION_ENV {
        if std::env::var_os(var).is_some_and(|v| v.to_string_lossy().trim().is_empty()) {
            // SAFETY: nothing else runs yet: main has started no thread.
            unsafe { std::env::remove_var(var) };
        }
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e),
    };
    match run(cli) {
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

/// `--help`, `--version` and usage errors from clap: help and version to standard
/// output (exit 0), errors to standard error (exit 2), never a panic on a dead pipe.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind as K;
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion => {
            let _ = write!(io::stdout().lock(), "{}", e.render());
            ExitCode::SUCCESS
        }
        K::DisplayHelpOnMissingArgumentOrSubcommand => {
            report(format_args!(
                "flakeid: missing command (generate, decode, seal, unseal, layouts, serve or completions)\n\n{}",
                e.render().to_string().trim_end()
            ));
            ExitCode::from(2)
        }
        kind => {
            let summary = match kind {
                K::InvalidSubcommand => "unknown command: ",
                K::UnknownArgument => "unknown option: ",
                K::InvalidValue | K::NoEquals if e.to_string().contains("a value is required") => {
                    "option needs a value: "
                }
                K::MissingRequiredArgument => "missing argument: ",
                _ => "",
            };
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            report(format_args!("flakeid: {summary}{}", text.trim_end()));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Generate(a) => generate(a),
        Command::Decode(a) => decode_cmd(a),
        Command::Seal(a) => seal::run(a, false),
        Command::Unseal(a) => seal::run(a, true),
        Command::Layouts { json } => layouts(json),
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve::serve(a),
        #[cfg(not(feature = "serve"))]
        Command::Serve(_) => Err(Failure::Usage(
            "this flakeid was built without `serve` (cargo feature serve)".into(),
        )),
        Command::Completions { shell } => {
            let mut out = io::stdout().lock();
            clap_complete::generate(shell, &mut Cli::command(), "flakeid", &mut out);
            out.flush()?;
            Ok(())
        }
    }
}

fn layout_arg(name: Option<&str>) -> Result<Layout, Failure> {
    match name {
        Some(name) => Ok(Layout::preset(name)?),
        None => Ok(Layout::SNOWFLAKE),
    }
}

/// The node-id and generator options shared by `generate` and `serve`: each flag
/// given, set by its table name (ranges and requirements are the core's, as in
/// every binding: a config error naming the option, not a usage error).
fn generator_options(o: &GeneratorArgs) -> Result<flakeid_core::GeneratorBuilder, Failure> {
    let mut b = Generator::builder(Layout::SNOWFLAKE);
    for (name, text) in &o.given {
        b = b.set_text(name, text)?;
    }
    Ok(b)
}

fn generate(args: GenerateArgs) -> Result<(), Failure> {
    if args.kind != "id" {
        return generate_wide(args);
    }
    let count = args.count;
    let format = args.format.unwrap_or_else(|| "int".into());
    let b = generator_options(&args.generator)?;
    let encoding = match format.as_str() {
        "int" | "decimal" | "json" | "bytes" => Encoding::Decimal,
        other => other.parse::<Encoding>().map_err(|_| {
            Failure::Usage(format!(
                "--format must be int, hex, base32, base62, bytes or json, got {other:?}"
            ))
        })?,
    };
    let sealer = match &args.seal_key_file {
        Some(path) => Some(seal::from_key_file(
            path,
            &layout_arg(args.generator.layout())?,
            args.seal_tweak.as_deref(),
        )?),
        None => None,
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
        if let Some(sealer) = &sealer {
            for id in chunk.iter_mut() {
                *id = sealer.seal(*id)?;
            }
        }
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

/// `generate --kind uuid7|ulid|typeid:PREFIX`: the 128-bit generator, with the
/// clock options given on the command line (a node or lease option from the
/// environment is a deployment's, and ignored here: these IDs need none).
fn generate_wide(args: GenerateArgs) -> Result<(), Failure> {
    let kind = args.kind.as_str();
    let prefix = match kind {
        "uuid7" | "ulid" => None,
        _ => match kind.strip_prefix("typeid:") {
            Some(p) => {
                Wide::check_typeid_prefix(p)?;
                Some(p)
            }
            None => {
                return Err(Failure::Usage(format!(
                    "--kind must be id, uuid7, ulid or typeid:PREFIX, got {kind:?}"
                )));
            }
        },
    };
    let format = args.format.unwrap_or_else(|| "text".into());
    if !matches!(format.as_str(), "text" | "bytes" | "json") {
        return Err(Failure::Usage(format!(
            "--format for --kind {kind} must be text, bytes or json, got {format:?}"
        )));
    }
    let mut b = UuidGenerator::builder();
    for (name, text) in &args.generator.given {
        if args.generator.from_env.contains(name) && !UUID_GENERATOR_OPTIONS.contains(name) {
            continue;
        }
        b = b.set_text(name, text)?;
    }
    let generator = b.build()?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    if format == "json" {
        out.write_all(b"[")?;
    }
    for i in 0..args.count {
        let u = Wide(generator.next_uuid7()?);
        if format == "bytes" {
            out.write_all(&u.to_bytes())?;
            continue;
        }
        let text = match (kind, prefix) {
            ("ulid", _) => u.to_ulid(),
            (_, Some(p)) => u.to_typeid(p)?,
            _ => u.to_uuid(),
        };
        if format == "json" {
            write!(out, "{}\"{text}\"", if i == 0 { "" } else { "," })?;
        } else {
            writeln!(out, "{text}")?;
        }
    }
    if format == "json" {
        out.write_all(b"]\n")?;
    }
    out.flush()?;
    Ok(())
}

/// `decode` of a UUID, ULID or TypeID: its forms, version and time.
fn write_wide(out: &mut impl Write, u: Wide, form: &WideForm, json: bool) -> Result<(), Failure> {
    let version = u.version();
    let ms = form.timestamp_ms(u).ok();
    let prefix = match form {
        WideForm::TypeId(p) => Some(p.as_str()),
        _ => None,
    };
    if json {
        writeln!(out, "{}", flakeid_core::text::wide_json(u, form)?)?;
        return Ok(());
    }
    writeln!(out, "uuid        {}", u.to_uuid())?;
    writeln!(out, "ulid        {}", u.to_ulid())?;
    if let Some(p) = prefix {
        writeln!(out, "typeid      {}", u.to_typeid(p)?)?;
    }
    writeln!(out, "version     {version}")?;
    if let Some(ms) = ms {
        writeln!(out, "time        {}", iso8601(ms))?;
        writeln!(out, "timestamp   {ms} ms")?;
    }
    Ok(())
}

/// Reads an ID in any of its text forms: the core decides, and asks rather than
/// guesses when the text reads as more than one form (`--from` says which).
fn parse_any(text: &str, from: Option<Encoding>) -> Result<u64, Error> {
    match from {
        Some(enc) => decode(text.trim(), enc),
        None => decode_auto(text).map(|(id, _)| id),
    }
}

fn decode_cmd(args: DecodeArgs) -> Result<(), Failure> {
    let layout = layout_arg(args.layout.as_deref())?;
    let json = args.json;
    let from = match args.from.as_deref() {
        Some("int") => Some(Encoding::Decimal),
        Some(f) => Some(f.parse::<Encoding>()?),
        None => None,
    };
    let mut texts = args.ids;
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
        if from.is_none()
            && let Some(wide) = Wide::recognize(text)
        {
            let (u, form) = wide?;
            if i > 0 && !json {
                writeln!(out)?;
            }
            write_wide(&mut out, u, &form, json)?;
            continue;
        }
        let id = parse_any(text, from)?;
        let p = layout.try_decompose(id)?;
        if json {
            writeln!(out, "{}", parts_json(&layout, id, &p))?;
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

fn write_parts(out: &mut impl Write, layout: &Layout, id: u64, p: &Parts) -> io::Result<()> {
    writeln!(out, "id          {id}")?;
    writeln!(out, "layout      {}", layout.display_name())?;
    writeln!(out, "time        {}", iso8601(p.timestamp_ms))?;
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

fn layouts(json: bool) -> Result<(), Failure> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if json {
        let rows: Vec<String> = Layout::PRESETS.iter().map(layout_json).collect();
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
            let last = &iso8601(l.last_timestamp_ms())[..10];
            writeln!(
                out,
                "{:<10} {:>4} {:>11} {:>4} {:>7}  {:<13} {:<10} {:<10} {:<10}{}",
                l.display_name(),
                l.time_bits(),
                node,
                l.sequence_bits(),
                format!("{} ms", l.tick_ms()),
                l.order().as_str(),
                &iso8601(l.epoch_ms())[..10],
                last,
                &iso8601(l.signed_until_ms())[..10],
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
        // All-digit hex is not read as decimal: it is asked about, or read with --from.
        assert!(parse_any("1234567890123456", None).is_err());
        assert_eq!(
            parse_any("1234567890123456", Some(Encoding::Hex)).unwrap(),
            0x1234567890123456
        );
    }
}

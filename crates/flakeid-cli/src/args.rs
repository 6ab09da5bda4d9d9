//! The command line, declared with clap: every subcommand has its own `--help`;
//! `--version`, shell completions (`flakeid completions bash`) and environment
//! fallbacks (`FLAKEID_NODE`, `FLAKEID_LEASE`, `FLAKEID_LISTEN`) come with it.

use clap::{Arg, ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use flakeid_core::{GENERATOR_OPTIONS, GeneratorOption, OptionKind, generator_option};
use std::path::PathBuf;

/// A non-negative integer in decimal digits only (`+5`, `-1`, `0x10` are refused).
fn uint(text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expects a non-negative integer (decimal digits only)".into());
    }
    text.parse::<u64>().map_err(|_| format!("must be at most {}", u64::MAX))
}

fn node_arg(text: &str) -> Result<String, String> {
    if text.starts_with('+') || text.starts_with('-') {
        return Err(format!(
            "node ids are non-negative numbers without a sign (or env:VAR, hostname, mac, ipv4), got {text:?}"
        ));
    }
    Ok(text.to_string())
}

/// The top-level help's end: exit status and environment (also in docs/cli.md and
/// the man page, which are generated from this declaration).
const AFTER_HELP: &str = "\
Exit status:
* 0: success (also when the reader of standard output goes away)
* 1: the engine refused (bad configuration, clock moved back, lease failed or lost, an ID that does not decode), or an I/O error
* 2: a usage error (unknown command or option, a malformed value)

Environment (an empty variable counts as unset; the command line wins):
* FLAKEID_<OPTION>: each generator option, as its flag (generate, serve): FLAKEID_NODE as --node, FLAKEID_LEASE as --lease, FLAKEID_STATE as --state, FLAKEID_LEASE_TTL_MS as --lease-ttl-ms, ...
* FLAKEID_LISTEN: serve's address, as --listen
* FLAKEID_LOG: serve's log filter, a level (info by default) or target=level directives

Node ids: without --node, --datacenter/--worker or --lease, generate leases one from the API server in a Kubernetes pod (KUBERNETES_SERVICE_HOST), takes a free node id on a host, and refuses in a container outside Kubernetes (or with a /tmp of its own) unless FLAKEID_HOST_GUARD names a directory its replicas share or FLAKEID_SINGLE_INSTANCE=true; across hosts, give a node id or a lease. serve without one issues 128-bit IDs only (and refuses any option for 64-bit IDs).";

#[derive(Debug, Parser)]
#[command(
    name = "flakeid",
    version = flakeid_core::VERSION,
    about = "flakeid — k-ordered, collision-free, decodable 64-bit IDs (Snowflake family)",
    after_help = AFTER_HELP,
    disable_help_subcommand = false
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size of the largest variant (serve's options) costs
// nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print new IDs, one per line
    #[command(visible_alias = "gen")]
    Generate(GenerateArgs),
    /// Print the parts of IDs (time in ISO-8601 UTC and every field)
    Decode(DecodeArgs),
    /// List the preset layouts
    Layouts {
        /// One JSON array of objects
        #[arg(long)]
        json: bool,
    },
    /// Print the sealed form of IDs (docs/sealing.md): a keyed, reversible permutation
    Seal(SealArgs),
    /// Print the IDs that sealed IDs stand for (the inverse of seal)
    Unseal(SealArgs),
    /// Run the ID service (HTTP/1.1, h2c and gRPC on one port)
    Serve(ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions { shell: clap_complete::Shell },
}

/// The layout and the node-id and generator options of `generate` and `serve`: one
/// flag per option of the core's table (`flakeid_core::GENERATOR_OPTIONS`), with its
/// help, default and range from there. Values stay text until
/// `GeneratorBuilder::set_text`, so every rule and message is the core's.
#[derive(Debug, Default)]
pub struct GeneratorArgs {
    /// The options given (by flag or environment), as (snake_case name, text), in the table's order.
    pub given: Vec<(&'static str, String)>,
    /// Those of them that came from the environment (a deployment's, not this command's).
    pub from_env: Vec<&'static str>,
}

impl GeneratorArgs {
    /// `--layout`, if given.
    pub fn layout(&self) -> Option<&str> {
        self.given
            .iter()
            .find(|(name, _)| *name == "layout")
            .map(|(_, v)| v.as_str())
    }
}

/// The options a command line can set (not the manual clock, a test handle).
fn flag_options() -> impl Iterator<Item = &'static GeneratorOption> {
    GENERATOR_OPTIONS.iter().filter(|o| o.kind != OptionKind::Clock)
}

/// The flag of one option: its help is the table's, plus the default, the range,
/// the words of a choice and what it needs.
fn flag(o: &'static GeneratorOption) -> Arg {
    let mut help = o.doc[..1].to_uppercase() + &o.doc[1..];
    if let OptionKind::Choice(words) = o.kind {
        let words: Vec<String> = words
            .iter()
            .map(|w| {
                if *w == o.default {
                    format!("{w} (default)")
                } else {
                    w.to_string()
                }
            })
            .collect();
        help += &format!(": {}", words.join(", "));
    } else if !o.default.is_empty() {
        help += &format!(" (default {}", o.default);
        if o.kind == OptionKind::Uint && o.max < u64::MAX {
            help += &format!("; {}..={}", o.min, o.max);
        }
        help += ")";
    }
    if let Some(needed) = o.requires {
        help += &format!("; needs --{}", generator_option(needed).map_or(needed, |n| n.flag));
    }
    if o.kind == OptionKind::Layout {
        let names: Vec<&str> = flakeid_core::Layout::PRESETS.iter().filter_map(|l| l.name()).collect();
        help += &format!(": {}", names.join(", "));
    }
    help += match o.name {
        "node" => " (web-3 -> 3 for hostname)",
        "lease" => " (?namespace=NAME; TLS: ca=, cert=, key=; PostgreSQL: sslmode=…) — docs/leases.md",
        "state" => "; not with --lease: a clock behind it meets --clock-backwards; a missing FILE is a fresh start",
        _ => "",
    };
    let (value_name, parser): (&str, TextParser) = match o.kind {
        OptionKind::Uint if o.name == "datacenter" => ("D", uint_text),
        OptionKind::Uint if o.name == "worker" => ("W", uint_text),
        OptionKind::Uint => ("M", uint_text),
        OptionKind::Node => ("N", node_arg),
        OptionKind::Layout => ("L", text),
        OptionKind::Choice(_) => ("P", text),
        OptionKind::LeaseUrl => ("URL", text),
        OptionKind::Bool => ("BOOL", text),
        _ => ("FILE", text),
    };
    let arg = Arg::new(o.name)
        .long(o.flag)
        .value_name(value_name)
        .help(help)
        .value_parser(parser)
        .allow_hyphen_values(o.kind == OptionKind::Node);
    if o.kind == OptionKind::Layout {
        arg.short('l')
    } else {
        arg
    }
}

/// A flag's check: the text itself, or why clap refuses it.
type TextParser = fn(&str) -> Result<String, String>;

fn uint_text(text: &str) -> Result<String, String> {
    uint(text).map(|_| text.to_string())
}

fn text(text: &str) -> Result<String, String> {
    Ok(text.to_string())
}

impl FromArgMatches for GeneratorArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        // A flag, else its environment variable (the core's list: FLAKEID_NODE for
        // --node, FLAKEID_LEASE_TTL_MS for --lease-ttl-ms, ...).
        let env = flakeid_core::options_from_env(|var| std::env::var(var).ok());
        let given = flag_options()
            .filter_map(|o| {
                let flag = matches.get_one::<String>(o.name).cloned();
                let text = flag.or_else(|| env.iter().find(|(n, _)| *n == o.name).map(|(_, v)| v.clone()))?;
                Some((o.name, text))
            })
            .collect();
        let from_env = flag_options()
            .filter(|o| matches.get_one::<String>(o.name).is_none() && env.iter().any(|(n, _)| *n == o.name))
            .map(|o| o.name)
            .collect();
        Ok(GeneratorArgs { given, from_env })
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for GeneratorArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.args(flag_options().map(flag))
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// How many IDs
    #[arg(short = 'n', long = "count", value_name = "N", default_value = "1", value_parser = uint)]
    pub count: u64,
    /// int (default), hex, base32, base62, bytes (8 raw bytes each, big-endian), json (an array of decimal strings); for
    /// the 128-bit kinds: text (default), bytes (16 each), json (an array of strings)
    #[arg(short, long, value_name = "F")]
    pub format: Option<String>,
    /// id (default: the 64-bit ID of --layout), uuid7, ulid, or typeid:PREFIX (128 bits, no node id; only the clock
    /// options apply)
    #[arg(short, long, value_name = "K", default_value = "id")]
    pub kind: String,
    /// Print sealed IDs, with the hex key in this file (docs/sealing.md)
    #[arg(long, value_name = "F")]
    pub seal_key_file: Option<PathBuf>,
    /// The sealing tweak, as text (default: none)
    #[arg(long, value_name = "T", requires = "seal_key_file")]
    pub seal_tweak: Option<String>,
    #[command(flatten)]
    pub generator: GeneratorArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The key is hex (32, 48 or 64 digits: AES-128, -192, -256; whitespace ignored), \
read from --key-file or else from FLAKEID_SEAL_KEY; never given as an argument. \
IDs are read as by decode (decimal, hex, base32 or base62); with no ID or '-', from standard input, one per line."
)]
pub struct SealArgs {
    /// The IDs ('-' or none: standard input)
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// The file holding the key in hex (else FLAKEID_SEAL_KEY)
    #[arg(short, long, value_name = "F")]
    pub key_file: Option<PathBuf>,
    /// The layout of the IDs (their width: 63 bits for snowflake)
    #[arg(short, long, value_name = "L")]
    pub layout: Option<String>,
    /// The tweak, as text (default: none): one key seals each tweak's IDs differently
    #[arg(long, value_name = "T")]
    pub tweak: Option<String>,
    /// Read IDs in this encoding only: int, hex, base32, base62
    #[arg(long, value_name = "E")]
    pub from: Option<String>,
    /// Print int (default), hex, base32 or base62
    #[arg(short, long, value_name = "F", default_value = "int")]
    pub format: String,
}

#[derive(Debug, Args)]
#[command(
    after_help = "ID is decimal, hex (16 digits or 0x...), base32 (13 chars) or base62 (11 chars); \
'-' reads IDs from standard input, one per line."
)]
pub struct DecodeArgs {
    /// The IDs to decode ('-': standard input)
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// The layout the IDs were made with
    #[arg(short, long, value_name = "L")]
    pub layout: Option<String>,
    /// Read IDs in this encoding only: int, hex, base32, base62
    #[arg(long, value_name = "E")]
    pub from: Option<String>,
    /// One JSON object per ID
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "HTTP: GET /v1/id, /v1/ids?n=N, /v1/decode/ID, /v1/unseal/ID, /v1/layout, /healthz, /readyz, /metrics, \
/openapi.json; gRPC flakeid.v1.Flakeid Next, Batch, Stream, Unseal, grpc.health.v1 and reflection. SIGTERM/SIGINT drains, releases the lease and exits 0 (1 when the drain limit cut a response); \
SIGHUP reloads the TLS and token files. A lost lease is leased again in place (503 meanwhile); /healthz fails after --liveness-timeout-ms without one. \
Memory is bounded by --max-connections, --request-memory and --response-memory (docs/service.md, \"Memory budget\")."
)]
pub struct ServeArgs {
    /// Where to listen
    #[arg(
        long,
        value_name = "ADDR:PORT",
        env = "FLAKEID_LISTEN",
        default_value = "127.0.0.1:7676"
    )]
    pub listen: String,
    /// The largest n of one request (GET /v1/ids?n=N, gRPC Batch and Stream chunks)
    #[arg(long, value_name = "N", default_value = "100000", value_parser = uint)]
    pub max_batch: u64,
    /// Time for a client to send a complete request head (default 10000)
    #[arg(long, value_name = "MS", value_parser = uint)]
    pub header_timeout_ms: Option<u64>,
    /// Close a connection that starts no request and moves no body this long (default 60000)
    #[arg(long, value_name = "MS", value_parser = uint)]
    pub idle_timeout_ms: Option<u64>,
    /// Open connections at most; lowered to the fd limit minus 64 (default 1024)
    #[arg(long, value_name = "N", value_parser = uint)]
    pub max_connections: Option<u64>,
    /// HTTP/2 and gRPC streams at once per connection (default 32)
    #[arg(long, value_name = "N", value_parser = uint)]
    pub max_streams: Option<u64>,
    /// HTTP/2 flow-control window per stream, in bytes (default 65536)
    #[arg(long, value_name = "BYTES", value_parser = uint)]
    pub stream_window: Option<u64>,
    /// HTTP/2 flow-control window per connection, in bytes (default 1048576)
    #[arg(long, value_name = "BYTES", value_parser = uint)]
    pub connection_window: Option<u64>,
    /// Close the connection of a gRPC or /v1/ids response whose client takes less
    /// than 16 KiB of what is waiting to be sent this long, PINGs or not (default 30000)
    #[arg(long, value_name = "MS", value_parser = uint)]
    pub stream_idle_timeout_ms: Option<u64>,
    /// A gRPC request body must arrive within this long of its head (default: --header-timeout-ms)
    #[arg(long, value_name = "MS", value_parser = uint)]
    pub body_timeout_ms: Option<u64>,
    /// Open connections from one client address at most (default 256)
    #[arg(long, value_name = "N", value_parser = uint)]
    pub max_connections_per_client: Option<u64>,
    /// Bytes of gRPC request bodies buffered at once, in all (default 32 MiB, or the largest request)
    #[arg(long, value_name = "BYTES", value_parser = uint)]
    pub request_memory: Option<u64>,
    /// Bytes of responses made and not yet sent to their clients, in all (default 64 MiB)
    #[arg(long, value_name = "BYTES", value_parser = uint)]
    pub response_memory: Option<u64>,
    /// The same per connection (default 4 MiB, or the largest response)
    #[arg(long, value_name = "BYTES", value_parser = uint)]
    pub connection_response_memory: Option<u64>,
    /// The same per client address, or per bearer token when tokens are on (default a quarter of --response-memory)
    #[arg(long, value_name = "BYTES", value_parser = uint)]
    pub client_response_memory: Option<u64>,
    /// IPv6 clients are grouped by this many leading bits for those shares, as an IPv4 client is one address (1..=128, default 64)
    #[arg(long, value_name = "BITS", value_parser = uint)]
    pub client_ipv6_prefix: Option<u64>,
    /// A response that finds no room in those within this long is refused: 503 with Retry-After, gRPC RESOURCE_EXHAUSTED (default 2000)
    #[arg(long, value_name = "MS", value_parser = uint)]
    pub reserve_timeout_ms: Option<u64>,
    /// Also answer /healthz and /readyz here, plain HTTP with no client certificate or token
    #[arg(long, value_name = "ADDR:PORT")]
    pub probe_listen: Option<String>,
    /// Serve TLS with this PEM certificate chain (reloaded when the file changes)
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Require client certificates issued by these PEM CAs (mTLS)
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_client_ca: Option<std::path::PathBuf>,
    /// Bearer tokens, one per line, required by /v1/* and gRPC (reloaded on change)
    #[arg(long, value_name = "FILE")]
    pub auth_token_file: Option<std::path::PathBuf>,
    /// /metrics needs a bearer token too (its counters tell the traffic)
    #[arg(long, requires = "auth_token_file")]
    pub metrics_auth: bool,
    /// Issue sealed IDs, with the hex key in this file; serve /v1/unseal (docs/sealing.md)
    #[arg(long, value_name = "F")]
    pub seal_key_file: Option<PathBuf>,
    /// The sealing tweak, as text (default: none)
    #[arg(long, value_name = "T", requires = "seal_key_file")]
    pub seal_tweak: Option<String>,
    /// Write one JSON line per request (method, path, status, duration, peer) to stdout
    #[arg(long)]
    pub access_log: bool,
    /// /healthz fails (503) after this long without a held lease; 0: never
    #[arg(long, value_name = "MS", value_parser = uint, default_value = "60000")]
    pub liveness_timeout_ms: u64,
    #[command(flatten)]
    pub generator: GeneratorArgs,
}

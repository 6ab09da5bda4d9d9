//! A minimal PostgreSQL frontend (protocol 3.0) over `std::net::TcpStream`: startup,
//! trust / cleartext / SCRAM-SHA-256 authentication, and the extended query protocol
//! with text parameters (so values never become SQL text). No TLS: use it on a
//! trusted network or through a local proxy.

use super::lease_error;
use super::scram::{Scram, base64_encode, sha256};
use crate::error::{Error, Result};
use std::io::{BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub(crate) struct PgConn {
    reader: BufReader<TcpStream>,
}

/// Connection parameters.
#[derive(Debug, Clone)]
pub(crate) struct PgParams {
    pub addr: String,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
}

/// A server-side error: SQLSTATE and message.
fn server_error(body: &[u8]) -> Error {
    let mut code = "";
    let mut message = "";
    for field in body.split(|&b| b == 0) {
        if let Some((&t, rest)) = field.split_first() {
            let text = std::str::from_utf8(rest).unwrap_or("?");
            match t {
                b'C' => code = text,
                b'M' => message = text,
                _ => {}
            }
        }
    }
    lease_error(format!("postgres error {code}: {message}"))
}

fn remaining(until: Instant) -> Result<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(lease_error("postgres: timed out"))
    } else {
        Ok(left)
    }
}

fn io_err(e: std::io::Error) -> Error {
    lease_error(format!("postgres: {e}"))
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// A frontend message: type byte, then length (including itself) and body.
fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 5);
    out.push(kind);
    out.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn nonce() -> String {
    let mut seed = Vec::new();
    seed.extend_from_slice(&std::process::id().to_be_bytes());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    seed.extend_from_slice(&now.to_be_bytes());
    seed.extend_from_slice(&(&seed as *const Vec<u8> as usize).to_be_bytes());
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let mut buf = [0u8; 32];
        if f.read_exact(&mut buf).is_ok() {
            seed.extend_from_slice(&buf);
        }
    }
    base64_encode(&sha256(&seed)[..18])
}

impl PgConn {
    pub fn connect(p: &PgParams, until: Instant) -> Result<PgConn> {
        let addrs = p
            .addr
            .to_socket_addrs()
            .map_err(|e| lease_error(format!("postgres: cannot resolve {}: {e}", p.addr)))?;
        let mut last = lease_error(format!("postgres: {} resolves to no address", p.addr));
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, remaining(until)?) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = lease_error(format!("postgres: cannot connect to {a}: {e}")),
            }
        }
        let stream = stream.ok_or(last)?;
        let _ = stream.set_nodelay(true);
        let mut conn = PgConn {
            reader: BufReader::new(stream),
        };

        let mut body = Vec::new();
        body.extend_from_slice(&196_608u32.to_be_bytes()); // protocol 3.0
        for (k, v) in [
            ("user", p.user.as_str()),
            ("database", p.database.as_str()),
            ("application_name", "flakeid-lease"),
            ("client_encoding", "UTF8"),
        ] {
            cstr(&mut body, k);
            cstr(&mut body, v);
        }
        body.push(0);
        let mut startup = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        conn.send(&startup, until)?;

        let mut scram: Option<Scram> = None;
        loop {
            let (kind, body) = conn.read_message(until)?;
            match kind {
                b'R' => {
                    let code = body
                        .get(..4)
                        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                        .ok_or_else(|| lease_error("postgres: short authentication message"))?;
                    let need_password = || {
                        p.password.clone().ok_or_else(|| {
                            lease_error("postgres: the server asks for a password; put it in the lease URL")
                        })
                    };
                    match code {
                        0 => {}
                        3 => {
                            let mut b = Vec::new();
                            cstr(&mut b, &need_password()?);
                            conn.send(&message(b'p', &b), until)?;
                        }
                        10 => {
                            let mechanisms = String::from_utf8_lossy(&body[4..]);
                            if !mechanisms.split('\0').any(|m| m == "SCRAM-SHA-256") {
                                return Err(lease_error(format!(
                                    "postgres: no supported SASL mechanism among {mechanisms:?}"
                                )));
                            }
                            let s = Scram::new(&need_password()?, nonce());
                            let first = s.client_first();
                            let mut b = Vec::new();
                            cstr(&mut b, "SCRAM-SHA-256");
                            b.extend_from_slice(&(first.len() as u32).to_be_bytes());
                            b.extend_from_slice(first.as_bytes());
                            conn.send(&message(b'p', &b), until)?;
                            scram = Some(s);
                        }
                        11 => {
                            let s = scram
                                .as_mut()
                                .ok_or_else(|| lease_error("postgres: SASL continue without a start"))?;
                            let fin = s.client_final(&String::from_utf8_lossy(&body[4..]))?;
                            conn.send(&message(b'p', fin.as_bytes()), until)?;
                        }
                        12 => {
                            let s = scram
                                .as_ref()
                                .ok_or_else(|| lease_error("postgres: SASL final without a start"))?;
                            s.verify_server_final(&String::from_utf8_lossy(&body[4..]))?;
                        }
                        5 => {
                            return Err(lease_error(
                                "postgres: the server asks for md5 password authentication, which flakeid does not \
                                 implement; use scram-sha-256 (the default since PostgreSQL 14) or trust",
                            ));
                        }
                        other => {
                            return Err(lease_error(format!(
                                "postgres: unsupported authentication method {other}"
                            )));
                        }
                    }
                }
                b'E' => return Err(server_error(&body)),
                b'Z' => return Ok(conn),
                _ => {} // ParameterStatus, BackendKeyData, notices
            }
        }
    }

    fn send(&mut self, bytes: &[u8], until: Instant) -> Result<()> {
        let s = self.reader.get_mut();
        s.set_write_timeout(Some(remaining(until)?)).map_err(io_err)?;
        s.write_all(bytes).map_err(io_err)
    }

    fn read_message(&mut self, until: Instant) -> Result<(u8, Vec<u8>)> {
        self.reader
            .get_ref()
            .set_read_timeout(Some(remaining(until)?))
            .map_err(io_err)?;
        let mut head = [0u8; 5];
        self.reader.read_exact(&mut head).map_err(io_err)?;
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if !(4..=64 << 20).contains(&len) {
            return Err(lease_error("postgres: bad message length"));
        }
        let mut body = vec![0u8; len - 4];
        self.reader.read_exact(&mut body).map_err(io_err)?;
        Ok((head[0], body))
    }

    /// Runs SQL text without parameters (may hold several statements, run as one
    /// implicit transaction).
    pub fn simple(&mut self, sql: &str, until: Instant) -> Result<()> {
        let mut b = Vec::new();
        cstr(&mut b, sql);
        self.send(&message(b'Q', &b), until)?;
        let mut error = None;
        loop {
            let (kind, body) = self.read_message(until)?;
            match kind {
                b'E' => error = Some(server_error(&body)),
                b'Z' => return error.map_or(Ok(()), Err),
                _ => {}
            }
        }
    }

    /// Runs one statement with text parameters; returns its rows as text (None = NULL).
    pub fn query(&mut self, sql: &str, params: &[&str], until: Instant) -> Result<Vec<Vec<Option<String>>>> {
        let mut out = Vec::new();
        // Parse (unnamed statement, parameter types inferred).
        let mut b = Vec::new();
        cstr(&mut b, "");
        cstr(&mut b, sql);
        b.extend_from_slice(&0u16.to_be_bytes());
        out.extend_from_slice(&message(b'P', &b));
        // Bind: all parameters and results in text format.
        let mut b = Vec::new();
        cstr(&mut b, "");
        cstr(&mut b, "");
        b.extend_from_slice(&0u16.to_be_bytes());
        b.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for p in params {
            b.extend_from_slice(&(p.len() as u32).to_be_bytes());
            b.extend_from_slice(p.as_bytes());
        }
        b.extend_from_slice(&0u16.to_be_bytes());
        out.extend_from_slice(&message(b'B', &b));
        // Execute all rows, then Sync.
        let mut b = Vec::new();
        cstr(&mut b, "");
        b.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&message(b'E', &b));
        out.extend_from_slice(&message(b'S', &[]));
        self.send(&out, until)?;

        let mut rows = Vec::new();
        let mut error = None;
        loop {
            let (kind, body) = self.read_message(until)?;
            match kind {
                b'D' => rows.push(parse_row(&body)?),
                b'E' => error = Some(server_error(&body)),
                b'Z' => return error.map_or(Ok(rows), Err),
                _ => {} // ParseComplete, BindComplete, CommandComplete, notices
            }
        }
    }
}

fn parse_row(body: &[u8]) -> Result<Vec<Option<String>>> {
    let short = || lease_error("postgres: short data row");
    let n = u16::from_be_bytes([*body.first().ok_or_else(short)?, *body.get(1).ok_or_else(short)?]) as usize;
    let mut at = 2;
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        let len_bytes = body.get(at..at + 4).ok_or_else(short)?;
        let len = i32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
        at += 4;
        if len < 0 {
            row.push(None);
        } else {
            let v = body.get(at..at + len as usize).ok_or_else(short)?;
            row.push(Some(String::from_utf8_lossy(v).into_owned()));
            at += len as usize;
        }
    }
    Ok(row)
}

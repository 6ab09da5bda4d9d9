//! Where a generator's node id comes from, when it is not given explicitly.
//!
//! Each source either yields an id that fits the layout's node field or fails with
//! a message that says what was looked at and why it does not fit — never a
//! silently truncated id. MAC and IPv4 sources keep the *lowest* `node_bits` bits,
//! which is the documented contract of those sources (seed 004, Sonyflake), not a
//! truncation of a user-given number.

use crate::error::{Error, Result};
use crate::layout::{Layout, mask};

/// A way to obtain a node id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeSource {
    /// A number given outright.
    Explicit(u64),
    /// A decimal number in an environment variable.
    Env(String),
    /// The trailing number of the host name (`web-3` → 3), as Kubernetes
    /// StatefulSets name their pods.
    HostOrdinal,
    /// The lowest `node_bits` of the first non-loopback MAC address.
    Mac,
    /// The lowest `node_bits` of the first private IPv4 address.
    PrivateIpv4,
}

impl std::str::FromStr for NodeSource {
    type Err = Error;
    /// Parses `"42"`, `"env:VAR"`, `"hostname"`, `"mac"` or `"ipv4"`. Numbers are
    /// plain digits (`"+5"` and `"-0"` are refused, not read as 5 and 0).
    fn from_str(spec: &str) -> Result<NodeSource> {
        let s = spec.trim();
        if let Some(n) = plain_u64(s) {
            return Ok(NodeSource::Explicit(n));
        }
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::config(
                "node",
                format!(
                    "node {} is too large: node ids are small numbers (snowflake: 0..=1023)",
                    crate::encoding::shown(s)
                ),
            ));
        }
        if !s.is_empty() && s.trim_start_matches(['+', '-']).bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::config(
                "node",
                format!(
                    "node must be a plain non-negative number (no sign), got {}",
                    crate::encoding::shown(s)
                ),
            ));
        }
        if let Some(var) = s.strip_prefix("env:") {
            if var.is_empty() {
                return Err(Error::config(
                    "node",
                    "node \"env:\" needs a variable name, e.g. env:FLAKEID_NODE",
                ));
            }
            return Ok(NodeSource::Env(var.to_string()));
        }
        match s.to_ascii_lowercase().as_str() {
            "hostname" | "host" | "ordinal" => Ok(NodeSource::HostOrdinal),
            "mac" => Ok(NodeSource::Mac),
            "ip" | "ipv4" => Ok(NodeSource::PrivateIpv4),
            _ => Err(Error::config(
                "node",
                format!(
                    "node must be a number, \"env:VAR\", \"hostname\", \"mac\" or \"ipv4\", got {}",
                    crate::encoding::shown(spec)
                ),
            )),
        }
    }
}

/// The source as [`FromStr`](std::str::FromStr) reads it: `42`, `env:VAR`,
/// `hostname`, `mac`, `ipv4`.
impl std::fmt::Display for NodeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeSource::Explicit(n) => write!(f, "{n}"),
            NodeSource::Env(var) => write!(f, "env:{var}"),
            NodeSource::HostOrdinal => f.write_str("hostname"),
            NodeSource::Mac => f.write_str("mac"),
            NodeSource::PrivateIpv4 => f.write_str("ipv4"),
        }
    }
}

impl NodeSource {
    /// Resolves to a node id that fits `layout`.
    pub fn resolve(&self, layout: &Layout) -> Result<u64> {
        let max = layout.max_node();
        match self {
            NodeSource::Explicit(n) => {
                layout.check_node(*n)?;
                Ok(*n)
            }
            NodeSource::Env(var) => {
                let raw = std::env::var(var).map_err(|_| {
                    Error::config(
                        "node",
                        format!("environment variable {var} is not set (it should hold the node id, 0..={max})"),
                    )
                })?;
                // The value is never echoed: the variable may hold anything (a
                // misconfigured deployment could point it at a secret).
                let n: u64 = plain_u64(raw.trim()).ok_or_else(|| {
                    Error::config(
                        "node",
                        format!(
                            "environment variable {var} does not hold a node id (a number in 0..={max}); \
                             its value ({} characters) is not shown",
                            raw.chars().count()
                        ),
                    )
                })?;
                fits(n, max, || format!("environment variable {var}={n}"))
            }
            NodeSource::HostOrdinal => {
                let host = hostname()?;
                let n = host_ordinal(&host)?;
                fits(n, max, || format!("host name {host:?} ends in ordinal {n}, which"))
            }
            NodeSource::Mac => {
                let mac = first_mac()?;
                let n = mac & mask(layout.node_bits());
                Ok(n)
            }
            NodeSource::PrivateIpv4 => {
                let ip = first_private_ipv4()?;
                Ok(u64::from(u32::from(ip)) & mask(layout.node_bits()))
            }
        }
    }
}

fn fits(n: u64, max: u64, what: impl Fn() -> String) -> Result<u64> {
    if n > max {
        return Err(Error::config(
            "node",
            format!("{} is out of range: node must be in 0..={max}", what()),
        ));
    }
    Ok(n)
}

/// The number after the last `-` of a host name (`web-3` → 3, `db-12.example` → 12).
pub fn host_ordinal(host: &str) -> Result<u64> {
    let short = host.split('.').next().unwrap_or(host);
    let digits = short.rsplit('-').next().unwrap_or("");
    if short.contains('-') && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().map_err(|_| {
            Error::config(
                "node",
                format!("host name {host:?} has an ordinal too large for a node id"),
            )
        })
    } else {
        Err(Error::config(
            "node",
            format!("host name {host:?} does not end in an ordinal like \"web-3\" (as Kubernetes StatefulSet pods do)"),
        ))
    }
}

/// This machine's host name.
pub fn hostname() -> Result<String> {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname NUL-terminates on success.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return Ok(String::from_utf8_lossy(&buf[..end]).into_owned());
        }
    }
    std::env::var("HOSTNAME")
        .or_else(|_| std::env::var("COMPUTERNAME"))
        .map_err(|_| Error::config("node", "cannot read this machine's host name"))
}

/// The first non-zero MAC address of a non-loopback interface, as 48 bits. Read
/// from Linux's `/sys/class/net`; elsewhere a config error naming `node` says so.
pub fn first_mac() -> Result<u64> {
    if !cfg!(any(target_os = "linux", target_os = "android")) {
        return Err(unavailable("mac", "MAC addresses are read from Linux's /sys/class/net"));
    }
    let mut found: Vec<(String, u64)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "lo" {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(entry.path().join("address"))
                && let Some(mac) = parse_mac(text.trim())
                && mac != 0
            {
                found.push((name, mac));
            }
        }
    }
    found.sort();
    found.first().map(|(_, mac)| *mac).ok_or_else(|| {
        Error::config(
            "node",
            "no network interface with a MAC address was found (looked in /sys/class/net)",
        )
    })
}

fn parse_mac(text: &str) -> Option<u64> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() != 6 {
        return None;
    }
    parts.iter().try_fold(0u64, |acc, p| {
        u8::from_str_radix(p, 16).ok().map(|b| acc << 8 | u64::from(b))
    })
}

/// Whether an address is in 10/8, 172.16/12, 192.168/16 or 100.64/10 (carrier-grade NAT).
pub fn is_private_ipv4(ip: std::net::Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_private() || (o[0] == 100 && (64..128).contains(&o[1]))
}

/// The node source `what` does not work on this OS: a config error naming `node`.
fn unavailable(what: &str, why: &str) -> Error {
    Error::config(
        "node",
        format!(
            "node source {what:?} is not available on {}: {why}; give the node id as a number, env:VAR or hostname",
            std::env::consts::OS
        ),
    )
}

/// The first private IPv4 address of this machine's interfaces (`getifaddrs`, on
/// unix: Linux, macOS, the BSDs). On Windows a config error naming `node`.
pub fn first_private_ipv4() -> Result<std::net::Ipv4Addr> {
    if !cfg!(unix) {
        return Err(unavailable(
            "ipv4",
            "interface addresses are read with getifaddrs, which is unix's",
        ));
    }
    let mut found = interface_ipv4s();
    found.sort();
    found.into_iter().find(|ip| is_private_ipv4(*ip)).ok_or_else(|| {
        Error::config(
            "node",
            "no private IPv4 address (10/8, 172.16/12, 192.168/16, 100.64/10) on this machine's interfaces",
        )
    })
}

#[cfg(unix)]
fn interface_ipv4s() -> Vec<std::net::Ipv4Addr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we walk read-only and free once.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut cur = head;
        while !cur.is_null() {
            let addr = (*cur).ifa_addr;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET {
                let sin = addr.cast::<libc::sockaddr_in>();
                out.push(std::net::Ipv4Addr::from(u32::from_be((*sin).sin_addr.s_addr)));
            }
            cur = (*cur).ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

#[cfg(not(unix))]
fn interface_ipv4s() -> Vec<std::net::Ipv4Addr> {
    Vec::new()
}

/// Digits only (no sign, no spaces) that fit a `u64`.
fn plain_u64(s: &str) -> Option<u64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_round_trip_through_their_text() {
        for s in [
            NodeSource::Explicit(0),
            NodeSource::Explicit(1023),
            NodeSource::Env("FLAKEID_NODE".into()),
            NodeSource::HostOrdinal,
            NodeSource::Mac,
            NodeSource::PrivateIpv4,
        ] {
            assert_eq!(s.to_string().parse::<NodeSource>().ok().as_ref(), Some(&s));
            assert_eq!(s.to_string().parse::<NodeSource>().ok(), Some(s));
        }
        match "nope".parse::<NodeSource>() {
            Err(Error::Config { field, message }) => assert_eq!(
                (field, message.as_str()),
                (
                    "node",
                    r#"node must be a number, "env:VAR", "hostname", "mac" or "ipv4", got "nope""#
                )
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_every_spec() {
        assert_eq!("7".parse::<NodeSource>().unwrap(), NodeSource::Explicit(7));
        assert_eq!("env:X".parse::<NodeSource>().unwrap(), NodeSource::Env("X".into()));
        assert_eq!("hostname".parse::<NodeSource>().unwrap(), NodeSource::HostOrdinal);
        assert_eq!("MAC".parse::<NodeSource>().unwrap(), NodeSource::Mac);
        assert_eq!("ipv4".parse::<NodeSource>().unwrap(), NodeSource::PrivateIpv4);
        assert!("env:".parse::<NodeSource>().is_err());
        assert!("wat".parse::<NodeSource>().unwrap_err().to_string().contains("env:VAR"));
    }

    #[test]
    fn host_ordinals() {
        assert_eq!(host_ordinal("web-3").unwrap(), 3);
        assert_eq!(host_ordinal("flakeid-12.svc.cluster.local").unwrap(), 12);
        assert!(host_ordinal("web").is_err());
        assert!(host_ordinal("web-x").is_err());
        assert!(host_ordinal("3").is_err());
    }

    #[test]
    fn env_source_checks_range() {
        // SAFETY (edition 2024): tests touching this variable run only here.
        unsafe { std::env::set_var("FLAKEID_TEST_NODE_A", "1023") };
        let src = NodeSource::Env("FLAKEID_TEST_NODE_A".into());
        assert_eq!(src.resolve(&Layout::SNOWFLAKE).unwrap(), 1023);
        let err = src.resolve(&Layout::INSTAGRAM.clone()).map(|_| ()).and_then(|_| {
            unsafe { std::env::set_var("FLAKEID_TEST_NODE_A", "9000") };
            src.resolve(&Layout::INSTAGRAM)
        });
        assert!(err.unwrap_err().to_string().contains("0..=8191"));
        assert!(
            NodeSource::Env("FLAKEID_TEST_UNSET_VAR".into())
                .resolve(&Layout::SNOWFLAKE)
                .is_err()
        );
        assert!(NodeSource::Explicit(1024).resolve(&Layout::SNOWFLAKE).is_err());
    }

    #[test]
    fn mac_and_ip_fit_the_layout_or_say_why_not() {
        assert_eq!(parse_mac("02:42:ac:11:00:02"), Some(0x0242_ac11_0002));
        for src in [NodeSource::Mac, NodeSource::PrivateIpv4] {
            match src.resolve(&Layout::SNOWFLAKE) {
                Ok(n) => assert!(n <= 1023),
                Err(e) => assert!(matches!(e, Error::Config { field: "node", .. })),
            }
        }
        assert!(is_private_ipv4("10.1.2.3".parse().unwrap()));
        assert!(!is_private_ipv4("8.8.8.8".parse().unwrap()));
    }

    /// Where a source cannot work it says so by name, with the OS; the host name
    /// works everywhere (Windows: COMPUTERNAME).
    #[test]
    fn each_os_has_its_node_sources() {
        let refused = |src: NodeSource| match src.resolve(&Layout::SNOWFLAKE) {
            Err(Error::Config { field: "node", message }) => message.contains("is not available on"),
            _ => false,
        };
        let linux = cfg!(any(target_os = "linux", target_os = "android"));
        assert_eq!(refused(NodeSource::Mac), !linux);
        assert_eq!(refused(NodeSource::PrivateIpv4), !cfg!(unix));
        if !linux {
            let e = first_mac().unwrap_err().to_string();
            assert!(e.contains(std::env::consts::OS) && e.contains("\"mac\""), "{e}");
        }
        assert!(!hostname().unwrap().is_empty());
    }
}

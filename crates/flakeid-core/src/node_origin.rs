//! Where a generator's node id comes from (API.md §10; docs/design.md, "A node id
//! across a fleet"), decided once per build by [`decide`]: a pure function of what
//! the builder was given ([`Asked`]) and what the process's surroundings say
//! ([`Surroundings`]), so that the whole table is tested without building anything.
//! In order: a node id given; a lease URL; the platform's coordinator (a Kubernetes
//! pod: the `k8s://` Lease store); a free node id on this host, where the host
//! guard sees every process that may share the ID space; otherwise a refusal that
//! names the fixes. No default gives two live processes of a fleet one node id.

use crate::error::{Error, Result};
use alloc::string::{String, ToString};
#[cfg(feature = "std")]
use alloc::vec::Vec;
use core::fmt;

/// Where a generator's node id came from: [`Generator::node_origin`](crate::Generator::node_origin),
/// and `node_origin` in its stats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum NodeOrigin {
    /// Given: `node`, `datacenter` + `worker`, a node source (`env:VAR`,
    /// `hostname`, `mac`, `ipv4`), or the environment (`FLAKEID_NODE`, …).
    Explicit,
    /// Leased from the store of a lease URL (`lease`, `FLAKEID_LEASE`).
    Leased,
    /// Leased from the platform's coordinator, chosen without configuration: the
    /// Kubernetes Lease store (`k8s://`) in a pod.
    Coordinator,
    /// A free node id on this host, kept by the host guard.
    Host,
    /// No node id is needed: the 128-bit family's engine.
    #[default]
    NotNeeded,
}

impl NodeOrigin {
    /// Every origin, in the order of the chain.
    pub const ALL: [NodeOrigin; 5] = [
        NodeOrigin::Explicit,
        NodeOrigin::Leased,
        NodeOrigin::Coordinator,
        NodeOrigin::Host,
        NodeOrigin::NotNeeded,
    ];

    /// The lower-case name bindings and stats show: `explicit`, `leased`,
    /// `coordinator`, `host`, `none`.
    pub const fn as_str(self) -> &'static str {
        match self {
            NodeOrigin::Explicit => "explicit",
            NodeOrigin::Leased => "leased",
            NodeOrigin::Coordinator => "coordinator",
            NodeOrigin::Host => "host",
            NodeOrigin::NotNeeded => "none",
        }
    }
}

impl fmt::Display for NodeOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::str::FromStr for NodeOrigin {
    type Err = Error;
    fn from_str(s: &str) -> Result<NodeOrigin> {
        NodeOrigin::ALL.into_iter().find(|o| o.as_str() == s).ok_or_else(|| {
            Error::config(
                "node_origin",
                format!(
                    "node_origin must be explicit, leased, coordinator, host or none, got {}",
                    crate::encoding::shown(s)
                ),
            )
        })
    }
}

/// What the builder was given for the node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Given {
    Nothing,
    NodeId,
    Lease,
}

/// The builder's inputs to the decision.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asked {
    pub(crate) given: Given,
    /// False for the 128-bit engine, whose IDs carry no node id.
    pub(crate) needs_node: bool,
    /// `require_node(true)` or the option.
    pub(crate) require_node: bool,
    /// `single_instance(true)` or the option.
    pub(crate) single_instance: bool,
    /// `host_guard(true)`, the default.
    pub(crate) host_guard: bool,
}

/// What `FLAKEID_HOST_GUARD` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum GuardSetting {
    /// Unset or blank: the default directory, which sees only this host's (or
    /// container's) processes.
    #[default]
    Default,
    /// `off`.
    Off,
    /// A directory the user chose (a volume every replica on the host mounts).
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    Directory,
}

/// What the decision reads from the process's surroundings; [`Surroundings::read`]
/// reads them, a test writes them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Surroundings {
    /// Whether this build has a host guard at all (not WebAssembly).
    pub(crate) guard_built: bool,
    pub(crate) guard: GuardSetting,
    /// `KUBERNETES_SERVICE_HOST` is set.
    pub(crate) kubernetes: bool,
    /// The first container signal seen, as the refusal names it.
    pub(crate) container: Option<String>,
    /// `FLAKEID_SINGLE_INSTANCE=true`.
    pub(crate) single_instance: bool,
    /// `FLAKEID_REQUIRE_NODE=true`.
    pub(crate) require_node: bool,
}

/// The variable that declares a process the only instance of its app.
pub(crate) const SINGLE_INSTANCE_ENV: &str = "FLAKEID_SINGLE_INSTANCE";
/// The variable that makes every build without a node id or lease refuse.
pub(crate) const REQUIRE_NODE_ENV: &str = "FLAKEID_REQUIRE_NODE";
/// The variable that moves the host guard's directory or turns the guard off.
pub const HOST_GUARD_ENV: &str = "FLAKEID_HOST_GUARD";
const KUBERNETES_ENV: &str = "KUBERNETES_SERVICE_HOST";

#[cfg(feature = "std")]
impl Surroundings {
    /// Reads the environment and the container signals. A switch variable that is
    /// neither true nor false is a config error naming it.
    pub(crate) fn read() -> Result<Surroundings> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let guard = match var(HOST_GUARD_ENV) {
            None => GuardSetting::Default,
            Some(v) if v.trim() == "off" => GuardSetting::Off,
            Some(_) => GuardSetting::Directory,
        };
        Ok(Surroundings {
            guard_built: cfg!(host_guard),
            guard,
            kubernetes: var(KUBERNETES_ENV).is_some(),
            // The environment is read at every build (a test sets it); the files
            // once per process (a build per request must not read /proc each time),
            // and on unix only: they are Linux's signals (on Windows `/.dockerenv`
            // would be a path on the current drive).
            container: container_signal(|name| std::env::var_os(name).is_some(), |_| None).or_else(|| {
                CONTAINER_FILES
                    .get_or_init(|| cfg!(unix).then(|| container_signal(|_| false, read_marker)).flatten())
                    .clone()
            }),
            single_instance: switch(SINGLE_INSTANCE_ENV, "single_instance", var(SINGLE_INSTANCE_ENV))?,
            require_node: switch(REQUIRE_NODE_ENV, "require_node", var(REQUIRE_NODE_ENV))?,
        })
    }
}

/// What the container files say, read once per process.
#[cfg(feature = "std")]
static CONTAINER_FILES: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// A file's text; a marker file that exists but cannot be read counts all the same.
/// A namespace's link (`/proc/…/ns/…`) reads as its target, such as `mnt:[4026531832]`.
#[cfg(feature = "std")]
fn read_marker(path: &str) -> Option<String> {
    if path.contains("/ns/") {
        return std::fs::read_link(path).ok().map(|t| t.to_string_lossy().into_owned());
    }
    std::fs::read_to_string(path)
        .ok()
        .or_else(|| std::path::Path::new(path).exists().then(String::new))
}

/// A true/false variable: unset is false.
#[cfg(feature = "std")]
fn switch(var: &str, field: &'static str, value: Option<String>) -> Result<bool> {
    match value.as_deref().map(str::trim) {
        None | Some("false" | "0") => Ok(false),
        Some("true" | "1") => Ok(true),
        Some(other) => Err(Error::config(
            field,
            format!("{var} must be true or false, got {}", crate::encoding::shown(other)),
        )),
    }
}

/// The first sign that this process runs in a container, whose `/tmp` (and so the
/// default guard directory) its replicas on the same host do not share: docker's
/// `/.dockerenv`, podman's `/run/.containerenv`, the `container` variable (podman,
/// systemd-nspawn), a docker, containerd, Kubernetes or libpod cgroup, and
/// systemd's `PrivateTmp` (a `/tmp` mounted from `systemd-private-*`). `exists`
/// says whether an environment variable is set, `read` reads a file.
#[cfg(feature = "std")]
pub(crate) fn container_signal(exists: impl Fn(&str) -> bool, read: impl Fn(&str) -> Option<String>) -> Option<String> {
    for file in ["/.dockerenv", "/run/.containerenv"] {
        if read(file).is_some() {
            return Some(format!("{file} exists"));
        }
    }
    if exists("container") {
        return Some("the variable container is set".to_string());
    }
    if let Some(cgroup) = read("/proc/self/cgroup")
        && let Some(word) = ["docker", "containerd", "kubepods", "libpod"]
            .into_iter()
            .find(|w| cgroup.contains(w))
    {
        return Some(format!("/proc/self/cgroup names {word}"));
    }
    let mountinfo = read("/proc/self/mountinfo")?;
    let private_tmp = mountinfo.lines().any(|line| {
        let mut fields = line.split(' ');
        let root = fields.nth(3).unwrap_or("");
        fields.next() == Some("/tmp") && root.contains("systemd-private-")
    });
    if private_tmp {
        return Some("/tmp is systemd's PrivateTmp".to_string());
    }
    (own_mount_namespace(&read) && !propagated(&mountinfo, DEFAULT_GUARD_DIR)).then(|| {
        "its /tmp is a mount no other mount namespace shares, as unshare, bwrap and firejail make it".to_string()
    })
}

/// The host guard's directory when `FLAKEID_HOST_GUARD` names none (unix).
#[cfg(feature = "std")]
pub(crate) const DEFAULT_GUARD_DIR: &str = "/tmp/flakeid-host-guard";

/// Namespace inode numbers below this are the initial namespaces' (fixed numbers,
/// the kernel's include/linux/proc_ns.h); every other namespace is numbered from it
/// up. The initial PID and user namespaces have had fixed numbers since Linux 3.8,
/// the initial mount namespace only on recent kernels (6.18 here).
#[cfg(feature = "std")]
const PROC_DYNAMIC_FIRST: u64 = 0xF000_0000;

/// A namespace link's inode number (`mnt:[4026531832]` → 4026531832).
#[cfg(feature = "std")]
fn ns_inode(read: &impl Fn(&str) -> Option<String>, link: &str) -> Option<u64> {
    let text = read(link)?;
    text.trim().split_once(":[")?.1.strip_suffix(']')?.parse().ok()
}

/// Whether this process has a mount namespace of its own rather than the host's,
/// where that can be told: a fixed-number mount namespace is the host's; a PID or
/// user namespace of its own means a sandbox (unshare, bwrap, firejail), whose mount
/// namespace is its own too; otherwise it is compared with PID 1's, when that can
/// be read. Unknown counts as the host's: a process whose surroundings cannot be
/// read is not refused on a guess.
#[cfg(feature = "std")]
fn own_mount_namespace(read: &impl Fn(&str) -> Option<String>) -> bool {
    let Some(mnt) = ns_inode(read, "/proc/self/ns/mnt") else {
        return false;
    };
    if mnt < PROC_DYNAMIC_FIRST {
        return false;
    }
    let sandboxed = ["/proc/self/ns/pid", "/proc/self/ns/user"]
        .into_iter()
        .any(|link| ns_inode(read, link).is_some_and(|ino| ino >= PROC_DYNAMIC_FIRST));
    sandboxed || ns_inode(read, "/proc/1/ns/mnt").is_some_and(|init| init != mnt)
}

/// Whether the mount that holds `dir` (the last mount listed at the longest mount
/// point above it) is propagated to or from another mount namespace (`shared:` or
/// `master:` in /proc/self/mountinfo), so that its files are the host's. A mount of
/// a namespace's own (a tmpfs mounted on /tmp after `unshare --mount`) has neither.
#[cfg(feature = "std")]
fn propagated(mountinfo: &str, dir: &str) -> bool {
    let mut best: Option<(usize, bool)> = None;
    for line in mountinfo.lines() {
        let Some((head, _)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = head.split(' ').collect();
        let Some(point) = fields.get(4).map(|p| p.replace("\\040", " ")) else {
            continue;
        };
        let under = dir == point
            || point == "/"
            || dir
                .strip_prefix(point.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
        if under && best.is_none_or(|(len, _)| point.len() >= len) {
            let tagged = fields
                .get(6..)
                .unwrap_or_default()
                .iter()
                .any(|f| f.starts_with("shared:") || f.starts_with("master:"));
            best = Some((point.len(), tagged));
        }
    }
    best.is_some_and(|(_, tagged)| tagged)
}

/// The node id's origin, or the refusal that names the fixes.
pub(crate) fn decide(asked: &Asked, around: &Surroundings) -> Result<NodeOrigin> {
    if !asked.needs_node {
        return Ok(NodeOrigin::NotNeeded);
    }
    match asked.given {
        Given::NodeId => return Ok(NodeOrigin::Explicit),
        Given::Lease => return Ok(NodeOrigin::Leased),
        Given::Nothing => {}
    }
    if asked.require_node || around.require_node {
        return Err(required());
    }
    if around.kubernetes {
        return Ok(NodeOrigin::Coordinator);
    }
    if !around.guard_built {
        return Err(unseen(
            "this build has no host guard (WebAssembly) to keep processes apart",
        ));
    }
    if !asked.host_guard || around.guard == GuardSetting::Off {
        return Err(unseen(
            "the host guard is off (FLAKEID_HOST_GUARD=off or host_guard=false)",
        ));
    }
    if let Some(signal) = &around.container
        && around.guard == GuardSetting::Default
        && !(asked.single_instance || around.single_instance)
    {
        return Err(unseen(&format!(
            "this process runs in a container ({signal}), whose replicas on one host do not share its /tmp"
        )));
    }
    Ok(NodeOrigin::Host)
}

/// The fixes every refusal of a missing node id names.
const FIXES: &str = "Fixes: a node id per replica (node, or FLAKEID_NODE, e.g. a StatefulSet ordinal with \
                     node=hostname); a lease URL (lease, or FLAKEID_LEASE: redis://, postgres://, etcd://, k8s://); \
                     in a framework adapter, lease = \"database\" (the app's own PostgreSQL); or the 128-bit family \
                     (UuidGenerator: UUIDv7, ULID, TypeID), which needs no node id";

/// The refusal of `require_node` with no node id.
pub(crate) fn required() -> Error {
    Error::config(
        "node",
        format!(
            "no node id given, and require_node (or {REQUIRE_NODE_ENV}=true) takes none on this host, which a \
             process on another host may take as well. {FIXES}"
        ),
    )
}

/// The refusal of a host pick for a generator on an injected clock: the host's
/// node ids and their counters follow the system clock.
/// Without std there is no system clock: a generator reads the clock it is given.
#[cfg(not(feature = "std"))]
pub(crate) fn no_clock() -> Error {
    Error::config(
        "clock",
        "without the std feature a generator has no system clock: give it one (GeneratorBuilder::clock, a Clock of your time source)",
    )
}

pub(crate) fn on_injected_clock() -> Error {
    Error::config(
        "node",
        "no node id given for a generator on an injected clock: a node id picked on this host is kept on the \
         host's clock, not this one; give one (node=0 in a test)",
    )
}

/// The refusal of a build with no node id where the host guard cannot see every
/// process that may share the ID space (`why`).
pub(crate) fn unseen(why: &str) -> Error {
    Error::config(
        "node",
        format!(
            "no node id given, and {why}: a free node id picked here may be another replica's too. {FIXES}. On one \
             host whose replicas all mount one directory, {HOST_GUARD_ENV}=/that/directory; for the only instance \
             of the app, {SINGLE_INSTANCE_ENV}=true (single_instance)"
        ),
    )
}

/// The refusal in a Kubernetes pod when this build cannot lease from the API
/// server (`cause`: why `k8s://` did not parse).
pub(crate) fn no_coordinator(cause: &Error) -> Error {
    let cause = match cause {
        Error::Config { message, .. } => message.clone(),
        other => other.to_string(),
    };
    Error::config(
        "lease",
        format!(
            "no node id given in a Kubernetes pod ({KUBERNETES_ENV} is set), and this build cannot lease one from \
             the API server ({cause}): a build with flakeid-lease-net installed (its install()) leases k8s:// \
             itself. {FIXES}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(given: Given) -> Asked {
        Asked {
            given,
            needs_node: true,
            require_node: false,
            single_instance: false,
            host_guard: true,
        }
    }

    fn host() -> Surroundings {
        Surroundings {
            guard_built: true,
            ..Surroundings::default()
        }
    }

    fn refused(a: &Asked, s: &Surroundings) -> String {
        match decide(a, s) {
            Err(e) => e.to_string(),
            Ok(o) => panic!("{a:?} {s:?}: {o}, not refused"),
        }
    }

    #[test]
    fn given_and_needless_win_over_everything_around() {
        let worst = Surroundings {
            guard: GuardSetting::Off,
            kubernetes: true,
            container: Some("/.dockerenv exists".into()),
            require_node: true,
            ..Surroundings::default()
        };
        for (given, origin) in [
            (Given::NodeId, NodeOrigin::Explicit),
            (Given::Lease, NodeOrigin::Leased),
        ] {
            let a = Asked {
                require_node: true,
                host_guard: false,
                ..asked(given)
            };
            assert_eq!(decide(&a, &worst).ok(), Some(origin));
        }
        let wide = Asked {
            needs_node: false,
            ..asked(Given::Nothing)
        };
        assert_eq!(decide(&wide, &worst).ok(), Some(NodeOrigin::NotNeeded));
    }

    #[test]
    fn nothing_given_follows_the_chain() {
        let a = asked(Given::Nothing);
        assert_eq!(decide(&a, &host()).ok(), Some(NodeOrigin::Host));
        let pod = Surroundings {
            kubernetes: true,
            container: Some("/proc/self/cgroup names kubepods".into()),
            ..host()
        };
        assert_eq!(decide(&a, &pod).ok(), Some(NodeOrigin::Coordinator));
        // require_node skips the coordinator and the host, from the builder or the environment.
        let required = Asked {
            require_node: true,
            ..a
        };
        assert!(refused(&required, &pod).contains("require_node"));
        let required_env = Surroundings {
            require_node: true,
            ..host()
        };
        assert!(refused(&a, &required_env).contains("require_node"));
    }

    #[test]
    fn where_the_guard_cannot_see_it_refuses_with_the_fixes() {
        let a = asked(Given::Nothing);
        let off = Surroundings {
            guard: GuardSetting::Off,
            ..host()
        };
        let container = Surroundings {
            container: Some("/.dockerenv exists".into()),
            ..host()
        };
        let no_guard = Surroundings::default();
        let guard_off = Asked { host_guard: false, ..a };
        for (a, s, why) in [
            (&a, &off, "host guard is off"),
            (&guard_off, &host(), "host guard is off"),
            (&a, &container, "/.dockerenv exists"),
            (&a, &no_guard, "WebAssembly"),
        ] {
            let text = refused(a, s);
            assert!(text.contains(why), "{text}");
            for fix in ["FLAKEID_NODE", "lease", "lease = \"database\"", "UuidGenerator"] {
                assert!(text.contains(fix), "{fix}: {text}");
            }
        }
        // A container is allowed with a directory its replicas share, or as the only instance.
        let shared = Surroundings {
            guard: GuardSetting::Directory,
            ..container.clone()
        };
        assert_eq!(decide(&a, &shared).ok(), Some(NodeOrigin::Host));
        let only = Asked {
            single_instance: true,
            ..a
        };
        assert_eq!(decide(&only, &container).ok(), Some(NodeOrigin::Host));
        let only_env = Surroundings {
            single_instance: true,
            ..container
        };
        assert_eq!(decide(&a, &only_env).ok(), Some(NodeOrigin::Host));
        // `off` stays refused for the only instance too: nothing would keep a second one apart.
        let only_off = Surroundings {
            single_instance: true,
            ..off
        };
        assert!(refused(&a, &only_off).contains("off"));
    }

    #[test]
    fn container_signals_are_read_and_named() {
        let none = |_: &str| None::<String>;
        assert_eq!(container_signal(|_| false, none), None);
        let file = |f: &'static str| move |p: &str| (p == f).then(String::new);
        assert_eq!(
            container_signal(|_| false, file("/.dockerenv")).as_deref(),
            Some("/.dockerenv exists")
        );
        assert_eq!(
            container_signal(|_| false, file("/run/.containerenv")).as_deref(),
            Some("/run/.containerenv exists")
        );
        assert!(container_signal(|v| v == "container", none).is_some());
        for (cgroup, word) in [
            ("0::/system.slice/docker-3f2a.scope\n", "docker"),
            ("0::/kubepods/burstable/pod1/abc\n", "kubepods"),
            ("0::/machine.slice/libpod-1.scope\n", "libpod"),
        ] {
            let read = |p: &str| (p == "/proc/self/cgroup").then(|| cgroup.to_string());
            assert_eq!(
                container_signal(|_| false, read),
                Some(format!("/proc/self/cgroup names {word}"))
            );
        }
        let host_cgroup = |p: &str| (p == "/proc/self/cgroup").then(|| "0::/user.slice/session-1.scope\n".to_string());
        assert_eq!(container_signal(|_| false, host_cgroup), None);
        let mountinfo = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                         40 22 8:1 /tmp/systemd-private-ab12-app.service-Xy/tmp /tmp rw - ext4 /dev/sda1 rw\n";
        let read = |p: &str| (p == "/proc/self/mountinfo").then(|| mountinfo.to_string());
        assert_eq!(
            container_signal(|_| false, read).as_deref(),
            Some("/tmp is systemd's PrivateTmp")
        );
    }

    /// A /tmp of a mount namespace's own, with no marker: the namespaces' links and the
    /// mount table decide. Namespace numbers: 0xEFFFFFF8 = 4026531832 (the initial mount
    /// namespace's fixed number on recent kernels), 0xEFFFFFFC = 4026531836 (the initial
    /// PID namespace's), 4026531840 and up (any other).
    #[test]
    fn a_tmp_no_other_namespace_shares_is_a_sign() {
        let own_tmp = "25 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n\
                       90 25 0:50 / /tmp rw - tmpfs tmp rw\n";
        let hosts_tmp = "25 1 8:1 / / rw master:1 - ext4 /dev/sda1 rw\n\
                         90 25 0:31 / /tmp rw master:7 - tmpfs tmpfs rw\n";
        // /tmp not a mount of its own: the root's (untagged in a fresh namespace).
        let under_root = "25 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
        let read = |table: &'static str, links: &'static [(&'static str, &'static str)]| {
            move |p: &str| {
                if p == "/proc/self/mountinfo" {
                    return Some(table.to_string());
                }
                links.iter().find(|(l, _)| *l == p).map(|(_, t)| t.to_string())
            }
        };
        let sign = Some("its /tmp is a mount no other mount namespace shares, as unshare, bwrap and firejail make it");
        // unshare --mount --pid (any kernel): its own PID namespace.
        let own_pid: &[_] = &[
            ("/proc/self/ns/mnt", "mnt:[4026532301]"),
            ("/proc/self/ns/pid", "pid:[4026532302]"),
        ];
        assert_eq!(container_signal(|_| false, read(own_tmp, own_pid)).as_deref(), sign);
        assert_eq!(container_signal(|_| false, read(under_root, own_pid)).as_deref(), sign);
        // unshare --mount alone, as root: PID 1's mount namespace differs.
        let own_mnt: &[_] = &[
            ("/proc/self/ns/mnt", "mnt:[4026532301]"),
            ("/proc/self/ns/pid", "pid:[4026531836]"),
            ("/proc/1/ns/mnt", "mnt:[4026531840]"),
        ];
        assert_eq!(container_signal(|_| false, read(own_tmp, own_mnt)).as_deref(), sign);
        // A namespace of its own whose /tmp is the host's, propagated (systemd's
        // ProtectSystem= without PrivateTmp): its guard sees the host's processes.
        assert_eq!(container_signal(|_| false, read(hosts_tmp, own_pid)), None);
        assert_eq!(container_signal(|_| false, read(hosts_tmp, own_mnt)), None);
        // The host's own mount namespace, by its fixed number or as PID 1's, even with
        // nothing propagated (a host without systemd).
        let host_new_kernel: &[_] = &[
            ("/proc/self/ns/mnt", "mnt:[4026531832]"),
            ("/proc/self/ns/pid", "pid:[4026532302]"),
        ];
        assert_eq!(container_signal(|_| false, read(own_tmp, host_new_kernel)), None);
        let host_old_kernel: &[_] = &[
            ("/proc/self/ns/mnt", "mnt:[4026531840]"),
            ("/proc/self/ns/pid", "pid:[4026531836]"),
            ("/proc/1/ns/mnt", "mnt:[4026531840]"),
        ];
        assert_eq!(container_signal(|_| false, read(under_root, host_old_kernel)), None);
        // What cannot be read is not a sign: PID 1's namespace hidden (not root).
        let unreadable: &[_] = &[
            ("/proc/self/ns/mnt", "mnt:[4026532301]"),
            ("/proc/self/ns/pid", "pid:[4026531836]"),
        ];
        assert_eq!(container_signal(|_| false, read(own_tmp, unreadable)), None);
        // The mount that holds the directory is the last one at the longest point;
        // a point is a whole path component, and spaces are escaped.
        assert!(propagated(
            "1 0 8:1 / / rw shared:1 - ext4 a rw\n2 1 0:5 / /tmp rw - tmpfs t rw\n3 1 0:6 / /tmp rw shared:4 - tmpfs t rw\n",
            DEFAULT_GUARD_DIR
        ));
        assert!(!propagated(
            "1 0 8:1 / / rw shared:1 - ext4 a rw\n2 1 0:5 / /tmp rw - tmpfs t rw\n",
            DEFAULT_GUARD_DIR
        ));
        assert!(propagated(
            "1 0 8:1 / / rw shared:1 - ext4 a rw\n2 1 0:5 / /tm rw - tmpfs t rw\n",
            DEFAULT_GUARD_DIR
        ));
        assert!(!propagated(
            "1 0 8:1 / / rw shared:1 - ext4 a rw\n2 1 0:5 / /tmp/flakeid\\040guard rw - tmpfs t rw\n",
            "/tmp/flakeid guard"
        ));
    }

    #[test]
    fn switches_read_true_or_false_and_refuse_the_rest() {
        assert!(!switch(SINGLE_INSTANCE_ENV, "single_instance", None).unwrap_or(true));
        assert!(switch(SINGLE_INSTANCE_ENV, "single_instance", Some("true".into())).unwrap_or(false));
        let err = switch(REQUIRE_NODE_ENV, "require_node", Some("yes".into())).unwrap_err();
        assert!(
            err.to_string().contains("FLAKEID_REQUIRE_NODE must be true or false"),
            "{err}"
        );
    }

    #[test]
    fn names_round_trip() {
        for o in NodeOrigin::ALL {
            assert_eq!(o.as_str().parse::<NodeOrigin>().ok(), Some(o));
        }
        assert_eq!(NodeOrigin::default().as_str(), "none");
    }
}

//! Which addresses the webhook deliverer may connect to: global unicast only, unless the
//! operator allows more (`webhook_allow`: host names, addresses and CIDR blocks, e.g. a bridge
//! on the same machine: `127.0.0.1/32,hooks.internal`).
//!
//! The check is made when the HTTP client connects — the resolver the client uses drops every
//! address that is not allowed, and a URL whose host is a literal address is checked before
//! the request — so a name that resolved to a public address when the webhook was registered
//! and to `127.0.0.1` now (DNS rebinding) still cannot reach inside the network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// The operator's exceptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    hosts: Vec<String>,
    nets: Vec<(IpAddr, u8)>,
}

impl Allowlist {
    /// `host, 10.1.2.3, 127.0.0.0/8, ::1` — comma-separated; empty allows nothing extra.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut list = Allowlist::default();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (addr, prefix) = match entry.split_once('/') {
                Some((addr, prefix)) => (addr, Some(prefix)),
                None => (entry, None),
            };
            match addr.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                Ok(ip) => {
                    let max = if ip.is_ipv4() { 32 } else { 128 };
                    let prefix = match prefix {
                        Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max).ok_or_else(|| {
                            format!("webhook_allow: {entry:?} has a prefix length that is not 0 to {max}")
                        })?,
                        None => max,
                    };
                    list.nets.push((ip, prefix));
                }
                Err(_) if prefix.is_none() && is_host_name(entry) => list.hosts.push(entry.to_ascii_lowercase()),
                Err(_) => {
                    return Err(format!("webhook_allow: {entry:?} is not a host name, an address or a CIDR block"))
                }
            }
        }
        Ok(list)
    }

    /// Whether the operator named this host.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    /// Whether the operator named a block holding this address.
    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|(net, prefix)| in_block(ip, *net, *prefix))
    }

    /// Whether a connection to `ip`, reached through `host`, is allowed.
    pub fn permits(&self, host: &str, ip: IpAddr) -> bool {
        is_global(ip) || self.allows_host(host) || self.allows_ip(ip)
    }
}

fn is_host_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

fn in_block(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix)) };
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = if prefix == 0 { 0 } else { u128::MAX << (128 - u32::from(prefix)) };
            u128::from(ip) & mask == u128::from(net) & mask
        }
        // An IPv4 block also covers that address mapped into IPv6.
        (IpAddr::V6(ip), IpAddr::V4(_)) => ip.to_ipv4_mapped().is_some_and(|v4| in_block(IpAddr::V4(v4), net, prefix)),
        _ => false,
    }
}

/// Whether an address is global unicast: not loopback, private, link-local, unique-local,
/// shared (CGNAT), multicast, broadcast, unspecified, reserved or for documentation, and not
/// one of those wrapped in IPv6 (mapped, compatible, 6to4, NAT64).
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

fn is_global_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let blocked = a == 0 // "this network"
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local, and the cloud metadata address 169.254.169.254
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments (192.0.0.0/24)
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 224; // multicast, reserved, broadcast
    !blocked
}

fn is_global_v6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    let seg = ip.segments();
    let embedded_v4 = |shift: u32| Ipv4Addr::from(((bits >> shift) & 0xffff_ffff) as u32);
    if bits >> 32 == 0xffff {
        return is_global_v4(embedded_v4(0)); // ::ffff:a.b.c.d, IPv4-mapped
    }
    if bits >> 32 == 0 {
        // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d: nothing to connect to.
        return false;
    }
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        return is_global_v4(embedded_v4(0)); // 64:ff9b::a.b.c.d, NAT64
    }
    if seg[0] == 0x2002 {
        return is_global_v4(embedded_v4(80)); // 2002:aabb:ccdd::, 6to4
    }
    let blocked = (seg[0] == 0x0064 && seg[1] == 0xff9b) // 64:ff9b:1::/48, local NAT64
        || (seg[0] == 0x0100 && seg[1] == 0 && seg[2] == 0 && seg[3] == 0) // discard
        || (seg[0] == 0x2001 && seg[1] < 0x0200) // IETF protocol assignments, Teredo
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
        || (seg[0] & 0xfff0) == 0x3ff0 // documentation (3fff::/20)
        || (seg[0] & 0xfe00) == 0xfc00 // unique-local (fd00:ec2::254, a metadata address, too)
        || (seg[0] & 0xffc0) == 0xfe80 // link-local
        || (seg[0] & 0xffc0) == 0xfec0 // site-local
        || (seg[0] & 0xff00) == 0xff00; // multicast
    !blocked
}

/// Why a delivery could not be made because of where it would go.
#[derive(Debug)]
pub struct NotAllowed;

impl std::fmt::Display for NotAllowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("address not allowed")
    }
}

impl std::error::Error for NotAllowed {}

/// The deliverer's resolver: the system's, less every address not allowed.
pub struct GuardedResolver {
    allow: Arc<Allowlist>,
}

impl GuardedResolver {
    pub fn new(allow: Arc<Allowlist>) -> Self {
        Self { allow }
    }
}

/// The addresses of `host` that may be connected to; none is an error.
pub fn filter(allow: &Allowlist, host: &str, addrs: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, NotAllowed> {
    let allowed: Vec<SocketAddr> = addrs.into_iter().filter(|a| allow.permits(host, a.ip())).collect();
    if allowed.is_empty() {
        Err(NotAllowed)
    } else {
        Ok(allowed)
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow = self.allow.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed = filter(&allow, &host, addrs)?;
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether a URL whose host is a literal address (which the client does not resolve, so the
/// resolver cannot check it) may be requested; names are left to the resolver.
pub fn literal_allowed(allow: &Allowlist, url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    match host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        Ok(ip) => allow.permits("", ip),
        Err(_) => true,
    }
}

/// Whether a URL may be registered as far as can be told without resolving it: a literal
/// address must be allowed, and `localhost` (and names under it) must be named by the operator.
/// Names are checked again, address by address, when the client resolves them.
pub fn url_allowed(allow: &Allowlist, url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    match host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        Ok(ip) => allow.permits("", ip),
        Err(_) => {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            let local = name == "localhost" || name.ends_with(".localhost");
            !local || allow.allows_host(&name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_global_addresses() {
        for inside in [
            "127.0.0.1",
            "127.255.0.9",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.10",
            "198.18.0.1",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
        ] {
            assert!(!is_global(ip(inside)), "{inside} counted as global");
        }
        for outside in [
            "8.8.8.8",
            "1.1.1.1",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::",
        ] {
            assert!(is_global(ip(outside)), "{outside} counted as not global");
        }
    }

    #[test]
    fn the_resolver_drops_what_is_not_allowed() {
        let none = Allowlist::default();
        let at = |text: &str| SocketAddr::new(ip(text), 0);
        // A name that now resolves inside the network (DNS rebinding) is refused…
        for inside in ["10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1", "127.0.0.1", "::1"] {
            assert!(filter(&none, "hooks.example", vec![at(inside)]).is_err(), "{inside}");
        }
        // …and only the global addresses of a mixed answer are kept.
        let kept = filter(&none, "hooks.example", vec![at("10.0.0.1"), at("8.8.8.8")]).unwrap();
        assert_eq!(kept, vec![at("8.8.8.8")]);
        // The operator's allowlist, by block or by name.
        let allow = Allowlist::parse("127.0.0.0/8, ::1, bridge.internal").unwrap();
        assert!(filter(&allow, "x", vec![at("127.0.0.1")]).is_ok());
        assert!(filter(&allow, "x", vec![at("::ffff:127.0.0.1")]).is_ok());
        assert!(filter(&allow, "x", vec![at("::1")]).is_ok());
        assert!(filter(&allow, "x", vec![at("10.0.0.1")]).is_err());
        assert!(filter(&allow, "Bridge.Internal.", vec![at("10.0.0.1")]).is_ok());
        assert!(Allowlist::parse("10.0.0.0/33").is_err());
        assert!(Allowlist::parse("not a host").is_err());
    }

    #[test]
    fn literal_addresses_and_localhost_in_urls() {
        let none = Allowlist::default();
        let url = |text: &str| reqwest::Url::parse(text).unwrap();
        for inside in [
            "http://127.0.0.1:9/hook",
            "http://[::1]/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://a.localhost/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::ffff:7f00:1]/",
            "http://0x7f.1/",
            "http://2130706433/",
        ] {
            assert!(!url_allowed(&none, &url(inside)), "{inside}");
        }
        assert!(url_allowed(&none, &url("https://hooks.example/x")));
        assert!(url_allowed(&none, &url("http://8.8.8.8/x")));
        let allow = Allowlist::parse("127.0.0.1, localhost").unwrap();
        assert!(url_allowed(&allow, &url("http://127.0.0.1:9/hook")));
        assert!(url_allowed(&allow, &url("http://localhost:9/hook")));
    }
}

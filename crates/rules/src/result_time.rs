//! When a battle's result time is: the post's stamp (the seed's rule), or the stamp plus a
//! sealed delay the poster cannot know in advance (a campaign option, docs/fairness.md).
//!
//! The seed's result number is public arithmetic on the second a post is stamped, so a player
//! who knows the victory number can aim an attack at a winning second. With `sealed_delay` the
//! result number is the seed's square-root rule applied to `stamp + delay`, where the delay
//! (0 to 59.999 s) comes from a secret the server committed to before the campaign's first post:
//!
//! * At creation the server draws a secret `s_K` and publishes `s_0` of the hash chain
//!   `s_{k-1} = SHA-256(s_k)`. Secrets are written as 64 lower-case hexadecimal characters, and
//!   SHA-256 is taken over those 64 ASCII characters, so `printf '%s' s_k | sha256sum` prints
//!   `s_{k-1}`.
//! * The k-th result-fixing post uses `s_k`: the delay is the first 8 bytes (16 hex digits) of
//!   SHA-256 over the 128 ASCII characters `s_k` followed by the post's own chain hash (its 64
//!   hex characters), read as a big-endian unsigned integer, modulo 60,000 milliseconds.
//! * The outcome reveals `s_k`; SHA-256 of it is `s_{k-1}`, back to the published `s_0`.
//!
//! A chain has `length` secrets (10,000 by default). The draw that uses a chain's last secret
//! publishes the next chain's `s_0` in its outcome, before any post that needs it.
//!
//! `2^64 mod 60,000` is 51,616, so the residues below 51,616 come up once more in 2^64 than the
//! others: a bias of 1 in 3·10^14, far below anything a campaign could detect.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::dice::stamp_text;

/// The delay is 0 to 59,999 milliseconds.
pub const DELAY_SPAN_MS: u64 = 60_000;

/// Secrets in one chain, unless the server is configured otherwise.
pub const DEFAULT_CHAIN_LENGTH: u64 = 10_000;

/// How a campaign fixes a battle's result time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultTime {
    /// The post's stamp (the seed's rule, the default).
    #[default]
    Post,
    /// The stamp plus a delay from the campaign's sealed hash chain.
    SealedDelay,
}

/// One step down the chain: `s_{k-1}` = SHA-256 over the 64 hex characters of `s_k`, in hex.
pub fn step_down(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// `steps` steps down the chain from `secret`.
pub fn walk_down(secret: &str, steps: u64) -> String {
    let mut s = secret.to_owned();
    for _ in 0..steps {
        s = step_down(&s);
    }
    s
}

/// A chain's top secret `s_K` from 32 random bytes.
pub fn top_secret(random: [u8; 32]) -> String {
    hex::encode(random)
}

/// Whether `text` is written as a secret is: 64 lower-case hex digits.
pub fn is_secret_text(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Which chain and which secret in it the k-th draw (1, 2, …) uses.
pub fn position_of(draw: u64, length: u64) -> (u64, u64) {
    let length = length.max(1);
    let index = draw.saturating_sub(1);
    (index / length, index % length + 1)
}

/// The secret a post that fixes a result uses: the k-th draw of the campaign, the chain it
/// belongs to and that chain's published `s_0`, and — for the last secret of a chain — the next
/// chain's `s_0`, published with this draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainSecret {
    /// The campaign's k-th result-fixing post (1, 2, …), counting void posts too: a secret once
    /// revealed is never used again.
    pub draw: u64,
    /// The chain it comes from: 0 is the one published when the campaign was created.
    pub chain: u64,
    /// Its place in that chain (1 to the chain's length): `position` steps of SHA-256 lead to
    /// the chain's `s_0`.
    pub position: u64,
    /// `s_k`, revealed by this draw.
    pub secret: String,
    /// The chain's `s_0`, published before the chain's first draw.
    pub commitment: String,
    /// When this is the chain's last secret: the next chain's `s_0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_commitment: Option<String>,
}

impl SealedDelay {
    /// The chain secret the delay revealed.
    pub fn chain_secret(&self) -> ChainSecret {
        ChainSecret {
            draw: self.draw,
            chain: self.chain,
            position: self.position,
            secret: self.secret.clone(),
            commitment: self.commitment.clone(),
            next_commitment: self.next_commitment.clone(),
        }
    }
}

impl ChainSecret {
    /// The secret of draw `draw` from a chain's top secret `s_K` (the chain has `length`
    /// secrets and its `s_0` is `walk_down(top, length)`).
    pub fn from_top(draw: u64, length: u64, top: &str, next_top: Option<&str>) -> Self {
        let (chain, position) = position_of(draw, length);
        let secret = walk_down(top, length - position);
        let commitment = walk_down(&secret, position);
        let next_commitment = (position == length).then(|| next_top.map(|t| walk_down(t, length))).flatten();
        Self { draw, chain, position, secret, commitment, next_commitment }
    }

    /// Whether the revealed secret leads to the chain's `s_0` in `position` steps.
    pub fn links_to_commitment(&self) -> bool {
        walk_down(&self.secret, self.position) == self.commitment
    }

    /// The delay for the post whose chain hash is `post_hash`, and the working.
    pub fn delay(&self, post_hash: &str, stamp: DateTime<Utc>) -> SealedDelay {
        let digest = hex::encode(Sha256::digest(format!("{}{post_hash}", self.secret).as_bytes()));
        let first_8_bytes = digest[..16].to_owned();
        let value = u64::from_str_radix(&first_8_bytes, 16).unwrap_or(0);
        let delay_ms = value % DELAY_SPAN_MS;
        let result_time = stamp + Duration::milliseconds(delay_ms as i64);
        SealedDelay {
            draw: self.draw,
            chain: self.chain,
            position: self.position,
            secret: self.secret.clone(),
            previous: step_down(&self.secret),
            commitment: self.commitment.clone(),
            next_commitment: self.next_commitment.clone(),
            post_hash: post_hash.to_owned(),
            digest,
            first_8_bytes,
            first_8_bytes_decimal: value.to_string(),
            delay_ms,
            stamp: stamp_text(stamp),
            result_time: stamp_text(result_time),
        }
    }
}

/// The working of a sealed delay, as a battle's outcome publishes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedDelay {
    pub draw: u64,
    pub chain: u64,
    pub position: u64,
    /// `s_k`.
    pub secret: String,
    /// `s_{k-1}` = SHA-256(`s_k`): the previous draw's secret, or `s_0` for the first.
    pub previous: String,
    pub commitment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_commitment: Option<String>,
    /// The post's chain hash (fixed before the rules decide: it covers the post's fields, not
    /// its outcomes).
    pub post_hash: String,
    /// SHA-256 over `s_k` followed by the post hash (128 hex characters).
    pub digest: String,
    /// Its first 16 hex digits …
    pub first_8_bytes: String,
    /// … as a number (a string: it may pass 2^53).
    pub first_8_bytes_decimal: String,
    /// That number mod 60,000.
    pub delay_ms: u64,
    pub stamp: String,
    /// stamp + delay: the time whose time of day gives the result number.
    pub result_time: String,
}

impl SealedDelay {
    pub fn result_time(&self) -> Option<DateTime<Utc>> {
        DateTime::parse_from_rfc3339(&self.result_time).ok().map(|t| t.with_timezone(&Utc))
    }

    /// Shell commands that redo each step.
    pub fn commands(&self) -> Vec<String> {
        vec![
            format!("printf '%s' {} | sha256sum   # {}", self.secret, self.previous),
            format!("printf '%s%s' {} {} | sha256sum   # {}", self.secret, self.post_hash, self.digest),
            format!(
                "echo 'ibase=16; {}' | bc   # {}",
                self.first_8_bytes.to_ascii_uppercase(),
                self.first_8_bytes_decimal
            ),
            format!("echo '{} % {DELAY_SPAN_MS}' | bc   # {}", self.first_8_bytes_decimal, self.delay_ms),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    const TOP: &str = "7f3c2a9e5b1d4c8f6a0e2b7d9c3f1a5e8b4d6c2a0f9e7b3d1c5a8f6e4b2d0c9a";

    #[test]
    fn a_step_down_is_sha256_of_the_hex_text() {
        // printf '%s' 7f3c…0c9a | sha256sum
        assert_eq!(step_down(TOP), hex::encode(Sha256::digest(TOP.as_bytes())));
        assert!(is_secret_text(&step_down(TOP)));
    }

    #[test]
    fn draws_fill_a_chain_then_the_next() {
        assert_eq!(position_of(1, 3), (0, 1));
        assert_eq!(position_of(3, 3), (0, 3));
        assert_eq!(position_of(4, 3), (1, 1));
        let next = step_down("next");
        let last = ChainSecret::from_top(3, 3, TOP, Some(&next));
        assert_eq!(last.secret, TOP);
        assert_eq!(last.next_commitment, Some(walk_down(&next, 3)));
        let first_of_next = ChainSecret::from_top(4, 3, &next, None);
        assert_eq!(Some(first_of_next.commitment.clone()), last.next_commitment);
        assert!(first_of_next.links_to_commitment());
        assert_eq!(ChainSecret::from_top(2, 3, TOP, Some(&next)).next_commitment, None);
    }

    /// The worked example of docs/arithmetic.md, redone there with `sha256sum` and `bc`.
    #[test]
    fn the_documented_worked_example() {
        let top = "13926dd646472840fe3b480f15747b5a344738543b1568abe9a61d535b44b1c9";
        let s = ChainSecret::from_top(1, 3, top, None);
        assert_eq!(s.secret, "e8c593fec897dadd42cda9333d96875a75321fed36866dd66709c43c4b533333");
        assert_eq!(s.commitment, "49b9fd1015b4991d4c7552e8ee2ae9ad36c6b3f999ee62ac65d475f691d9da36");
        let stamp = Utc.with_ymd_and_hms(2026, 3, 2, 9, 51, 45).unwrap() + Duration::milliseconds(250);
        let hash = crate::chain::Link {
            prev_hash: "5cebc99a1e83ce7fe56813bf057e4d74e281fdda8f49450960115bb5b50f65d9",
            campaign_id: "c0ffee00-0000-4000-8000-000000000001",
            seq: 14,
            stamp,
            author_id: "a0000000-0000-4000-8000-000000000002",
            side: Some("union"),
            kind: "attack",
            body: r#"{"target":"0604","units":["us-14th-inf","us-13th-inf","us-12th-inf","us-27th-inf"]}"#,
        }
        .hash();
        assert_eq!(hash, "71dc53a1bdf01a12cf15e6b162acb1c332f08d6160a9ced4fdbd6b587ad758f3");
        let d = s.delay(&hash, stamp);
        assert_eq!(d.digest, "b5a73ca502d2c2245379db738455cce5fc02c81f03cf93ec55ac4f4f8d96d011");
        assert_eq!(d.first_8_bytes_decimal, "13089497521390273060");
        assert_eq!(d.delay_ms, 13_060);
        assert_eq!(d.result_time, "2026-03-02T09:51:58.310Z");
        let r = crate::Clock::default().result_number(d.result_time().unwrap());
        assert_eq!((r.n, r.sqrt.as_str(), r.result), (95158, "308.476903511429", 14));
    }

    proptest! {
        /// For random stamps, chain positions and post hashes: the result time is in
        /// [stamp, stamp + 60 s), the revealed secret leads back to s_0 and its step down is the
        /// draw before's secret, and the published working recomputes.
        #[test]
        fn the_result_time_is_within_a_minute_and_the_secret_links_back(
            ms in 0i64..4_000_000_000_000,
            length in 1u64..40,
            draw in 1u64..120,
            hash in proptest::array::uniform32(any::<u8>()),
            top in proptest::array::uniform32(any::<u8>()),
        ) {
            let stamp = Utc.timestamp_millis_opt(ms).unwrap();
            let post_hash = hex::encode(hash);
            let top = top_secret(top);
            let s = ChainSecret::from_top(draw, length, &top, None);
            prop_assert!(s.links_to_commitment());
            prop_assert_eq!(&walk_down(&top, length), &s.commitment);
            if s.position > 1 {
                let before = ChainSecret::from_top(draw - 1, length, &top, None);
                prop_assert_eq!(step_down(&s.secret), before.secret);
            }
            let d = s.delay(&post_hash, stamp);
            let t = d.result_time().unwrap();
            prop_assert!(t >= stamp && t < stamp + Duration::seconds(60));
            prop_assert_eq!((t - stamp).num_milliseconds() as u64, d.delay_ms);
            let digest = hex::encode(Sha256::digest(format!("{}{}", d.secret, d.post_hash)));
            prop_assert_eq!(&digest, &d.digest);
            let value = u64::from_be_bytes(hex::decode(&digest[..16]).unwrap().try_into().unwrap());
            prop_assert_eq!(value.to_string(), d.first_8_bytes_decimal);
            prop_assert_eq!(value % 60_000, d.delay_ms);
            prop_assert_eq!(&d.previous, &step_down(&d.secret));
        }
    }
}

//! The server's signing key: an Ed25519 key that signs every post's receipt.
//!
//! It is `ADJUTANT_SIGNING_KEY` (64 hex digits: the 32-byte secret seed) when that is set;
//! otherwise Adjutant makes one on its first start and keeps it in `data_dir/signing-key`
//! (readable only by its owner). It is never in the database, so someone who can rewrite the
//! database cannot sign what they wrote. The public keys are served at `GET /v1/keys` and
//! printed at start. Rotating (`adjutant rotate-signing-key`) moves the current public key to
//! `data_dir/signing-keys-retired` (one hex public key a line; `retired_signing_keys` in the
//! configuration adds more), so receipts signed before still verify.
//!
//! The signed bytes are [`adjutant_rules::chain::receipt_message`].

use std::io::Write;
use std::path::PathBuf;

use adjutant_store::{Post, Receipt};
use ed25519_dalek::{Signature, SigningKey, Verifier, VerifyingKey};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::config::Config;
use crate::operator::write_secret_file;

/// The file, in the data folder, that holds the key Adjutant made.
pub const KEY_FILE: &str = "signing-key";
/// The file, in the data folder, of retired public keys.
pub const RETIRED_FILE: &str = "signing-keys-retired";

/// A key's id: `ed25519:` and the first 16 hex digits of SHA-256 over the 32 public-key bytes.
pub fn key_id(public: &VerifyingKey) -> String {
    format!("ed25519:{}", &hex::encode(Sha256::digest(public.as_bytes()))[..16])
}

/// Reads a public key from 64 hex digits.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes: [u8; 32] = hex::decode(text.trim())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| format!("{:?} is not an Ed25519 public key (64 hex digits)", text.trim()))?;
    VerifyingKey::from_bytes(&bytes).map_err(|e| format!("{:?} is not an Ed25519 public key: {e}", text.trim()))
}

/// The message a post's receipt signs.
pub fn receipt_message(post: &Post) -> String {
    adjutant_rules::chain::receipt_message(&post.campaign_id.to_string(), post.seq, post.stamp, &post.hash)
}

/// Checks a receipt's signature over `message` with `public`.
pub fn signature_holds(public: &VerifyingKey, message: &str, signature_hex: &str) -> bool {
    let Some(bytes) = hex::decode(signature_hex).ok().and_then(|b| <[u8; 64]>::try_from(b).ok()) else {
        return false;
    };
    public.verify(message.as_bytes(), &Signature::from_bytes(&bytes)).is_ok()
}

/// Whether every signature of `signed` (message, hex signature) holds under `public`, checked
/// together: the answer [`signature_holds`] gives for each, in a fraction of the time.
///
/// This is ed25519-dalek's batch equation, each signature's `[s]B = R + [k]A` weighted by a
/// random 128-bit z and all of them summed into one multiscalar multiplication, which one bad
/// signature among them breaks but with probability 2⁻¹²⁸:
/// `[−Σ zᵢsᵢ]B + Σ [zᵢ]Rᵢ + [Σ zᵢkᵢ]A = 0`. Its one change is that every signature here is under
/// the same key, so their A terms are one point with the sum of their weights: the
/// multiplication takes n + 2 points, n of them with 128-bit scalars, instead of 2n + 1, half of
/// them with full-width ones, which is about a third of the work.
/// Like the check of one, it refuses an s that is not below the group order. (Where the two
/// could answer differently, an R with a small-order component or encoded other than as its
/// point compresses, the signature is not one the server's signing makes.)
pub fn signatures_hold<'a>(public: &VerifyingKey, signed: impl IntoIterator<Item = (&'a [u8], &'a str)>) -> bool {
    use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
    use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
    use curve25519_dalek::scalar::Scalar;
    use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
    use rand::RngCore;

    let a = public.to_edwards();
    let mut rng = rand::thread_rng();
    let (mut b_weight, mut a_weight) = (Scalar::ZERO, Scalar::ZERO);
    let mut r_weights = Vec::new();
    let mut rs = Vec::new();
    for (message, signature_hex) in signed {
        let mut bytes = [0u8; 64];
        if hex::decode_to_slice(signature_hex, &mut bytes).is_err() {
            return false;
        }
        let (r, s) = bytes.split_at(32);
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(s.try_into().expect("32 bytes"))) else {
            return false;
        };
        let k = Scalar::from_hash(
            sha2::Sha512::new().chain_update(r).chain_update(public.as_bytes()).chain_update(message),
        );
        let mut z = [0u8; 32];
        rng.fill_bytes(&mut z[..16]);
        let z = Scalar::from_bytes_mod_order(z);
        b_weight -= z * s;
        a_weight += z * k;
        r_weights.push(z);
        rs.push(CompressedEdwardsY(r.try_into().expect("32 bytes")));
    }
    if rs.is_empty() {
        return true;
    }
    EdwardsPoint::optional_multiscalar_mul(
        [b_weight, a_weight].into_iter().chain(r_weights),
        [Some(ED25519_BASEPOINT_POINT), Some(a)].into_iter().chain(rs.iter().map(CompressedEdwardsY::decompress)),
    )
    .is_some_and(|sum| sum.is_identity())
}

/// One public key, as `GET /v1/keys` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct PublicKey {
    /// `ed25519:` and 16 hex digits.
    #[schema(example = "ed25519:3f1c0a9e5b7d2468")]
    pub key_id: String,
    /// Always `ed25519`.
    pub algorithm: String,
    /// The 32 public-key bytes, hex.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub public_key: String,
    /// True for the key signing new receipts; retired keys verify older ones.
    pub current: bool,
}

/// The current key and the retired public keys.
pub struct Keyring {
    /// The current key, as AWS-LC signs with it: the signatures are ed25519-dalek's, bit for bit
    /// (Ed25519's are deterministic), made in about half the time. The secret is held here only.
    signer: aws_lc_rs::signature::Ed25519KeyPair,
    /// Its public key, as the checks of receipts take it.
    public: VerifyingKey,
    current_id: String,
    retired: Vec<(String, VerifyingKey)>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring").field("current", &self.current_id).finish_non_exhaustive()
    }
}

/// Where the signing key came from.
#[derive(Debug, Clone)]
pub enum Origin {
    Environment,
    File(PathBuf),
    Made(PathBuf),
}

impl Keyring {
    pub fn new(signing: SigningKey, retired: Vec<VerifyingKey>) -> Self {
        let public = signing.verifying_key();
        let current_id = key_id(&public);
        let retired = retired.into_iter().filter(|k| *k != public).map(|k| (key_id(&k), k)).collect();
        // A seed and the public key it derives always agree; AWS-LC checks that they do.
        let signer =
            aws_lc_rs::signature::Ed25519KeyPair::from_seed_and_public_key(signing.as_bytes(), public.as_bytes())
                .expect("an Ed25519 seed and its own public key");
        Self { signer, public, current_id, retired }
    }

    /// The keyring of this configuration, the key made and stored if there is none yet.
    pub fn load(config: &Config) -> Result<(Self, Origin), String> {
        let (signing, origin) = match &config.signing_key {
            Some(seed) => (parse_seed("ADJUTANT_SIGNING_KEY", seed.expose())?, Origin::Environment),
            None => {
                let path = config.data_dir.join(KEY_FILE);
                match std::fs::read_to_string(&path) {
                    Ok(text) => (parse_seed(&path.display().to_string(), &text)?, Origin::File(path)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        let key = new_key();
                        match write_secret_file(
                            &path,
                            &hex::encode(key.to_bytes()),
                            "the signing key",
                            "ADJUTANT_SIGNING_KEY",
                        ) {
                            Ok(()) => (key, Origin::Made(path)),
                            // Another process made it first: use that one.
                            Err(_) if path.exists() => {
                                let text =
                                    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                                (parse_seed(&path.display().to_string(), &text)?, Origin::File(path))
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Err(e) => return Err(format!("{}: {e}", path.display())),
                }
            }
        };
        let mut retired = Vec::new();
        for text in config.retired_signing_keys.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            retired.push(parse_public_key(text).map_err(|e| format!("retired_signing_keys: {e}"))?);
        }
        let retired_file = config.data_dir.join(RETIRED_FILE);
        if let Ok(text) = std::fs::read_to_string(&retired_file) {
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
                retired.push(parse_public_key(line).map_err(|e| format!("{}: {e}", retired_file.display()))?);
            }
        }
        Ok((Self::new(signing, retired), origin))
    }

    /// The id of the key signing new receipts.
    pub fn current_id(&self) -> &str {
        &self.current_id
    }

    pub fn current_public(&self) -> VerifyingKey {
        self.public
    }

    /// Signs a post's receipt with the current key.
    pub fn sign(&self, post: &Post) -> Receipt {
        let signature = self.signer.sign(receipt_message(post).as_bytes());
        Receipt { key_id: self.current_id.clone(), signature: hex::encode(signature.as_ref()) }
    }

    /// The public key with this id, current or retired.
    pub fn public(&self, key_id: &str) -> Option<VerifyingKey> {
        if key_id == self.current_id {
            return Some(self.public);
        }
        self.retired.iter().find(|(id, _)| id == key_id).map(|(_, k)| *k)
    }

    /// Every public key, the current one first.
    pub fn public_keys(&self) -> Vec<PublicKey> {
        std::iter::once((self.current_id.clone(), self.public, true))
            .chain(self.retired.iter().map(|(id, k)| (id.clone(), *k, false)))
            .map(|(key_id, k, current)| PublicKey {
                key_id,
                algorithm: "ed25519".into(),
                public_key: hex::encode(k.as_bytes()),
                current,
            })
            .collect()
    }

    /// What is wrong with a post's receipt, if anything.
    pub fn check(&self, post: &Post) -> Option<String> {
        let receipt = post.receipt.as_ref()?;
        let Some(public) = self.public(&receipt.key_id) else {
            return Some(format!("its receipt is signed by key {}, which this server does not list", receipt.key_id));
        };
        (!signature_holds(&public, &receipt_message(post), &receipt.signature)).then(|| {
            format!(
                "its receipt's signature does not match its campaign, seq, stamp and hash: the post was changed after the server signed it (key {})",
                receipt.key_id
            )
        })
    }
}

impl Keyring {
    /// What is wrong with each post's receipt: [`Keyring::check`] of each, the signatures of
    /// one key checked together ([`signatures_hold`]). When they do not all hold, each is
    /// checked on its own, to name the posts at fault.
    pub fn check_all(&self, posts: &[Post]) -> Vec<Option<String>> {
        let mut problems = vec![None; posts.len()];
        let mut by_key: Vec<(&str, VerifyingKey, Vec<usize>)> = Vec::new();
        for (i, post) in posts.iter().enumerate() {
            let Some(receipt) = &post.receipt else { continue };
            match (by_key.iter_mut().find(|(id, _, _)| *id == receipt.key_id), self.public(&receipt.key_id)) {
                (Some((_, _, signed)), _) => signed.push(i),
                (None, Some(public)) => by_key.push((&receipt.key_id, public, vec![i])),
                (None, None) => problems[i] = self.check(post),
            }
        }
        for (_, public, signed) in by_key {
            let messages: Vec<String> = signed.iter().map(|&i| receipt_message(&posts[i])).collect();
            let receipts = signed.iter().map(|&i| posts[i].receipt.as_ref().map_or("", |r| r.signature.as_str()));
            if !signatures_hold(&public, messages.iter().map(String::as_bytes).zip(receipts)) {
                for i in signed {
                    problems[i] = self.check(&posts[i]);
                }
            }
        }
        problems
    }
}

fn new_key() -> SigningKey {
    let mut seed = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut seed);
    SigningKey::from_bytes(&seed)
}

fn parse_seed(source: &str, text: &str) -> Result<SigningKey, String> {
    let seed: [u8; 32] = hex::decode(text.trim()).ok().and_then(|b| b.try_into().ok()).ok_or_else(|| {
        format!("the signing key in {source} is not 64 hex digits (make one with `openssl rand -hex 32`)")
    })?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Retires the key in the data folder: its public key joins the retired ones, and a new key
/// signs from the next start on. Returns the old and the new key ids.
pub fn rotate(config: &Config) -> Result<(String, String), String> {
    if config.signing_key.is_some() {
        return Err("the signing key comes from ADJUTANT_SIGNING_KEY: set a new one there and add the old \
             public key to ADJUTANT_RETIRED_SIGNING_KEYS"
            .into());
    }
    let (ring, _) = Keyring::load(config)?;
    let retired_file = config.data_dir.join(RETIRED_FILE);
    let mut retired = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&retired_file)
        .map_err(|e| format!("{}: {e}", retired_file.display()))?;
    retired
        .write_all(format!("{}\n", hex::encode(ring.current_public().as_bytes())).as_bytes())
        .and_then(|()| retired.sync_all())
        .map_err(|e| format!("{}: {e}", retired_file.display()))?;
    let key_file = config.data_dir.join(KEY_FILE);
    let new = new_key();
    let staged = config.data_dir.join(format!("{KEY_FILE}.new"));
    let _ = std::fs::remove_file(&staged);
    write_secret_file(&staged, &hex::encode(new.to_bytes()), "the signing key", "ADJUTANT_SIGNING_KEY")?;
    std::fs::rename(&staged, &key_file).map_err(|e| format!("{}: {e}", key_file.display()))?;
    Ok((ring.current_id.clone(), key_id(&new.verifying_key())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::path::Path;

    fn config_in(dir: &Path) -> Config {
        let mut config = Config::defaults();
        config.data_dir = dir.join("data");
        config
    }

    fn post() -> Post {
        Post {
            campaign_id: uuid::Uuid::nil(),
            seq: 3,
            stamp: chrono::Utc.with_ymd_and_hms(2026, 11, 21, 9, 51, 45).unwrap(),
            author_id: uuid::Uuid::nil(),
            side: None,
            kind: "note".into(),
            body: "{}".into(),
            prev_hash: "0".repeat(64),
            hash: "a".repeat(64),
            receipt: None,
        }
    }

    /// The receipts are signed by AWS-LC: each signature is the one ed25519-dalek makes for the
    /// same key and text (Ed25519's signatures are deterministic), and it verifies.
    #[test]
    fn a_receipt_is_the_signature_ed25519_dalek_makes() {
        use ed25519_dalek::Signer;
        for n in 0..64u8 {
            let signing = if n == 0 { SigningKey::from_bytes(&[0; 32]) } else { new_key() };
            let keyring = Keyring::new(signing.clone(), Vec::new());
            let mut post = post();
            post.seq = i64::from(n) * 1_000_003;
            post.hash = hex::encode(Sha256::digest([n]));
            let receipt = keyring.sign(&post);
            let message = receipt_message(&post);
            assert_eq!(receipt.signature, hex::encode(signing.sign(message.as_bytes()).to_bytes()), "key {n}");
            assert!(signature_holds(&signing.verifying_key(), &message, &receipt.signature));
            assert_eq!(receipt.key_id, key_id(&signing.verifying_key()));
        }
    }

    #[test]
    fn the_first_start_makes_a_key_later_starts_read_it_and_rotation_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let (made, origin) = Keyring::load(&config).unwrap();
        assert!(matches!(origin, Origin::Made(_)), "{origin:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(config.data_dir.join(KEY_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (again, origin) = Keyring::load(&config).unwrap();
        assert!(matches!(origin, Origin::File(_)), "{origin:?}");
        assert_eq!(again.current_id(), made.current_id());

        let mut signed = post();
        signed.receipt = Some(made.sign(&signed));
        assert_eq!(made.check(&signed), None);

        let (old, new) = rotate(&config).unwrap();
        assert_eq!(old, made.current_id());
        let (rotated, _) = Keyring::load(&config).unwrap();
        assert_eq!(rotated.current_id(), new);
        let keys = rotated.public_keys();
        assert_eq!(keys.len(), 2);
        assert!(keys[0].current && keys[0].key_id == new);
        assert!(!keys[1].current && keys[1].key_id == old);
        // A receipt signed before the rotation still verifies.
        assert_eq!(rotated.check(&signed), None);
        let mut changed = signed.clone();
        changed.seq = 4;
        assert!(rotated.check(&changed).unwrap().contains("does not match"));
    }

    /// `count` posts signed by `ring`, a second apart.
    fn signed_posts(ring: &Keyring, count: i64) -> Vec<Post> {
        (1..=count)
            .map(|seq| {
                let mut p = post();
                p.seq = seq;
                p.stamp += chrono::TimeDelta::seconds(seq);
                p.hash = format!("{seq:064x}");
                p.receipt = Some(ring.sign(&p));
                p
            })
            .collect()
    }

    #[test]
    fn receipts_checked_together_give_the_answer_of_each_checked_alone() {
        let ring = Keyring::new(SigningKey::from_bytes(&[3; 32]), Vec::new());
        let posts = signed_posts(&ring, 300);
        assert!(ring.check_all(&posts).iter().all(Option::is_none));
        assert!(ring.check_all(&[]).is_empty());

        // One forged receipt among a page: the batch fails, and only that post is named, in the
        // words of the check of one.
        let mut forged = posts.clone();
        forged[136].hash = format!("{:064x}", 9999);
        let mut other_key = forged[211].clone();
        other_key.receipt = Some(Keyring::new(SigningKey::from_bytes(&[4; 32]), Vec::new()).sign(&other_key));
        forged[211] = other_key;
        let found = ring.check_all(&forged);
        let expected: Vec<Option<String>> = forged.iter().map(|p| ring.check(p)).collect();
        assert_eq!(found, expected);
        let named: Vec<usize> = found.iter().enumerate().filter(|(_, f)| f.is_some()).map(|(i, _)| i).collect();
        assert_eq!(named, vec![136, 211]);
        assert!(found[136].as_deref().unwrap().contains("does not match"));
    }

    #[test]
    fn a_batch_refuses_what_the_check_of_one_refuses() {
        let ring = Keyring::new(SigningKey::from_bytes(&[5; 32]), Vec::new());
        let public = ring.current_public();
        let posts = signed_posts(&ring, 4);
        let messages: Vec<String> = posts.iter().map(receipt_message).collect();
        let signatures: Vec<String> = posts.iter().map(|p| p.receipt.clone().unwrap().signature).collect();
        let batch = |signatures: &[String]| {
            signatures_hold(&public, messages.iter().map(String::as_bytes).zip(signatures.iter().map(String::as_str)))
        };
        assert!(batch(&signatures));
        assert!(signatures_hold(&public, std::iter::empty()));

        // s + ℓ (the group order) satisfies the same equation but is not a reduced scalar.
        let mut unreduced = signatures.clone();
        let mut bytes = hex::decode(&unreduced[2]).unwrap();
        // ℓ = 2²⁵² + 27742317777372353535851937790883648493, little-endian.
        let mut order = [0u8; 32];
        order[..16].copy_from_slice(&hex::decode("edd3f55c1a631258d69cf7a2def9de14").unwrap());
        order[31] = 0x10;
        let mut carry = 0u16;
        for (byte, add) in bytes[32..].iter_mut().zip(order) {
            let sum = *byte as u16 + add as u16 + carry;
            (*byte, carry) = (sum as u8, sum >> 8);
        }
        unreduced[2] = hex::encode(&bytes);
        assert!(!signature_holds(&public, &messages[2], &unreduced[2]));
        assert!(!batch(&unreduced));

        // Not hex, the wrong length, a signature of another message.
        for bad in ["zz".repeat(64), "ab".repeat(63), signatures[0].clone()] {
            let mut with_bad = signatures.clone();
            with_bad[1] = bad.clone();
            assert!(!signature_holds(&public, &messages[1], &bad));
            assert!(!batch(&with_bad), "{bad}");
        }

        // Two receipts swapped: each a good signature, of the other post.
        let mut swapped = signatures.clone();
        swapped.swap(0, 3);
        assert!(!batch(&swapped));

        // s + d in one signature and s − d in another leave Σ s the same, so a sum of the
        // equations with equal weights would hold; each weight is drawn afresh, so it does not.
        let scalar = |hex_signature: &str| {
            let bytes: [u8; 32] = hex::decode(hex_signature).unwrap()[32..].try_into().unwrap();
            curve25519_dalek::scalar::Scalar::from_canonical_bytes(bytes).unwrap()
        };
        let with_s = |hex_signature: &str, s: curve25519_dalek::scalar::Scalar| {
            format!("{}{}", &hex_signature[..64], hex::encode(s.as_bytes()))
        };
        let d = curve25519_dalek::scalar::Scalar::from(12_345u64);
        let mut cancelling = signatures.clone();
        cancelling[0] = with_s(&signatures[0], scalar(&signatures[0]) + d);
        cancelling[1] = with_s(&signatures[1], scalar(&signatures[1]) - d);
        assert!(!signature_holds(&public, &messages[0], &cancelling[0]));
        for _ in 0..20 {
            assert!(!batch(&cancelling));
        }

        // An R that is not a point's encoding: refused, not a panic.
        let not_a_point = (0u8..=255)
            .map(|y| [y; 32])
            .find(|bytes| curve25519_dalek::edwards::CompressedEdwardsY(*bytes).decompress().is_none())
            .unwrap();
        let mut off_curve = signatures.clone();
        off_curve[2] = format!("{}{}", hex::encode(not_a_point), &signatures[2][64..]);
        assert!(!signature_holds(&public, &messages[2], &off_curve[2]));
        assert!(!batch(&off_curve));
    }

    #[test]
    fn a_key_from_the_environment_writes_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        config.signing_key = Some(crate::auth::Secret::new("11".repeat(32)));
        let (ring, origin) = Keyring::load(&config).unwrap();
        assert!(matches!(origin, Origin::Environment));
        assert!(!config.data_dir.exists());
        assert_eq!(ring.current_id(), key_id(&SigningKey::from_bytes(&[0x11; 32]).verifying_key()));
        config.signing_key = Some(crate::auth::Secret::new("short"));
        assert!(Keyring::load(&config).unwrap_err().contains("64 hex digits"));
    }
}

//! The tuning cache file: versioned TOML, read leniently (a file that is
//! not one is ignored with a warning), written atomically under a lock,
//! merged with what other processes wrote meanwhile.
//!
//! TOML rather than JSON: serde_json implements `PartialEq<Value>` for
//! every primitive, and through this crate those impls would reach every
//! user's crate and break the inference of `assert_eq!(v.read()?, [])`.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// What the `format` field of every cache file says.
pub(crate) const FORMAT: &str = "onekernel-tune";
/// The version of the cache file's layout this runtime reads and writes; a
/// file of another version is ignored (and overwritten by the next result).
pub const FORMAT_VERSION: u32 = 1;
/// The cache file's name inside the cache directory.
pub const FILE_NAME: &str = "tune.toml";

/// What a result is for: the kernel (name and WGSL hash), the device
/// (adapter and driver), the problem key and the candidates compared.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct EntryId {
    pub kernel: String,
    pub wgsl_hash: String,
    pub adapter: String,
    pub driver: String,
    pub key: String,
    pub candidates: Vec<String>,
}

/// One tuning result: its [`EntryId`]'s fields, then the result.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub kernel: String,
    pub wgsl_hash: String,
    pub adapter: String,
    pub driver: String,
    pub key: String,
    pub candidates: Vec<String>,
    /// The winning candidate's name.
    pub winner: String,
    /// The clock the times were measured with (`Clock`'s display).
    pub clock: String,
    /// The median time of each candidate that ran, in nanoseconds.
    pub median_ns: BTreeMap<String, u64>,
    /// Why each dropped candidate was dropped.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dropped: BTreeMap<String, String>,
}

impl Entry {
    pub(crate) fn new(id: EntryId, winner: String, clock: String, median_ns: BTreeMap<String, u64>) -> Entry {
        let EntryId { kernel, wgsl_hash, adapter, driver, key, candidates } = id;
        Entry {
            kernel,
            wgsl_hash,
            adapter,
            driver,
            key,
            candidates,
            winner,
            clock,
            median_ns,
            dropped: BTreeMap::new(),
        }
    }

    pub(crate) fn id(&self) -> EntryId {
        EntryId {
            kernel: self.kernel.clone(),
            wgsl_hash: self.wgsl_hash.clone(),
            adapter: self.adapter.clone(),
            driver: self.driver.clone(),
            key: self.key.clone(),
            candidates: self.candidates.clone(),
        }
    }
}

/// The whole file.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: String,
    version: u32,
    #[serde(default)]
    entries: Vec<Entry>,
}

pub(crate) type Entries = HashMap<EntryId, Entry>;

/// Parses a cache file's bytes; `Err` says why it is not one.
pub(crate) fn parse(bytes: &[u8]) -> Result<Entries, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("it is not UTF-8 text ({e})"))?;
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("it is not valid TOML ({})", one_line(&e)))?;
    if table.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(format!("it is not a onekernel tuning cache (no `format = \"{FORMAT}\"`)"));
    }
    match table.get("version").and_then(|v| v.as_integer()) {
        Some(v) if v == i64::from(FORMAT_VERSION) => {}
        Some(v) => return Err(format!("it has format version {v}; this onekernel reads version {FORMAT_VERSION}")),
        None => return Err("it has no format version".to_owned()),
    }
    let file: CacheFile = toml::from_str(text).map_err(|e| format!("it is malformed ({})", one_line(&e)))?;
    Ok(file.entries.into_iter().map(|e| (e.id(), e)).collect())
}

/// A TOML error's message on one line.
fn one_line(e: &toml::de::Error) -> String {
    e.message().trim().replace('\n', " ")
}

/// The entries as the file's bytes (sorted, so the file is deterministic).
pub(crate) fn serialize(entries: &Entries) -> Vec<u8> {
    let mut list: Vec<(EntryId, &Entry)> = entries.values().map(|e| (e.id(), e)).collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    let entries = list.into_iter().map(|(_, e)| e.clone()).collect();
    let file = CacheFile { format: FORMAT.to_owned(), version: FORMAT_VERSION, entries };
    toml::to_string_pretty(&file).expect("the cache's types always serialize").into_bytes()
}

/// Reads the cache at `path`: no file is an empty cache; a file that is not
/// a cache is an empty cache and a warning.
pub(crate) fn load(path: &Path) -> (Entries, Option<String>) {
    match fs::read(path) {
        Ok(bytes) => match parse(&bytes) {
            Ok(entries) => (entries, None),
            Err(why) => (
                Entries::new(),
                Some(format!("ignoring the tuning cache {}: {why}; the next result overwrites it", path.display())),
            ),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => (Entries::new(), None),
        Err(e) => (Entries::new(), Some(format!("cannot read the tuning cache {}: {e}", path.display()))),
    }
}

/// Adds `new` to the cache at `path` and returns everything the file then
/// holds (with what other processes added since it was last read).
///
/// Writers take an exclusive lock on `path` + `.lock` (held until the new
/// file is in place), re-read the file, merge and write a temporary file in
/// the same directory that is then renamed over `path`: readers, which do
/// not lock, see the old file or the new one, never a part; two writers
/// run one after the other, the second merging the first's entries.
pub(crate) fn store(path: &Path, new: &[Entry]) -> Result<(Entries, Option<String>), String> {
    let describe = |what: &str, e: io::Error| format!("cannot {what} the tuning cache {}: {e}", path.display());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| describe("create the directory of", e))?;
    let lock_path = with_suffix(path, ".lock");
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| describe("open the lock of", e))?;
    lock.lock().map_err(|e| describe("lock", e))?;
    let (mut entries, warning) = load(path);
    for e in new {
        entries.insert(e.id(), e.clone());
    }
    let result = write_atomically(path, dir, &serialize(&entries)).map_err(|e| describe("write", e));
    // Unlocked when `lock` is dropped, after the rename.
    drop(lock);
    result.map(|()| (entries, warning))
}

/// Writes `bytes` to a fresh file in `dir` and renames it to `path`.
fn write_atomically(path: &Path, dir: &Path, bytes: &[u8]) -> io::Result<()> {
    let stamp = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{stamp}.tmp", std::process::id()));
    let written = (|| {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A stable 64-bit hash (FNV-1a) of `parts`, as 16 hex digits: the same in
/// every process and every Rust version (std's hashers promise neither).
pub(crate) fn stable_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        // The length first, so that ("ab", "c") and ("a", "bc") differ.
        for b in (part.len() as u64).to_le_bytes().iter().chain(part) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str) -> Entry {
        let id = EntryId {
            kernel: "k".into(),
            wgsl_hash: stable_hash([b"fn main() {}".as_slice()]),
            adapter: "a \"quoted\" — name".into(),
            driver: "d".into(),
            key: key.into(),
            candidates: vec!["x".into(), "y".into(), "z".into()],
        };
        let mut e =
            Entry::new(id, "y".into(), "wall clock".into(), [("x".to_owned(), 20), ("y".to_owned(), 10)].into());
        e.dropped.insert("z".into(), "cannot launch:\nline two".into());
        e
    }

    #[test]
    fn round_trip() {
        let entries: Entries = [entry("n<=8"), entry("n<=16")].into_iter().map(|e| (e.id(), e)).collect();
        let bytes = serialize(&entries);
        assert_eq!(parse(&bytes).unwrap(), entries);
        // Deterministic: the same entries give the same bytes.
        assert_eq!(serialize(&parse(&bytes).unwrap()), bytes);
        assert_eq!(parse(&serialize(&Entries::new())).unwrap(), Entries::new());
    }

    #[test]
    fn not_a_cache() {
        for (bytes, why) in [
            (&b"\x00\xffgarbage"[..], "not UTF-8"),
            (b"format = \"onekernel-tune\"\nversion = 1\n[[entries]]\nkernel = \"k", "not valid TOML"),
            (b"{\"format\": \"onekernel-tune\"}", "not valid TOML"),
            (b"name = \"some other program\"\nversion = 1\n", "not a onekernel tuning cache"),
            (b"format = \"onekernel-tune\"\nversion = 99\n", "format version 99"),
            (b"format = \"onekernel-tune\"\n", "no format version"),
            (b"format = \"onekernel-tune\"\nversion = 1\n[[entries]]\nkernel = 3\n", "malformed"),
        ] {
            let err = parse(bytes).unwrap_err();
            assert!(err.contains(why), "{err:?} should say {why:?}");
            assert!(!err.contains('\n'), "{err:?} should be one line");
        }
    }

    #[test]
    fn hash_is_stable() {
        // Pinned: a change would orphan every cache file.
        assert_eq!(stable_hash([b"".as_slice()]), "a8c7f832281a39c5");
        assert_ne!(stable_hash([b"ab".as_slice(), b"c"]), stable_hash([b"a".as_slice(), b"bc"]));
    }
}

//! Reading GPT-2's weights from a `safetensors` file (Hugging Face's
//! `model.safetensors` for `gpt2`): an 8-byte little-endian header length,
//! a JSON header `{name: {"dtype", "shape", "data_offsets": [start, end]},
//! "__metadata__": {..}}`, then the data. The header is parsed here (a JSON
//! subset: objects, arrays, strings without escapes beyond `\"` and `\\`,
//! integers), so the example needs no JSON crate.

use onekernel::half::f16;
use std::collections::HashMap;

/// One tensor's entry in the header.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub dtype: String,
    pub shape: Vec<usize>,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug)]
enum Json {
    Str(String),
    Num(f64),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("header: expected '{}' at byte {}", c as char, self.at))
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        match self.s.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.s.get(self.at) == Some(&b'}') {
                    self.at += 1;
                    return Ok(Json::Obj(fields));
                }
                loop {
                    self.ws();
                    let Json::Str(key) = self.value()? else { return Err("header: a key is not a string".into()) };
                    self.eat(b':')?;
                    fields.push((key, self.value()?));
                    self.ws();
                    match self.s.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Obj(fields));
                        }
                        _ => return Err(format!("header: expected ',' or '}}' at byte {}", self.at)),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.at) == Some(&b']') {
                    self.at += 1;
                    return Ok(Json::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    match self.s.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::Arr(items));
                        }
                        _ => return Err(format!("header: expected ',' or ']' at byte {}", self.at)),
                    }
                }
            }
            Some(b'"') => {
                self.at += 1;
                let mut out = Vec::new();
                while let Some(&c) = self.s.get(self.at) {
                    self.at += 1;
                    match c {
                        b'"' => return String::from_utf8(out).map(Json::Str).map_err(|e| e.to_string()),
                        b'\\' => {
                            out.push(*self.s.get(self.at).ok_or("header: unterminated string")?);
                            self.at += 1;
                        }
                        c => out.push(c),
                    }
                }
                Err("header: unterminated string".into())
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                let start = self.at;
                while self.at < self.s.len()
                    && matches!(self.s[self.at], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).map_err(|e| e.to_string())?;
                text.parse().map(Json::Num).map_err(|_| format!("header: bad number {text:?}"))
            }
            _ => Err(format!("header: unexpected byte at {}", self.at)),
        }
    }
}

/// The header's tensor entries (the `__metadata__` entry left out).
pub fn header(file: &[u8]) -> Result<(HashMap<String, Entry>, usize), String> {
    let len = u64::from_le_bytes(file.get(..8).ok_or("shorter than 8 bytes")?.try_into().expect("8 bytes")) as usize;
    let text = file.get(8..8 + len).ok_or("the header runs past the end of the file")?;
    let Json::Obj(fields) = (Parser { s: text, at: 0 }).value()? else {
        return Err("the header is not an object".into());
    };
    let mut out = HashMap::new();
    for (name, v) in fields {
        if name == "__metadata__" {
            continue;
        }
        let Json::Obj(f) = v else { return Err(format!("{name}: not an object")) };
        let get = |k: &str| f.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        let ints = |v: Option<&Json>| -> Result<Vec<usize>, String> {
            match v {
                Some(Json::Arr(items)) => items
                    .iter()
                    .map(|i| match i {
                        Json::Num(n) if *n >= 0.0 && n.fract() == 0.0 => Ok(*n as usize),
                        _ => Err(format!("{name}: not a non-negative integer")),
                    })
                    .collect(),
                _ => Err(format!("{name}: missing an array")),
            }
        };
        let Some(Json::Str(dtype)) = get("dtype") else { return Err(format!("{name}: no dtype")) };
        let offsets = ints(get("data_offsets"))?;
        let [start, end] = offsets[..] else { return Err(format!("{name}: data_offsets is not [start, end]")) };
        out.insert(name.clone(), Entry { dtype: dtype.clone(), shape: ints(get("shape"))?, start, end });
    }
    Ok((out, 8 + len))
}

/// The tensor `name` (or `transformer.name`) of the file as `f16` (from
/// `F32`, `F16` or `BF16`), checked against `shape`.
pub fn tensor(
    file: &[u8],
    entries: &HashMap<String, Entry>,
    data: usize,
    name: &str,
    shape: &[usize],
) -> Result<Vec<f16>, String> {
    let e = entries
        .get(name)
        .or_else(|| entries.get(&format!("transformer.{name}")))
        .ok_or_else(|| format!("no tensor {name}"))?;
    if e.shape != shape {
        return Err(format!("{name}: shape {:?}, the model wants {shape:?}", e.shape));
    }
    let bytes = file.get(data + e.start..data + e.end).ok_or_else(|| format!("{name}: data past the end"))?;
    let n: usize = shape.iter().product();
    let size = match e.dtype.as_str() {
        "F32" => 4,
        "F16" | "BF16" => 2,
        other => return Err(format!("{name}: dtype {other} (F32, F16 or BF16 wanted)")),
    };
    if bytes.len() != n * size {
        return Err(format!("{name}: {} bytes for {n} values of {}", bytes.len(), e.dtype));
    }
    Ok(bytes
        .chunks_exact(size)
        .map(|b| match e.dtype.as_str() {
            "F32" => f16::from_f32(f32::from_le_bytes(b.try_into().expect("4 bytes"))),
            "F16" => f16::from_bits(u16::from_le_bytes(b.try_into().expect("2 bytes"))),
            _ => f16::from_f32(f32::from_bits(u32::from(u16::from_le_bytes(b.try_into().expect("2 bytes"))) << 16)),
        })
        .collect())
}

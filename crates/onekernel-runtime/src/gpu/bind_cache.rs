//! Bind groups kept from one launch to the next.
//!
//! A launch binds the kernel's buffers and a uniform block (the grid and
//! the scalar arguments). Making a uniform buffer, writing it and making a
//! bind group on every launch made a tiny kernel's launch 1.3× the same
//! through raw wgpu on the H200 (`benches/launch.rs`), where a hand-written
//! program makes them once. So a launch that binds the same buffers as an
//! earlier launch of the same kernel reuses that launch's bind group and
//! uniform buffer, and writes the block only when it differs.
//!
//! An entry is taken out of the cache for the duration of a launch and put
//! back after its submit: two threads launching the same kernel on the same
//! buffers never write one uniform buffer between the other's write and
//! submit (the second finds no entry and makes its own). `queue.write_buffer`
//! is ordered after every earlier submit, so rewriting the block of a
//! launch still running on the GPU does not change what it reads.
//!
//! Keys hold the bound `wgpu::Buffer`s (wgpu compares them by identity), so
//! a dropped `Buffer` cannot alias a new one; dropping a `Buffer` removes
//! the entries that bind it, so an entry never keeps GPU memory alive. Checked
//! launches (a fresh report buffer each) and launches with empty buffers
//! (fresh stand-ins) are not cached.

use std::collections::HashMap;
use std::sync::Mutex;

/// What a cached bind group was made for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct BindKey {
    /// The kernel (its `KernelInfo`'s address, as the pipeline cache).
    pub kernel: usize,
    /// The module of the pipeline it binds (`PipelineKey::module`).
    pub module: onekernel_abi::ModuleKey,
    /// The dispatch part of the launch (0, or 1 for a folded grid's tail).
    pub part: usize,
    /// `(binding, buffer, bytes bound)` of every bound buffer.
    pub buffers: Vec<(u32, wgpu::Buffer, u64)>,
}

/// A bind group with its uniform buffer and the block last written to it.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub uniforms: wgpu::Buffer,
    pub bind_group: wgpu::BindGroup,
    pub block: Vec<u8>,
}

/// Entries of the launches made so far, at most [`BindCache::CAPACITY`].
#[derive(Default)]
pub(crate) struct BindCache {
    entries: Mutex<HashMap<BindKey, Bound>>,
}

impl BindCache {
    /// Entries kept; past it the cache starts again empty (a program that
    /// binds ever new buffers gains nothing from it).
    const CAPACITY: usize = 64;

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BindKey, Bound>> {
        // Inserts and removals are single calls: a poisoned map is intact.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the entry of `key` out, for one launch.
    pub fn take(&self, key: &BindKey) -> Option<Bound> {
        self.lock().remove(key)
    }

    /// Puts an entry (back) after its launch was submitted.
    pub fn put(&self, key: BindKey, bound: Bound) {
        let mut entries = self.lock();
        if entries.len() >= Self::CAPACITY {
            entries.clear();
        }
        entries.insert(key, bound);
    }

    /// Removes the entries that bind `buffer` (being dropped).
    pub fn forget(&self, buffer: &wgpu::Buffer) {
        self.lock().retain(|key, _| key.buffers.iter().all(|(_, b, _)| b != buffer));
    }

    /// Entries held (for tests).
    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

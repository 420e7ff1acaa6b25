//! **Top-k with `ops::sort`**: the `k` largest scores of a batch of
//! candidates and where they came from, the way a recommender or a
//! language model's sampler uses a sort.
//!
//!     cargo run -p onekernel-ops --release --example top_k            # check on every device
//!     cargo run -p onekernel-ops --release --example top_k -- 1000000  # more candidates
//!
//! The scores come from `ops::random::normal_into` (Philox: the same
//! numbers on every device), a softmax turns them into probabilities
//! (`ops::norm::softmax_into`), and one stable descending key-value sort
//! (`ops::sort::sort_pairs_into`) with the candidates' indices as values
//! puts the best first; ties keep the lower index first. The buffers and
//! the sort's scratch are made once and reused for every round: the loop
//! allocates nothing.

use onekernel::ops::norm::softmax_into;
use onekernel::ops::random::{normal_into, random_u32_into};
use onekernel::ops::sort::{sort_pairs_into, Order, SortScratch};
use onekernel::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let k = 5;
    let mut devices = vec![Device::cpu()];
    match Device::gpu() {
        Ok(g) => devices.push(g),
        Err(e) => eprintln!("no GPU ({e}); the CPU executor only"),
    }
    let mut answers = Vec::new();
    for device in &devices {
        // Made once: scores, probabilities, indices, outputs, scratch.
        let mut scores = Buffer::<f32>::zeroed(device, n)?;
        let mut probs = Buffer::<f32>::zeroed(device, n)?;
        let index = Buffer::from_slice(device, &(0..n as u32).collect::<Vec<_>>())?;
        let (mut best, mut from) = (Buffer::<f32>::zeroed(device, n)?, Buffer::<u32>::zeroed(device, n)?);
        let mut scratch = SortScratch::<u32>::new(device, n)?;
        let mut rounds = Vec::new();
        for round in 0..3u64 {
            // Round `r` draws numbers `r * n ..` of the stream of seed 2024.
            normal_into(device, &mut scores, 2024, round * n as u64, 0.0, 3.0)?;
            softmax_into(device, &scores, &mut probs, n)?;
            sort_pairs_into(device, &probs, &index, &mut best, &mut from, Order::Descending, &mut scratch)?;
            let top: Vec<(u32, f32)> = from.read_range(..k)?.into_iter().zip(best.read_range(..k)?).collect();
            // Check against plain Rust: the k largest probabilities.
            let p = probs.read()?;
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by(|&a, &b| p[b as usize].total_cmp(&p[a as usize]));
            assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), want[..k], "round {round} on {}", device.name());
            println!("{}: round {round}, top {k} of {n}: {top:?}", device.name());
            rounds.push(top.iter().map(|t| t.0).collect::<Vec<_>>());
        }
        answers.push(rounds);
        // A sample of 8 candidates by `u32` draws, as a sampler would.
        let mut draws = Buffer::<u32>::zeroed(device, 8)?;
        random_u32_into(device, &mut draws, 7, 0)?;
        let picks: Vec<u32> = draws.read()?.iter().map(|d| d % n as u32).collect();
        println!("{}: 8 random candidates {picks:?}", device.name());
    }
    // Philox gives every device the same scores; the winners agree.
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "devices disagree: {answers:?}");
    Ok(())
}

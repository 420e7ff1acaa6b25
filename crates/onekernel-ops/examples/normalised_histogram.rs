//! An application of `onekernel::ops`: the normalised histogram of a
//! grayscale image and its cumulative distribution (what histogram
//! equalisation uses), all on the device.
//!
//!     cargo run -p onekernel-ops --example normalised_histogram
//!
//! 1. `histogram`: the 256 intensity counts of the image.
//! 2. `reduce_rows`: the counts as 16 rows of 16, summed per row: a coarse
//!    16-bin histogram to print.
//! 3. `reduce::sum`: the number of pixels counted (the normaliser).
//! 4. `scan::inclusive_sum`: the cumulative counts; the equalised value of
//!    intensity `v` is `255 * cdf[v] / pixels`.
//!
//! Every result is checked against plain Rust.

use onekernel::ops::reduce::{self, ReduceOp};
use onekernel::ops::{histogram, scan};
use onekernel::prelude::*;

/// A synthetic 640 × 480 image: a dark gradient with a bright disc, so the
/// histogram has two humps.
fn image(width: usize, height: usize) -> Vec<u32> {
    (0..width * height)
        .map(|i| {
            let (x, y) = ((i % width) as f32, (i / width) as f32);
            let (dx, dy) = (x - 420.0, y - 200.0);
            let base = 20.0 + 60.0 * x / width as f32 + 20.0 * y / height as f32;
            let v = if dx * dx + dy * dy < 90.0 * 90.0 { 200.0 + (x + y) % 40.0 } else { base };
            v as u32
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new();
    let (width, height) = (640, 480);
    let pixels = image(width, height);
    let img = Buffer::from_slice(&device, &pixels)?;

    // 1. The 256 counts.
    let counts = histogram::histogram(&device, &img, 256)?;
    // 2. 16 coarse bins: each row of 16 counts summed.
    let coarse = reduce::reduce_rows(&device, &counts, 16, ReduceOp::Sum)?;
    // 3. The number of pixels counted.
    let total = reduce::sum(&device, &counts)?;
    // 4. The cumulative distribution.
    let cdf = scan::inclusive_sum(&device, &counts)?;

    let (counts, coarse, cdf) = (counts.read()?, coarse.read()?, cdf.read()?);

    // The same in plain Rust.
    let mut want = vec![0u32; 256];
    for &p in &pixels {
        want[p as usize] += 1;
    }
    assert_eq!(counts, want);
    assert_eq!(total as usize, pixels.len());
    assert_eq!(coarse, want.chunks(16).map(|c| c.iter().sum()).collect::<Vec<u32>>());
    let mut running = 0;
    assert_eq!(
        cdf,
        want.iter()
            .map(|c| {
                running += c;
                running
            })
            .collect::<Vec<u32>>()
    );

    println!("{}: {width} x {height} pixels, {total} counted\n", device.name());
    println!("intensity  share   normalised histogram (16 bins)");
    let peak = coarse.iter().copied().max().unwrap_or(1).max(1);
    for (bin, &c) in coarse.iter().enumerate() {
        let share = c as f64 / total as f64;
        let bar = "#".repeat((50 * c as usize).div_ceil(peak as usize));
        println!("{:>3}..{:<3}  {:>5.1}%  {bar}", bin * 16, bin * 16 + 15, share * 100.0);
    }
    let equalise = |v: usize| 255 * cdf[v] as u64 / total as u64;
    println!("\nequalised: 40 -> {}, 80 -> {}, 210 -> {}", equalise(40), equalise(80), equalise(210));
    Ok(())
}

use onekernel::prelude::*;

// Problems in a helper are reported at the helper, even if no kernel calls it.
#[helper]
fn first(a: &[f32]) -> f32 {
    a[0]
}

fn main() {}

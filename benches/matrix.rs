//! Loading and validating the embedded compatibility matrix (design target: under 5 ms).
//! `cargo bench --bench matrix` prints the median, min and max of 200 loads.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

fn main() {
    let runs = 200;
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let m = gpudoctor::matrix::Matrix::embedded().unwrap();
            std::hint::black_box(&m);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    let rows: usize = gpudoctor::matrix::Matrix::embedded()
        .unwrap()
        .counts()
        .iter()
        .map(|(_, n)| n)
        .sum();
    println!(
        "matrix load+validate ({rows} rows incl. variants), {runs} runs: median {:.3} ms, min {:.3} ms, max {:.3} ms",
        ms[runs / 2],
        ms[0],
        ms[runs - 1]
    );
}

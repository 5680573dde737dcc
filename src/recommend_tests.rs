use super::*;

fn m() -> Matrix {
    Matrix::embedded().unwrap()
}

#[test]
fn candidates_are_newest_first_and_name_their_assumptions() {
    let m = m();
    let t = candidates(&m, "torch", false);
    let n: usize = m.pytorch.iter().map(|r| r.variants.len()).sum();
    assert_eq!(t.len(), n, "one candidate per wheel variant");
    let newest = m.pytorch.last().unwrap();
    assert!(t[0].label.starts_with(&format!("torch {} +", newest.torch)));
    assert_eq!(t[0].assume[0].0, "torch");
    assert!(t[0].assume[0]
        .1
        .starts_with(&format!("{}.0+cu", newest.torch)));
    let tf = candidates(&m, "tensorflow", false);
    assert_eq!(tf.len(), m.tensorflow.len());
    assert!(tf[0].command.contains("tensorflow[and-cuda]"));
    // Native Windows: no tensorflow[and-cuda] (it is Linux-only) and no JAX GPU wheels.
    assert!(candidates(&m, "tensorflow", true)
        .iter()
        .all(|c| !c.command.contains("and-cuda")));
    assert!(candidates(&m, "jax", true).is_empty());
    let jax = candidates(&m, "jax", false);
    assert_eq!(jax.len(), m.jax.len());
    assert!(
        jax[0].command.ends_with("-U 'jax[cuda13]'"),
        "{}",
        jax[0].command
    );
    assert!(
        jax.last().unwrap().command.contains(">="),
        "older ranges are pinned"
    );
}

#[test]
fn known_drivers_are_sorted_and_per_os() {
    let m = m();
    let linux = known_drivers(&m, Os::Linux);
    assert!(linux.windows(2).all(|w| w[0] < w[1]));
    assert!(
        linux.iter().any(|d| d.to_string() == "450.80.02"),
        "the CUDA 11 MVC minimum"
    );
    assert!(linux.iter().any(|d| d.to_string() == "570.26"));
    let windows = known_drivers(&m, Os::Windows);
    assert!(windows.iter().any(|d| d.to_string() == "551.61"));
    assert!(!windows.iter().any(|d| d.to_string() == "570.26"));
}

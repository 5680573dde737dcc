use super::*;

#[test]
fn verbatim_prefixes_are_not_printed() {
    assert_eq!(
        plain_path(r"\\?\C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4"),
        PathBuf::from(r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4")
    );
    assert_eq!(
        plain_path(r"\\?\UNC\server\share\envs\py311"),
        PathBuf::from(r"\\server\share\envs\py311")
    );
    // A verbatim path that has no plain spelling stays as it is.
    assert_eq!(
        plain_path(r"\\?\Volume{0b1c}\x"),
        PathBuf::from(r"\\?\Volume{0b1c}\x")
    );
    assert_eq!(plain_path("/usr/lib"), PathBuf::from("/usr/lib"));
}
